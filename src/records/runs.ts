import { closeSync, openSync, readSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { LoopxError } from "../core/errors.js";
import { EVENT_VERSION, type IterationEndEvent, type RecordEvent, type RunStartEvent } from "./events.js";
import { formatRunDetail, formatRunList, formatTailEvent, parseRecord, startEvent, summarizeRun, type RunSummary } from "./report.js";
import { listRecordIds, readRecordEnds, readRecordText, recordsDir, runProcessAlive } from "./store.js";

/** What `loopx runs`, `runs show` and `runs tail` do, over the records of `env`'s state directory. */

type Env = Record<string, string | undefined>;
type Write = (text: string) => void;

function newer(id: string, version: number): LoopxError {
  return new LoopxError(`run ${id} was recorded by a newer loopx (record format v${version}; this loopx reads v${EVENT_VERSION})`);
}

/** `loopx runs [--json]`: every record, newest first; a record of a newer format is reported as such. */
export function listRuns(env: Env, json: boolean, write: Write): void {
  const dir = recordsDir(env);
  const now = Date.now();
  const summaries: RunSummary[] = [];
  const newerRecords: Array<{ id: string; v: number }> = [];
  const lines: string[] = [];
  for (const id of listRecordIds(dir)) {
    let text: string;
    try {
      text = readRecordEnds(dir, id);
    } catch {
      continue; // pruned while we read
    }
    const record = parseRecord(text);
    if (record.newerVersion !== undefined) {
      newerRecords.push({ id, v: record.newerVersion });
      lines.push(JSON.stringify({ id, state: "unknown", v: record.newerVersion }));
      continue;
    }
    const summary = summarizeRun(id, record.events, runProcessAlive, now);
    if (!summary) continue;
    summaries.push(summary);
    lines.push(JSON.stringify(summary));
  }
  if (json) {
    if (lines.length) write(`${lines.join("\n")}\n`);
    return;
  }
  if (summaries.length === 0 && newerRecords.length === 0) {
    write(`no runs recorded in ${dir}\n`);
    return;
  }
  let text = summaries.length ? formatRunList(summaries) : "";
  for (const { id, v } of newerRecords) {
    text += `${id}  recorded by a newer loopx (record format v${v}; this loopx reads v${EVENT_VERSION})\n`;
  }
  write(text);
}

/** The one record whose id starts with `prefix`. */
export function resolveRunId(dir: string, prefix: string): string {
  const ids = listRecordIds(dir);
  if (ids.includes(prefix)) return prefix;
  const matches = ids.filter((id) => id.startsWith(prefix));
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0 || prefix === "") throw new LoopxError(`no run ${JSON.stringify(prefix)} in ${dir}`);
  throw new LoopxError(`run id ${JSON.stringify(prefix)} is ambiguous: it starts ${matches.length} runs (${matches.slice(0, 3).join(", ")}${matches.length > 3 ? ", ..." : ""})`);
}

function readEvents(dir: string, id: string): RecordEvent[] {
  const record = parseRecord(readRecordText(dir, id));
  if (record.newerVersion !== undefined) throw newer(id, record.newerVersion);
  return record.events;
}

/** `loopx runs show <id>`: one row per iteration; `--json`: the record's events. */
export function showRun(env: Env, prefix: string, json: boolean, write: Write): void {
  const dir = recordsDir(env);
  const id = resolveRunId(dir, prefix);
  const events = readEvents(dir, id);
  const now = Date.now();
  const summary = summarizeRun(id, events, runProcessAlive, now);
  if (!summary) throw new LoopxError(`run ${id} has no run.start in ${join(dir, `${id}.jsonl`)}`);
  if (json) write(events.map((event) => `${JSON.stringify(event)}\n`).join(""));
  else write(formatRunDetail(summary, events, now));
}

/** The newest run whose project is `cwd`. */
function latestRunOf(dir: string, cwd: string): string {
  let project = cwd;
  try {
    project = realpathSync(cwd);
  } catch {
    // keep cwd as given
  }
  for (const id of listRecordIds(dir)) {
    try {
      const start = startEvent(parseRecord(readRecordEnds(dir, id)).events);
      if (start && (start.projectRoot === cwd || start.projectRoot === project)) return id;
    } catch {
      continue;
    }
  }
  throw new LoopxError(`no runs of ${project} in ${dir}`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `loopx runs tail [<id>]`: prints the run's events so far, then follows the record as it grows
 * (polled every 100 ms) until `run.end` is written or the run's process is gone.
 */
export async function tailRun(env: Env, prefix: string | undefined, cwd: string, json: boolean, write: Write): Promise<void> {
  const dir = recordsDir(env);
  const id = prefix === undefined ? latestRunOf(dir, cwd) : resolveRunId(dir, prefix);
  const path = join(dir, `${id}.jsonl`);
  let offset = 0;
  let partial = "";
  let start: RunStartEvent | undefined;
  let last: IterationEndEvent | undefined;
  let ended = false;
  const buffer = Buffer.alloc(64 * 1024);
  const drain = () => {
    let fd: number;
    try {
      fd = openSync(path, "r");
    } catch {
      return;
    }
    try {
      for (;;) {
        const read = readSync(fd, buffer, 0, buffer.length, offset);
        if (read === 0) break;
        offset += read;
        partial += buffer.toString("utf8", 0, read);
      }
    } finally {
      closeSync(fd);
    }
    const newline = partial.lastIndexOf("\n");
    if (newline < 0) return;
    const complete = partial.slice(0, newline + 1);
    partial = partial.slice(newline + 1);
    const record = parseRecord(complete);
    if (record.newerVersion !== undefined) throw newer(id, record.newerVersion);
    let out = "";
    for (const event of record.events) {
      if (event.type === "run.start") start = event;
      out += json ? `${JSON.stringify(event)}\n` : `${formatTailEvent(event, start, last)}\n`;
      if (event.type === "iteration.end") last = event;
      if (event.type === "run.end") ended = true;
    }
    if (out) write(out);
  };
  drain();
  let checked = Date.now();
  while (!ended) {
    await sleep(100);
    let size = offset;
    try {
      size = statSync(path).size;
    } catch {
      throw new LoopxError(`the record of run ${id} was removed: ${path}`);
    }
    if (size !== offset) drain();
    if (ended || !start || Date.now() - checked < 500) continue;
    checked = Date.now();
    if (!runProcessAlive(start)) {
      drain();
      if (!ended) {
        if (!json) write(`crashed: process ${start.pid} is gone without run.end\n`);
        return;
      }
    }
  }
}
