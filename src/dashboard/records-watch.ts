import { closeSync, openSync, readSync, statSync, watch, type FSWatcher } from "node:fs";
import { recordIdOf, recordPath } from "../records/paths.js";
import type { IterationEndEvent, NoteEvent, RecordEvent, RunStartEvent } from "../core/events.js";
import { RecordFollower, readLines } from "../records/follow.js";
import { parseRecord } from "../records/parse.js";
import { listRecordIds, readRecordEnds, runProcessAlive } from "../records/store.js";
import { RunIndex } from "./run-index.js";
import { isGoing, remember, summarize, wholeRecordTotals, type Change, type DashboardRun, type Tracked } from "./run-tracking.js";

export type { Change, DashboardRun };

/**
 * The dashboard's view of the records directory, kept current without ever slowing a loop: it
 * only reads. Each record is read once — its ends (`run.start` and the last lines) for the runs
 * page, the whole of it only when its run's page is opened — and from then on only what was
 * appended, from the byte offset reached so far. Changes are noticed through fs.watch (inotify)
 * within milliseconds, with stat polling as a fallback, and batched at most every BATCH_MS.
 */

const BATCH_MS = 50;
const POLL_OPEN_MS = 250;
const POLL_DIR_MS = 1000;
const POLL_ENDED_MS = 2000;
const ITERATION_START = '{"v":1,"type":"iteration.start",';
/** Whole-record indexes kept (runs whose page was opened), least recently used dropped first. */
const DETAILS_KEPT = 4;

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
      readLines(tracked.path, 0, tracked.follower.complete, (event, offset, length) => index.add(event, offset, length), undefined, false, ITERATION_START);
      if (tracked.lastStart) index.add(tracked.lastStart, 0, 0); // the one start line the index needs
      for (const resume of index.resumes) if (startedBefore(tracked.path, resume.offset, resume.n)) index.retried.add(resume.n);
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
        const id = typeof name === "string" ? recordIdOf(name) : undefined;
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
      const path = recordPath(this.dir, id);
      let size: number;
      let text: string;
      try {
        size = statSync(path).size;
        text = readRecordEnds(this.dir, id);
      } catch {
        continue; // pruned while we read
      }
      const tracked: Tracked = { id, path, follower: new RecordFollower(path, size) };
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
      if (size !== tracked.follower.offset) this.drain(tracked);
    }
    if (!ended) this.refreshAll();
  }

  /** Reads what was appended to the record since the last read. */
  private drain(tracked: Tracked): void {
    tracked.follower.drain((event, offset, length) => {
      remember(tracked, event);
      tracked.detail?.add(event, offset, length);
    });
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

/** How far before a resume its interrupted iteration's start line is looked for. */
const RESUME_LOOKBACK = 64 * 1024;

/**
 * True if iteration `n` started in the lines just before `offset` (a resume's line): the resume
 * then runs it again. The bulk read skips start lines; the few before each resume are read here.
 */
function startedBefore(path: string, offset: number, n: number): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    const from = Math.max(0, offset - RESUME_LOOKBACK);
    const buffer = Buffer.alloc(offset - from);
    readSync(fd, buffer, 0, buffer.length, from);
    return buffer.toString("utf8").split("\n").some((line) => line.startsWith(ITERATION_START) && line.includes(`"n":${n},`));
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
