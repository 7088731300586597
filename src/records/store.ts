import { closeSync, fstatSync, openSync, readFileSync, readSync, readdirSync, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { processRunning } from "../os/procfs.js";
import { loopxDir } from "../os/xdg.js";
import type { RecordEvent, RunResumeEvent, RunStartEvent } from "../core/events.js";
import { parseRecord } from "./parse.js";
import { lastSitting, startEvent } from "./run-state.js";
import { closingPath, liveIdOf, recordIdOf, recordPath, runFiles } from "./paths.js";

/**
 * Where run records live and what the machine says about their processes (loopx's own extension):
 * `$XDG_STATE_HOME/loopx/runs/<run id>.jsonl`, by default `~/.local/state/loopx/runs/`.
 */

/** Records kept: older ones are removed when a run starts. */
const KEEP_RECORDS = 200;


export function recordsDir(env: Record<string, string | undefined>): string {
  return join(loopxDir("state", env), "runs");
}

/** The ids of the records in `dir`, newest first (ids sort by start time). Missing dir: none. */
export function listRecordIds(dir: string): string[] {
  return idsIn(dir, recordIdOf);
}

/**
 * The runs with a lifeline in `dir` (records/lifeline.ts), newest first: every run whose loopx
 * lives, and those whose loopx and guardian died together, unnoticed so far. One readdir, no record read.
 */
export function listLiveIds(dir: string): string[] {
  return idsIn(dir, liveIdOf);
}

/** The run ids that `idOf` finds among the file names in `dir`, newest first (none when there is no such directory). */
function idsIn(dir: string, idOf: (name: string) => string | undefined): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT" || (error as NodeJS.ErrnoException).code === "ENOTDIR") return [];
    throw error;
  }
  const ids: string[] = [];
  for (const name of names) {
    const id = idOf(name);
    if (id !== undefined) ids.push(id);
  }
  return ids.sort().reverse();
}

export { closingPath };

/**
 * True while the run of record `id` may still be written to: no run.end yet, and its process is
 * alive or its guardian is closing it. Unreadable records are not alive.
 */
function recordAlive(dir: string, id: string): boolean {
  let events;
  try {
    events = parseRecord(readRecordEnds(dir, id)).events;
  } catch {
    return false;
  }
  if (events[events.length - 1]?.type === "run.end") return false;
  const start = startEvent(events);
  if (!start) return false;
  if (runProcessAlive(start)) return true;
  try {
    return runProcessAlive({ pid: Number(readFileSync(closingPath(dir, id), "utf8")), time: start.time });
  } catch {
    return false;
  }
}

/**
 * Removes the oldest records so that, with the one about to be written, `keep` remain — never the
 * record of a run that is still going (however many newer runs there are): `loopx runs tail` must
 * be able to follow it to its end.
 */
export function pruneRecords(dir: string, keep = KEEP_RECORDS): void {
  const ids = listRecordIds(dir);
  for (const id of ids.slice(Math.max(0, keep - 1))) {
    if (recordAlive(dir, id)) continue;
    for (const file of runFiles(dir, id)) {
      try {
        unlinkSync(file);
      } catch {
        // Another run pruned it first (or the run kept no input, or its guardian had no need to close it).
      }
    }
  }
}

export function readRecordText(dir: string, id: string): string {
  return readFileSync(recordPath(dir, id), "utf8");
}

const ENDS_BYTES = 64 * 1024;

/**
 * What `loopx runs` needs of a record without reading all of it (a long run's record can hold
 * megabytes of results): its first line (`run.start`) and its last complete lines (`run.end`, or
 * the last iterations of a run that is going or crashed). Small records are read whole.
 */
export function readRecordEnds(dir: string, id: string): string {
  const fd = openSync(recordPath(dir, id), "r");
  try {
    const size = fstatSync(fd).size;
    if (size <= 2 * ENDS_BYTES) return readFileSync(fd, "utf8");
    const buffer = Buffer.alloc(ENDS_BYTES);
    const head = buffer.toString("utf8", 0, readSync(fd, buffer, 0, ENDS_BYTES, 0));
    const firstNewline = head.indexOf("\n");
    if (firstNewline < 0) return readFileSync(recordPath(dir, id), "utf8");
    const tail = buffer.toString("utf8", 0, readSync(fd, buffer, 0, ENDS_BYTES, size - ENDS_BYTES));
    return `${head.slice(0, firstNewline + 1)}${tail.slice(tail.indexOf("\n") + 1)}`;
  } finally {
    closeSync(fd);
  }
}

