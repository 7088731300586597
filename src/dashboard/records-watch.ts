import { closeSync, fstatSync, openSync, readFileSync, readSync, statSync, watch, type FSWatcher } from "node:fs";
import { join } from "node:path";
import type { IterationEndEvent, IterationStartEvent, NoteEvent, RecordEvent, RunContinueEvent, RunEndEvent, RunPauseEvent, RunResumeEvent, RunStartEvent, RunStopEvent } from "../core/events.js";
import { parseRecord, recordEvent } from "../records/parse.js";
import { summarizeRun, type RunSummary } from "../records/run-state.js";
import { listRecordIds, readRecordEnds, runProcessAlive } from "../records/store.js";
import { RunIndex } from "./run-index.js";
import { addReceipt, addRunTotals, emptyRunTotals, recordTotals, recordedReceipt, type RunTotals } from "../core/receipts.js";

/**
 * The dashboard's view of the records directory, kept current without ever slowing a loop: it
 * only reads. Each record is read once — its ends (`run.start` and the last lines) for the runs
 * page, the whole of it only when its run's page is opened — and from then on only what was
 * appended, from the byte offset reached so far. Changes are noticed through fs.watch (inotify)
 * within milliseconds, with stat polling as a fallback, and batched at most every BATCH_MS.
 */

/** A run as the dashboard shows it: the `loopx runs` summary plus the iteration running now. */
export interface DashboardRun extends Omit<RunSummary, "state"> {
  /** `unknown` for a record written by a newer loopx, as `loopx runs --json` says. */
  state: RunSummary["state"] | "unknown";
  current?: { n: number; target: string; start: string };
  /** The last resume (`loopx runs resume`): when, and the iteration and target it started again at. */
  resumed?: { time: string; n: number; target: string };
  /** Set for a record written by a newer loopx; nothing else is read from it. */
  newerVersion?: number;
}

export type Change = { kind: "run"; run: DashboardRun } | { kind: "removed"; id: string };

const BATCH_MS = 50;
const POLL_OPEN_MS = 250;
const POLL_DIR_MS = 1000;
const POLL_ENDED_MS = 2000;
const CHUNK = 1024 * 1024;
const ITERATION_START = '{"v":1,"type":"iteration.start",';
/** Whole-record indexes kept (runs whose page was opened), least recently used dropped first. */
const DETAILS_KEPT = 4;

interface Tracked {
  id: string;
  path: string;
  /** Bytes of the record consumed so far. */
  offset: number;
  /** The incomplete last line (bytes before `offset`), if any. */
  rest: Buffer;
  /** False until the first read after starting mid-file has skipped to a line boundary. */
  aligned: boolean;
  start?: RunStartEvent;
  /** The last `run.resume`: which process runs it now. */
  sitting?: RunResumeEvent;
  /** The last pause, continuation or stop request of the current sitting. */
  steering?: RunPauseEvent | RunContinueEvent | RunStopEvent;
  lastStart?: IterationStartEvent;
  lastEnd?: IterationEndEvent;
  end?: RunEndEvent;
  /**
   * Receipt totals kept as the record grows, for a run whose run.end does not hold them (going,
   * or closed by its guardian): started from the whole record once, when such a run is found.
   */
  totals?: RunTotals;
  newerVersion?: number;
  detail?: RunIndex;
  run?: DashboardRun;
  /** What last went out as a change, to send only real changes. */
  sent?: string;
}

export class RecordsWatch {
  private readonly tracked = new Map<string, Tracked>();
  private readonly listeners = new Set<(change: Change) => void>();
  private readonly dirty = new Set<string>();
  private readonly detailOrder: string[] = [];
  private watcher: FSWatcher | undefined;
  private timers: NodeJS.Timeout[] = [];
  private batch: NodeJS.Timeout | undefined;
  private rescan = false;

  constructor(
    readonly dir: string,
    private readonly alive: (sitting: Pick<RunStartEvent, "pid" | "time">) => boolean = runProcessAlive,
  ) {}

  start(): void {
    this.scan();
    this.watchDir();
    const every = (ms: number, fn: () => void) => {
      const timer = setInterval(fn, ms);
      timer.unref();
      this.timers.push(timer);
    };
    every(POLL_OPEN_MS, () => this.poll(false));
    every(POLL_ENDED_MS, () => this.poll(true));
    every(POLL_DIR_MS, () => {
      if (!this.watcher) this.watchDir();
      this.scan();
      this.refreshAll();
    });
  }

