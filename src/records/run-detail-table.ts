import { shownText } from "../core/untrusted-text.js";
import type { RecordEvent } from "../core/events.js";
import { describeCost } from "../core/receipts.js";
import { describeHook } from "./hook-report.js";
import { totalsLines } from "./receipts-report.js";
import type { RunSummary } from "./run-state.js";
import { RunDetail } from "./run-detail.js";
import { layOutTable } from "./table-layout.js";
import { ChunkedLines } from "./chunked-lines.js";
import { durationBar } from "./tables.js";
import { describeGap, describeNote, describeResume, describeWarning, formatElapsed, formatLocalTime, formatRunDuration, tokensCell } from "./wording.js";

/**
 * `loopx runs show`'s text (pure): a header, then one row per iteration with a bar proportional to
 * its duration, and the lines around the rows. A 100,000-row table is written a few thousand lines
 * at a time: never held whole, as a string or as cells.
 */

/**
 * `loopx runs show` to `write`, in pieces: a header, then one row per iteration with a bar
 * proportional to its duration (`hidden`: iterations left out before these, `--last`), and a failed
 * script's last stderr lines. `events`: the record's events, or a RunDetail already gathered from them.
 */
export function writeRunDetail(summary: RunSummary, events: RecordEvent[] | RunDetail, now: number, hidden: number, write: (text: string) => void): void {
  let detail: RunDetail;
  if (events instanceof RunDetail) detail = events;
  else {
    detail = new RunDetail();
    for (const event of events) detail.add(event);
  }
  const out = new ChunkedLines(write);
  for (const line of headerLines(summary, detail)) out.add(shownText(line));
  if (hidden > 0) out.add(`… ${hidden} earlier iteration${hidden === 1 ? "" : "s"} not shown (--last)`);
  if (detail.rows.length === 0) for (const note of detail.notes) out.add(describeNote(note));
  else {
    // A run that crashed without a run.end: its open iteration lasted until its last sign of life at least.
    const until = summary.state === "running" ? now : summary.durationAtLeast ? Date.parse(summary.start) + summary.durationMs : Date.parse(detail.lastTime);
    writeRows(summary, detail, until, out);
  }
  for (const line of detail.hooks.flatMap(describeHook)) out.add(line);
  out.flush();
}

function headerLines(summary: RunSummary, detail: RunDetail): string[] {
  return [
    `run ${summary.id} · ${summary.state === "running" ? "running" : summary.ending ?? summary.state} · ` +
      `${summary.iterations} iteration${summary.iterations === 1 ? "" : "s"} · ${formatRunDuration(summary)}`,
    `started ${formatLocalTime(summary.start)} · ${summary.target} · ${summary.project} · pid ${summary.pid} · loopx ${summary.version} (${summary.runtime})`,
    ...(summary.worktree ? [`worktree ${summary.worktree.branch} · ${summary.worktree.path}`] : []),
    ...(summary.sandbox ? [`sandbox ${summary.sandbox.kind}${summary.sandbox.version ? ` ${summary.sandbox.version}` : ""} · policy ${summary.sandbox.policyDigest}`] : []),
    ...(summary.message !== undefined && summary.state !== "stopped" && summary.state !== "limit" ? [summary.message] : []),
    ...(detail.totals.receipts > 0 ? totalsLines(detail.totals) : []),
  ];
}

/** The table of iterations (`until`: when an open one is counted to), with the lines around its rows. */
function writeRows(summary: RunSummary, detail: RunDetail, until: number, out: ChunkedLines): void {
  const rows = detail.rows;
  const msOf = (i: number) => rows.ms(i) ?? Math.max(0, until - rows.startMs(i));
  let max = 0;
  for (let i = 0; i < rows.length; i++) max = Math.max(max, msOf(i));
  // COST and TOKENS only for a run whose scripts sent receipts.
  const costs = detail.totals.receipts > 0;
  const heading = ["N", "TARGET", "DURATION", "", "EXIT", "NEXT", ...(costs ? ["COST", "TOKENS"] : []), "RESULT"];
  const cells = (i: number): string[] => {
    const row = rows.row(i);
    const open = row.exit === undefined;
    const ms = msOf(i);
    return [
      String(row.n),
      row.target,
      `${open && summary.durationAtLeast ? "≥" : ""}${formatElapsed(ms)}`,
      durationBar(ms, max),
      open ? (summary.state === "running" ? "running" : "-") : row.exit!,
      open ? "" : row.next!,
      ...(costs ? [row.totals ? describeCost(row.totals) : "", tokensCell(row.totals)] : []),
      open ? "" : row.result!,
    ];
  };
  const { above, under, orphans } = linesAround(detail);
  layOutTable(rows.length + 1, (i) => (i === 0 ? heading : cells(i - 1)), (line, i) => {
    const n = i === 0 || (above.size === 0 && under.size === 0) ? undefined : rows.n(i - 1); // most tables: no line around any row
    for (const text of (n !== undefined && above.get(n)) || []) out.add(text);
    out.add(line);
    for (const text of (n !== undefined && under.get(n)) || []) out.add(text);
  });
  for (const line of orphans) out.add(line);
}

/**
 * The lines around `runs show`'s rows. Under each row: the notes its script wrote, a failed
 * script's last stderr lines, loopx's warnings, and where the record's size cap dropped
 * iterations, a line saying how many. Above a row: where a resume began, and a gap before the
 * first row shown (a full disk lost the first iterations). Notes of no row shown: orphans.
 */
function linesAround(detail: RunDetail): { above: Map<number, string[]>; under: Map<number, string[]>; orphans: string[] } {
  const under = new Map<number, string[]>();
  const above = new Map<number, string[]>();
  const put = (map: Map<number, string[]>, n: number, line: string) => {
    const lines = map.get(n);
    if (lines) lines.push(line);
    else map.set(n, [line]);
  };
  const orphans: string[] = [];
  // The iterations shown, only when a note or a warning asks (100,000 rows: no set of them otherwise).
  const rows = detail.rows;
  const known = new Set<number>();
  if (detail.notes.length > 0 || detail.warnings.length > 0) for (let i = 0; i < rows.length; i++) known.add(rows.n(i));
  for (const event of detail.notes) {
    if (event.n !== undefined && known.has(event.n)) put(under, event.n, describeNote(event));
    else orphans.push(describeNote(event));
  }
  for (const [n, stderr] of rows.stderrLines()) for (const line of stderr) put(under, n, line);
  for (const warning of detail.warnings) if (known.has(warning.n)) put(under, warning.n, describeWarning(warning));
  for (const resume of detail.resumes) put(above, resume.iterations + 1, describeResume(resume));
  const firstN = rows.n(0);
  for (const gap of detail.gaps) {
    if (gap.after < firstN) put(above, firstN, describeGap(gap));
    else put(under, gap.after, describeGap(gap));
  }
  return { above, under, orphans };
}
