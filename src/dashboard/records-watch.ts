import { statSync } from "node:fs";
import type { IterationEndEvent, NoteEvent, RunStartEvent } from "../core/events.js";
import { listRecordIds, runProcessAlive } from "../records/store.js";
import { readIterationLines, readRunIndex } from "./record-lines.js";
import { RecordsNotice } from "./records-notice.js";
import type { RunIndex } from "./run-index.js";
import { isGoing, remember, summarize, trackRecord, type Change, type DashboardRun, type Tracked } from "./run-tracking.js";

export type { Change, DashboardRun };

/**
 * The dashboard's view of the records directory, kept current without ever slowing a loop: it
 * only reads. Each record is read once — its ends (`run.start` and the last lines) for the runs
 * page, the whole of it only when its run's page is opened — and from then on only what was
 * appended, from the byte offset reached so far. When to look again is RecordsNotice's concern
 * (records-notice.ts: fs.watch, stat polling, batching); the whole-record reads a run's page asks
 * for are in record-lines.ts; what is kept of each record, in run-tracking.ts.
 */

/** Whole-record indexes kept (runs whose page was opened), least recently used dropped first. */
const DETAILS_KEPT = 4;

export class RecordsWatch {
  private readonly tracked = new Map<string, Tracked>();
  private readonly listeners = new Set<(change: Change) => void>();
  private readonly detailOrder: string[] = [];
  private readonly notice: RecordsNotice;

  constructor(
    readonly dir: string,
    private readonly alive: (sitting: Pick<RunStartEvent, "pid" | "time">) => boolean = runProcessAlive,
  ) {
    this.notice = new RecordsNotice(dir, {
      known: (id) => this.tracked.has(id),
      scan: () => this.scan(),
      read: (id) => {
        const tracked = this.tracked.get(id);
        if (tracked) this.drain(tracked);
      },
      poll: (ended) => this.poll(ended),
      refresh: () => this.refreshAll(),
    });
  }

  start(): void {
    this.scan();
    this.notice.start();
  }

  close(): void {
    this.notice.close();
  }

  onChange(listener: (change: Change) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Every run, newest first. */
  runs(): DashboardRun[] {
    const runs: DashboardRun[] = [];
    for (const tracked of this.tracked.values()) if (tracked.run) runs.push(fresh(tracked.run));
    return runs.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  }

  run(id: string): DashboardRun | undefined {
    // A run newer than the last scan (its page opened as it started, before the records
    // directory could be watched): look again now rather than answer "no run".
    if (!this.tracked.has(id)) this.scan();
    const run = this.tracked.get(id)?.run;
    return run && fresh(run);
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
      tracked.detail = readRunIndex(tracked);
    }
    return tracked.detail;
  }

  /**
   * The `iteration.end` events of iterations `ns` of run `id` and the notes their scripts added,
   * read back from its record by offset.
   */
  iterationLines(id: string, ns: number[]): { ends: Map<number, IterationEndEvent>; notes: Map<number, NoteEvent[]> } {
    const tracked = this.tracked.get(id);
    const index = tracked && this.detail(id);
    if (!tracked || !index) return { ends: new Map(), notes: new Map() };
    return readIterationLines(tracked.path, index, ns);
  }

  private emit(change: Change): void {
    for (const listener of this.listeners) listener(change);
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
      const tracked = trackRecord(this.dir, id);
      if (tracked) this.tracked.set(id, tracked); // else pruned while we read
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

/** A running run's duration is as of now. */
function fresh(run: DashboardRun): DashboardRun {
  if (!isGoing(run.state)) return run;
  return { ...run, durationMs: Math.max(0, Date.now() - Date.parse(run.start)) };
}