  close(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    if (this.batch) clearTimeout(this.batch);
    this.watcher?.close();
    this.watcher = undefined;
  }

  onChange(listener: (change: Change) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Every run, newest first. */
  runs(): DashboardRun[] {
    const runs: DashboardRun[] = [];
    for (const tracked of this.tracked.values()) if (tracked.run) runs.push(this.fresh(tracked.run));
    return runs.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  }

  run(id: string): DashboardRun | undefined {
    // A run newer than the last scan (its page opened as it started, before the records
    // directory could be watched): look again now rather than answer "no run".
    if (!this.tracked.has(id)) this.scan();
    const run = this.tracked.get(id)?.run;
    return run && this.fresh(run);
  }

  /** The run's whole-record index, read on first use and kept current from then on. */
  detail(id: string): RunIndex | undefined {
    const tracked = this.tracked.get(id);
    if (!tracked?.start) return undefined;
    const at = this.detailOrder.indexOf(id);
    if (at >= 0) this.detailOrder.splice(at, 1);
    this.detailOrder.unshift(id);
    for (const dropped of this.detailOrder.splice(DETAILS_KEPT)) {
      const other = this.tracked.get(dropped);
      if (other) other.detail = undefined;
    }
    if (!tracked.detail) {
      this.drain(tracked);
      const index = new RunIndex();
      readLines(tracked.path, 0, tracked.offset - tracked.rest.length, (event, offset, length) => index.add(event, offset, length), undefined, false, true);
      if (tracked.lastStart) index.add(tracked.lastStart, 0, 0); // the one start line the index needs
      tracked.detail = index;
    }
    return tracked.detail;
  }

  /**
   * The `iteration.end` events of iterations `ns` of run `id` and the notes their scripts added,
   * read back from its record by offset.
   */
  iterationLines(id: string, ns: number[]): { ends: Map<number, IterationEndEvent>; notes: Map<number, NoteEvent[]> } {
    const ends = new Map<number, IterationEndEvent>();
    const notes = new Map<number, NoteEvent[]>();
    const tracked = this.tracked.get(id);
    const index = tracked && this.detail(id);
    if (!tracked || !index) return { ends, notes };
    let fd: number;
    try {
      fd = openSync(tracked.path, "r");
    } catch {
      return { ends, notes };
    }
    const read = (line: { offset: number; length: number }): RecordEvent | undefined => {
      const buffer = Buffer.alloc(line.length);
      readSync(fd, buffer, 0, line.length, line.offset);
      return parseRecord(buffer.toString("utf8")).events[0];
    };
    try {
      for (const n of ns) {
        const line = index.endLine(n);
        const event = line && read(line);
        if (event?.type === "iteration.end") ends.set(n, event);
        for (const place of index.notes(n)) {
          const note = read(place);
          if (note?.type === "note") notes.set(n, [...(notes.get(n) ?? []), note]);
        }
      }
    } finally {
      closeSync(fd);
    }
    return { ends, notes };
  }

  private emit(change: Change): void {
    for (const listener of this.listeners) listener(change);
  }

  /** A running run's duration is as of now. */
  private fresh(run: DashboardRun): DashboardRun {
    if (!isGoing(run.state)) return run;
    return { ...run, durationMs: Math.max(0, Date.now() - Date.parse(run.start)) };
  }

  private watchDir(): void {
    try {
      this.watcher = watch(this.dir, { persistent: false }, (_type, name) => {
        const id = typeof name === "string" && name.endsWith(".jsonl") ? name.slice(0, -6) : undefined;
        if (id && this.tracked.has(id)) this.dirty.add(id);
        else this.rescan = true;
        this.schedule();
      });
      this.watcher.on("error", () => {
        this.watcher?.close();
        this.watcher = undefined;
      });
    } catch {
      this.watcher = undefined; // no directory yet: the directory poll retries
    }
  }

  private schedule(): void {
    if (this.batch) return;
    this.batch = setTimeout(() => {
      this.batch = undefined;
      if (this.rescan) {
        this.rescan = false;
        this.scan();
      }
      for (const id of this.dirty) {
        const tracked = this.tracked.get(id);
        if (tracked) this.drain(tracked);
      }
      this.dirty.clear();
      this.refreshAll();
    }, BATCH_MS);
  }

  /** New records are read (their ends only); removed ones are dropped. */
  private scan(): void {
    const ids = listRecordIds(this.dir);
    const present = new Set(ids);
    for (const id of this.tracked.keys()) {
      if (present.has(id)) continue;
      this.tracked.delete(id);
      const at = this.detailOrder.indexOf(id);
      if (at >= 0) this.detailOrder.splice(at, 1);
      this.emit({ kind: "removed", id });
    }
    for (const id of ids) {
      if (this.tracked.has(id)) continue;
      const path = join(this.dir, `${id}.jsonl`);
      let size: number;
      let text: string;
      try {
        size = statSync(path).size;
        text = readRecordEnds(this.dir, id);
      } catch {
        continue; // pruned while we read
      }
      const tracked: Tracked = { id, path, offset: size, rest: Buffer.alloc(0), aligned: size === 0 };
      const record = parseRecord(text);
      if (record.newerVersion !== undefined) tracked.newerVersion = record.newerVersion;
      for (const event of record.events) remember(tracked, event);
      // Read whole only for a run whose run.end (loopx's own) will not say: going, or closed by its guardian.
      const end = tracked.end;
      if (!end || (!end.receipts && (end.reason === "killed" || end.reason === "crashed"))) tracked.totals = wholeRecordTotals(path, size, text);
      this.tracked.set(id, tracked);
    }
    this.refreshAll();
  }

  private poll(ended: boolean): void {
    for (const tracked of this.tracked.values()) {
      if (Boolean(tracked.end) !== ended) continue;
      let size: number;
      try {
        size = statSync(tracked.path).size;
      } catch {
        continue; // removed: the next scan drops it
      }
      if (size !== tracked.offset) this.drain(tracked);
    }
    if (!ended) this.refreshAll();
  }

  /** Reads what was appended to the record since the last read. */
  private drain(tracked: Tracked): void {
    let from = tracked.offset;
    let skipToLine = false;
    if (!tracked.aligned) {
      // Started from the size seen with the record's ends: step back one byte, so that a
      // boundary there is seen as a newline, and skip to the next line.
      from = Math.max(0, from - 1);
      skipToLine = from > 0;
    }
    const consumed = readLines(
      tracked.path,
      from,
      Infinity,
      (event, offset, length) => {
        remember(tracked, event);
        tracked.detail?.add(event, offset, length);
      },
      tracked.aligned ? tracked.rest : undefined,
      skipToLine,
    );
    if (!consumed) return;
    tracked.aligned = true;
    tracked.offset = consumed.end;
    tracked.rest = consumed.rest;
  }

  /** Recomputes summaries and sends those that changed. */
  private refreshAll(): void {
    const now = Date.now();
    for (const tracked of this.tracked.values()) {
      const run = summarize(tracked, this.alive, now);
      if (!run) continue;
      const key = JSON.stringify({ ...run, durationMs: isGoing(run.state) ? 0 : run.durationMs });
      tracked.run = run;
      if (key === tracked.sent) continue;
      tracked.sent = key;
      this.emit({ kind: "run", run });
    }
  }
}

/** A run whose loop is going (its duration grows, its control channel answers). */
function isGoing(state: DashboardRun["state"]): boolean {
  return state === "running" || state === "paused" || state === "stopping";
}

function remember(tracked: Tracked, event: RecordEvent): void {
  switch (event.type) {
    case "run.start":
      tracked.start = event;
      break;
    case "iteration.start":
      if (!tracked.lastStart || event.n >= tracked.lastStart.n) tracked.lastStart = event;
      break;
    case "iteration.end":
      if (!tracked.lastEnd || event.n >= tracked.lastEnd.n) tracked.lastEnd = event;
      break;
    case "run.resume":
      // The run goes on (loopx runs resume): the ending before it no longer holds; its totals go on.
      if (!tracked.totals) {
        tracked.totals = emptyRunTotals();
        if (tracked.end?.receipts) addRunTotals(tracked.totals, tracked.end.receipts);
      }
      tracked.sitting = event;
      tracked.end = undefined;
      tracked.steering = undefined;
      break;
    case "run.pause":
    case "run.continue":
    case "run.stop":
      tracked.steering = event;
      break;
    case "run.end":
      tracked.end = event;
      tracked.steering = undefined;
      break;
    case "receipt": {
      const receipt = tracked.totals && recordedReceipt(event);
      if (receipt) addReceipt(tracked.totals!, receipt);
      break;
    }
  }
}

/** A record's receipt totals, from the whole of it (its ends already read, when that is all of it). */
function wholeRecordTotals(path: string, size: number, ends: string): RunTotals {
  if (size === 0) return emptyRunTotals();
  try {
    return recordTotals(parseRecord(Buffer.byteLength(ends) >= size ? ends : readFileSync(path, "utf8")).events).run;
  } catch {
    return emptyRunTotals();
  }
}

function summarize(tracked: Tracked, alive: (sitting: Pick<RunStartEvent, "pid" | "time">) => boolean, now: number): DashboardRun | undefined {
  if (tracked.newerVersion !== undefined) {
    return tracked.run ?? { id: tracked.id, state: "unknown", start: "", durationMs: 0, iterations: 0, target: "", project: "", pid: 0, maxIterations: null, runtime: "", version: "", newerVersion: tracked.newerVersion };
  }
  if (!tracked.start) return undefined;
  const events: RecordEvent[] = [tracked.start];
  if (tracked.sitting) events.push(tracked.sitting);
  if (tracked.lastStart) events.push(tracked.lastStart);
  if (tracked.lastEnd) events.push(tracked.lastEnd);
  if (tracked.steering) events.push(tracked.steering);
  if (tracked.end) events.push(tracked.end);
  const summary = summarizeRun(tracked.id, events, alive, now);
  if (!summary) return undefined;
  const run: DashboardRun = summary;
  // A run.end written by loopx holds the totals (summarizeRun took them); otherwise the kept ones.
  if (!run.totals && tracked.totals && tracked.totals.receipts > 0) run.totals = tracked.totals;
  if (tracked.sitting) run.resumed = { time: tracked.sitting.time, n: tracked.sitting.iterations + 1, target: tracked.sitting.target };
  const current = tracked.lastStart;
  if (isGoing(summary.state) && current && (!tracked.lastEnd || tracked.lastEnd.n < current.n)) {
    run.current = { n: current.n, target: current.target, start: current.time };
  }
  return run;
}

/**
 * Reads complete lines of `path` from byte `from` up to `until`, calling `onEvent` with each
 * event and its line's byte offset and length. `rest` is an incomplete line that ended just before
 * `from`; `skipToLine` drops bytes up to the first newline. `forIndex`: only what RunIndex reads
 * matters — an iteration.start line says nothing its iteration.end does not (n, target), except for
 * the iteration without an end, which the tail knows, so those lines are skipped unparsed (a third
 * of a record's lines) when written as loopx writes them (`v` and `type` first; any other form is
 * parsed). Returns where it stopped and the
 * incomplete line left there, or undefined when the file cannot be read.
 */
function readLines(
  path: string,
  from: number,
  until: number,
  onEvent: (event: RecordEvent, offset: number, length: number) => void,
  rest?: Buffer,
  skipToLine = false,
  forIndex = false,
): { end: number; rest: Buffer } | undefined {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return undefined;
  }
  try {
    const limit = Math.min(until, fstatSync(fd).size);
    let position = from;
    let pending = rest?.length ? rest : Buffer.alloc(0);
    let pendingAt = position - pending.length;
    const chunk = Buffer.alloc(Math.min(CHUNK, Math.max(1, limit - position)));
    while (position < limit) {
      const read = readSync(fd, chunk, 0, Math.min(chunk.length, limit - position), position);
      if (read === 0) break;
      position += read;
      const data = pending.length ? Buffer.concat([pending, chunk.subarray(0, read)]) : chunk.subarray(0, read);
      let lineStart = 0;
      if (skipToLine) {
        const newline = data.indexOf(10);
        if (newline < 0) {
          pending = Buffer.alloc(0);
          pendingAt = position;
          continue;
        }
        lineStart = newline + 1;
        skipToLine = false;
      }
      // Decoded once per chunk; byte offsets follow from the lengths (equal for ASCII).
      const lastNewline = data.lastIndexOf(10);
      if (lastNewline >= lineStart) {
        const text = data.toString("utf8", lineStart, lastNewline);
        const ascii = text.length === lastNewline - lineStart;
        let at = pendingAt + lineStart;
        for (const line of text.split("\n")) {
          const bytes = ascii ? line.length : Buffer.byteLength(line);
          if (line !== "" && !(forIndex && line.startsWith(ITERATION_START))) {
            let event: RecordEvent | number | undefined;
            try {
              event = recordEvent(JSON.parse(line));
            } catch {
              event = undefined; // the line in flight when a loop was killed
            }
            if (typeof event === "object") onEvent(event, at, bytes + 1);
          }
          at += bytes + 1;
        }
        lineStart = lastNewline + 1;
      }
      // Copied: `chunk` is reused by the next read.
      pending = Buffer.from(data.subarray(lineStart));
      pendingAt += lineStart;
    }
    return { end: position, rest: pending };
  } finally {
    closeSync(fd);
  }
}