/**
 * True while the process that wrote `start` is still running: the pid exists, is not a zombie, and
 * (on Linux) started no later than the run did — a reused pid belongs to a process that started
 * after the run, so a crashed run is not mistaken for a running one.
 */
export function runProcessAlive(start: Pick<RunStartEvent, "pid" | "time">): boolean {
  return processRunning(start.pid, Date.parse(start.time) + 2000);
}

/**
 * The one "is this run live" rule: a record without a run.end whose last sitting (its run.start, or
 * the last run.resume: which process runs it now) is a running process. That sitting, or undefined.
 */
export function liveSitting(events: RecordEvent[]): RunStartEvent | RunResumeEvent | undefined {
  if (events.at(-1)?.type === "run.end") return undefined;
  const sitting = lastSitting(events);
  return sitting && runProcessAlive(sitting) ? sitting : undefined;
}

/**
 * When the record at `path` was last written or touched (ms since 1970): loopx touches it once a
 * second while the run goes (records/lifeline.ts), so a run that crashed without a run.end lived
 * at least until then. Unreadable: undefined.
 */
export function recordTouchedAt(path: string): number | undefined {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

/**
 * A record's first line and as much of its end as `enough` asks for (read backwards in growing
 * pieces; the whole file at most): `runs show --last N` of a 100,000-iteration record reads the
 * last N iterations, not 30 MB.
 */
export function readRecordTail(dir: string, id: string, enough: (tail: string) => boolean): string {
  const path = recordPath(dir, id);
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    const head = Buffer.alloc(Math.min(size, ENDS_BYTES));
    const headText = head.toString("utf8", 0, readSync(fd, head, 0, head.length, 0));
    const firstNewline = headText.indexOf("\n");
    for (let bytes = ENDS_BYTES; ; bytes *= 4) {
      if (firstNewline < 0 || bytes >= size - firstNewline - 1) return readFileSync(path, "utf8");
      const buffer = Buffer.alloc(bytes);
      const text = buffer.toString("utf8", 0, readSync(fd, buffer, 0, bytes, size - bytes));
      const tail = text.slice(text.indexOf("\n") + 1);
      if (enough(tail)) return `${headText.slice(0, firstNewline + 1)}${tail}`;
    }
  } finally {
    closeSync(fd);
  }
}

/** A record's first line (`run.start`), read without the rest: at most 64 KiB. Unreadable: undefined. */
export function readRecordHead(dir: string, id: string): string | undefined {
  return readRecordLine(dir, id, "first");
}

/**
 * A record's last complete line, read from its last 4 KiB (a `run.end` is far shorter): what tells
 * an ended run without reading its iterations. Unreadable, or longer: undefined.
 */
export function readRecordLastLine(dir: string, id: string): string | undefined {
  return readRecordLine(dir, id, "last");
}

const LINE_BYTES = 4096;

function readRecordLine(dir: string, id: string, which: "first" | "last"): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(recordPath(dir, id), "r");
    if (which === "last") {
      const size = fstatSync(fd).size;
      const buffer = Buffer.alloc(Math.min(size, LINE_BYTES));
      const text = buffer.toString("utf8", 0, readSync(fd, buffer, 0, buffer.length, size - buffer.length));
      const lines = text.split("\n");
      return lines.length >= 3 || (lines.length === 2 && size <= LINE_BYTES) ? lines[lines.length - 2] : undefined;
    }
    // Most first lines fit in 4 KiB; a long argv may need up to 64 KiB.
    for (const bytes of [LINE_BYTES, ENDS_BYTES]) {
      const buffer = Buffer.alloc(bytes);
      const text = buffer.toString("utf8", 0, readSync(fd, buffer, 0, bytes, 0));
      const newline = text.indexOf("\n");
      if (newline >= 0) return text.slice(0, newline);
    }
    return undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
