import { jsonLine } from "../core/untrusted-text.js";
import type { RecordEvent } from "../core/events.js";
import { ChunkedLines } from "./chunked-lines.js";
import { newerRecordError, noRunStartError, parseRecord } from "./parse.js";
import { recordPath } from "./paths.js";
import { runTotalsLine } from "./period.js";
import { RunDetail } from "./run-detail.js";
import { writeRunDetail } from "./run-detail-table.js";
import { showRunAs } from "./run-formats.js";
import { summarizeRun } from "./run-state.js";
import { readRecordTail, recordTouchedAt, runProcessAlive } from "./store.js";
import { streamRecord, totalsEvents } from "./stream.js";

/**
 * `loopx runs show <id>` of one record (runs.ts finds the id): the table, `--json`, `--last N` of
 * either (only as much of the record's end as holds them), `--markdown` and `--outcome`. A whole
 * record is read in chunks (stream.ts) and written in pieces: a 100,000-iteration record is never
 * one string, read or written.
 */

type Write = (text: string) => void;

export interface ShowOptions {
  json: boolean;
  last?: number;
  markdown?: boolean;
  outcome?: boolean;
}

export function showRecord(dir: string, id: string, options: ShowOptions, write: Write): void {
  if (options.markdown || options.outcome) return showRunAs(dir, id, options.outcome ? "outcome" : "markdown", write);
  const last = options.last;
  if (last === undefined) {
    const events: RecordEvent[] = [];
    const all = new RunDetail();
    const record = streamRecord(dir, id, options.json ? (event) => void events.push(event) : (event) => all.add(event));
    if (record.newerVersion !== undefined) throw newerRecordError(id, record.newerVersion);
    if (options.json) return showJson(dir, id, events, record.bytes === 0, undefined, write);
    return showDetail(dir, id, all, record.bytes === 0, Date.now(), undefined, write);
  }
  // --last N: only as much of the record's end as holds N iterations (and one more, for the count
  // of those not shown).
  const text = readRecordTail(dir, id, (tail) => (tail.match(/"type":"iteration\.start"/g)?.length ?? 0) > last);
  const all = new RunDetail();
  const events: RecordEvent[] = [];
  const record = parseRecord(text, options.json ? (event) => void events.push(event) : (event) => all.add(event));
  if (record.newerVersion !== undefined) throw newerRecordError(id, record.newerVersion);
  if (options.json) return showJson(dir, id, events, text === "", last, write);
  showDetail(dir, id, all, text === "", Date.now(), last, write);
}

/**
 * `--json`: the events (of the last `last` iterations, with the run's own), then the run's receipt
 * totals when it had receipts: one `totals` line (README: stable fields), from every receipt of
 * the record — with --last, its other lines are not parsed (stream.ts totalsEvents).
 */
function showJson(dir: string, id: string, events: RecordEvent[], empty: boolean, last: number | undefined, write: Write): void {
  const summary = summarizeRun(id, events, runProcessAlive, Date.now(), () => recordTouchedAt(recordPath(dir, id)));
  if (!summary) throw noRunStartError(id, recordPath(dir, id), empty);
  const from = last === undefined ? 0 : summary.iterations - last;
  let whole = events;
  if (last !== undefined) {
    const read = totalsEvents(dir, id);
    if (read.newerVersion !== undefined) throw newerRecordError(id, read.newerVersion);
    whole = read.events;
  }
  const totals = runTotalsLine(id, whole);
  const out = new ChunkedLines(write);
  // run.start and run.end (no n) stay; a note of no known iteration stays too.
  for (const event of events) if (!("n" in event) || event.n === undefined || event.n > from) out.add(jsonLine(event));
  if (totals) out.add(jsonLine(totals));
  out.flush();
}

function showDetail(dir: string, id: string, all: RunDetail, empty: boolean, now: number, last: number | undefined, write: Write): void {
  const summary = summarizeRun(id, all.forSummary(), runProcessAlive, now, () => recordTouchedAt(recordPath(dir, id)));
  if (!summary) throw noRunStartError(id, recordPath(dir, id), empty);
  let detail = all;
  let hidden = 0;
  if (last !== undefined && summary.iterations > last) {
    hidden = summary.iterations - last;
    detail = all.from(hidden);
  }
  writeRunDetail(summary, detail, now, hidden, write);
}
