import { jsonLine } from "../core/untrusted-text.js";
import { formatRunMarkdown } from "./markdown.js";
import { addRecordTotals } from "./period.js";
import { newerRecordError, noRunStartError, parseRecord } from "./parse.js";
import { RunDetail } from "./run-detail.js";
import { summarizeRun } from "./run-state.js";
import { readRecordText, recordTouchedAt, runProcessAlive } from "./store.js";
import { recordPath } from "./paths.js";

/**
 * `runs show <id> --markdown` (the run as a Markdown summary: the GitHub Action's job summary) and
 * `--outcome` (how it ended, as one JSON object: the summary `loopx runs --json` prints for it, its
 * last event's time as `end`, the record's path, and its receipt totals when it had receipts).
 */
export function showRunAs(dir: string, id: string, format: "markdown" | "outcome", write: (text: string) => void): void {
  const detail = new RunDetail();
  const text = readRecordText(dir, id);
  const record = parseRecord(text, (event) => detail.add(event));
  if (record.newerVersion !== undefined) throw newerRecordError(id, record.newerVersion);
  const summary = summarizeRun(id, detail.forSummary(), runProcessAlive, Date.now(), () => recordTouchedAt(recordPath(dir, id)));
  if (!summary) throw noRunStartError(id, recordPath(dir, id), text === "");
  addRecordTotals(summary, () => text);
  if (format === "markdown") return write(formatRunMarkdown(summary, detail));
  write(`${jsonLine({ ...summary, end: detail.lastTime, record: recordPath(dir, id) })}\n`);
}
