import { closeSync, fstatSync, mkdirSync, readFileSync, unlinkSync } from "node:fs";
import { dirname } from "node:path";
import { fsReason, LoopxError } from "../core/errors.js";
import type { LoopEvent, RunEndEvent } from "../core/events.js";
import { recordTotals, type RunTotals } from "../core/receipts.js";
import { parseRecord } from "./parse.js";
import type { RunPart } from "../core/run-part.js";
import { RECORD_PATH_VAR } from "./note.js";
import { pruneRecords } from "./store.js";
import { releaseReserve, sweepReserves, takeReserve } from "./reserve.js";
import { warnToStderr } from "../os/stderr.js";
import { recordPath } from "./paths.js";
import { RECORD_MAX_BYTES } from "./compact.js";
import { FullDisk, type Reserve } from "./full-disk.js";
import { appendWhole, compactOrWait, type OpenRecord, openRecord } from "./record-file.js";
import { isNoSpace } from "./room.js";

/**
 * Run records and `--log` (loopx's own extension): every event of the run, one JSON object per
 * line, written with one write(2) per event on a descriptor opened once — nothing is buffered in
 * loopx, so a crash or SIGKILL loses at most the event in flight.
 */

/**
 * Appends events to one file; after the first failure it warns once and writes nothing more —
 * except on a full disk (records/full-disk.ts), where it goes on trying and marks what was lost
 * with a `gap` line.
 */
class EventFile {
  private file: OpenRecord | undefined;
  private failed = false;
  /** The file held events of earlier sittings (a resume): their receipts count in the totals too. */
  private resumed = false;
  private readonly disk = new FullDisk();

  /** `maxBytes`: compact the file (compactRecord) whenever it grows past it. */
  constructor(
    private readonly describe: string,
    private readonly maxBytes = Number.POSITIVE_INFINITY,
  ) {}

  open(path: string): void {
    this.file = openRecord(path);
    this.resumed = this.file.bytes > 0;
  }

  isOpen(): boolean {
    return this.file !== undefined;
  }

  /**
   * What the receipts in the file add up to, when there are any: read (once, at the run's end)
   * only when scripts appended to the file — a run whose scripts report nothing reads nothing.
   */
  receiptTotals(): RunTotals | undefined {
    if (this.file === undefined) return undefined;
    try {
      if (!this.resumed && fstatSync(this.file.fd).size <= this.file.bytes) return undefined;
      const totals = recordTotals(parseRecord(readFileSync(this.file.path, "utf8")).events).run;
      return totals.receipts > 0 ? totals : undefined;
    } catch {
      return undefined; // the run.end is written without them; readers add the record up themselves
    }
  }

  write(event: LoopEvent): void {
    if (this.file === undefined) return;
    try {
      this.put(this.file, event);
    } catch (error) {
      this.missed(this.file, event, error);
    }
    if (event.type === "run.end") this.close();
  }

  /** The event, after what a full disk kept out of the file before it (when there is room again). */
  private put(file: OpenRecord, event: LoopEvent): void {
    this.disk.catchUp(event, (line) => appendWhole(file, line));
    appendWhole(file, JSON.stringify(event));
    this.disk.written(event);
    if (file.bytes > this.maxBytes && event.type !== "run.end") compactOrWait(file, this.maxBytes, event);
  }

  /**
   * An event that could not be written. On a full disk, the run's end is written into room the
   * disk's handling finds for it; any other event is counted as lost.
   */
  private missed(file: OpenRecord, event: LoopEvent, error: unknown): void {
    if (!isNoSpace(error)) return this.fail(error);
    for (const room of this.disk.rooms(event, file)) {
      if (!room()) continue;
      try {
        this.put(file, event);
        return;
      } catch (again) {
        if (!isNoSpace(again)) return this.fail(again);
      }
    }
    this.disk.lose(event);
    if (!this.failed) {
      this.failed = true;
      warnToStderr(`cannot write ${this.describe}: ${fsReason(error)}; the run goes on, and the events lost are marked in it once it can be written again`);
    }
  }

  /** Room kept for the run's end (`release()`: true if there was some), taken once the run's first event is written. */
  keepReserve(reserve: Reserve): void {
    this.disk.keepReserve(reserve);
  }

  fail(error: unknown): void {
    this.close();
    if (this.failed) return;
    this.failed = true;
    warnToStderr(`cannot write ${this.describe}: ${fsReason(error)}; the run goes on without it`);
  }

  close(): void {
    this.disk.releaseReserve();
    if (this.file === undefined) return;
    const { fd, path } = this.file;
    this.file = undefined;
    try {
      // A record a full disk kept every event out of says nothing: it is not left behind, empty.
      if (this.disk.lostStart && fstatSync(fd).size === 0) unlinkSync(path);
    } catch {
      // Kept, empty: readers skip it.
    }
    try {
      closeSync(fd);
    } catch {
      // Nothing left to lose.
    }
  }
}

/**
 * The run's record `<dir>/<run id>.jsonl`; the oldest records beyond the newest 200 are pruned,
 * and a record past `maxBytes` is compacted (compactRecord) as the run goes on.
 */
export function recordPart(dir: string, maxBytes = RECORD_MAX_BYTES): RunPart {
  let file: EventFile | undefined;
  let path: string | undefined;
  return {
    // Scripts may add notes to the record (records/note.ts) while it is open.
    begin: () => (file?.isOpen() && path ? { [RECORD_PATH_VAR]: path } : undefined),
    onEvent(event) {
      // A resumed run goes on in its own record (and prunes nothing: it is not a new one).
      if (event.type === "run.start" || event.type === "run.resume") {
        path = recordPath(dir, event.run);
        file = new EventFile(`the run record ${path}`, maxBytes);
        try {
          mkdirSync(dir, { recursive: true, mode: 0o700 });
          if (event.type === "run.start") {
            pruneRecords(dir);
            sweepReserves(dir);
          }
          file.open(path);
        } catch (error) {
          file.fail(error);
        }
      }
      // The record's run.end carries the run's receipt totals (a copy: other parts see the event as emitted).
      const receipts = event.type === "run.end" ? file?.receiptTotals() : undefined;
      file?.write(receipts ? { ...(event as RunEndEvent), receipts } : event);
      // Once the record holds its first event: room for its end, should the disk be full by then.
      if ((event.type === "run.start" || event.type === "run.resume") && file?.isOpen() && takeReserve(dir, event.run, event)) {
        file.keepReserve({ release: () => releaseReserve(dir, event.run) });
      }
    },
  };
}

/**
 * `--log <file>`: the same events appended to a file of the user's choosing. The user asked for
 * it by name, so a file that cannot be opened fails the run before any script runs.
 */
export function logPart(path: string): RunPart {
  const file = new EventFile(`the --log file ${path}`);
  let pending: LoopEvent | undefined;
  return {
    onEvent(event) {
      if (event.type === "run.start" || event.type === "run.resume") pending = event;
      else file.write(event);
    },
    begin() {
      try {
        file.open(path);
      } catch (error) {
        // "no such file or directory" would not say which part of the path is missing.
        const why = (error as NodeJS.ErrnoException).code === "ENOENT" ? `the directory ${dirname(path)} does not exist` : fsReason(error);
        throw new LoopxError(`cannot open the --log file ${path}: ${why}`);
      }
      if (pending) file.write(pending);
    },
  };
}
