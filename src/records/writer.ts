import { closeSync, fstatSync, ftruncateSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
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
import { compactRecord, RECORD_MAX_BYTES } from "./compact.js";
import { type Cut, cutTail, GAP_LINE_BYTES, isNoSpace, lostGap, type LostEvents } from "./room.js";

/**
 * Run records and `--log` (loopx's own extension): every event of the run, one JSON object per
 * line, written with one write(2) per event on a descriptor opened once — nothing is buffered in
 * loopx, so a crash or SIGKILL loses at most the event in flight.
 */

/**
 * Appends events to one file; after the first failure it warns once and writes nothing more —
 * except on a full disk, where it goes on trying and marks what was lost with a `gap` line.
 */
class EventFile {
  private fd: number | undefined;
  private failed = false;
  private path: string | undefined;
  /** Bytes in the file, as far as this writer knows (notes by scripts come on top). */
  private bytes = 0;
  /** The file held events of earlier sittings (a resume): their receipts count in the totals too. */
  private resumed = false;
  /** Events a full disk kept out of the file, since the last that was written. */
  private lost: LostEvents | undefined;
  /** The last iteration whose end was written. */
  private lastN = 0;
  /** The room kept for the run's end (recordPart), released when the file is closed. */
  private reserve: { release(): boolean } | undefined;

  /** `maxBytes`: compact the file (compactRecord) whenever it grows past it. */
  constructor(
    private readonly describe: string,
    private readonly maxBytes = Number.POSITIVE_INFINITY,
  ) {}

  open(path: string): void {
    this.path = path;
    this.fd = openSync(path, "a", 0o600);
    this.bytes = fstatSync(this.fd).size;
    this.resumed = this.bytes > 0;
  }

  isOpen(): boolean {
    return this.fd !== undefined;
  }

  /**
   * What the receipts in the file add up to, when there are any: read (once, at the run's end)
   * only when scripts appended to the file — a run whose scripts report nothing reads nothing.
   */
  receiptTotals(): RunTotals | undefined {
    if (this.fd === undefined || this.path === undefined) return undefined;
    try {
      if (!this.resumed && fstatSync(this.fd).size <= this.bytes) return undefined;
      const totals = recordTotals(parseRecord(readFileSync(this.path, "utf8")).events).run;
      return totals.receipts > 0 ? totals : undefined;
    } catch {
      return undefined; // the run.end is written without them; readers add the record up themselves
    }
  }

  write(event: LoopEvent): void {
    if (this.fd === undefined) return;
    try {
      this.put(event);
    } catch (error) {
      this.missed(event, error);
    }
    if (event.type === "run.end") this.close();
  }

  /** The event, after what a full disk kept out of the file before it (when there is room again). */
  private put(event: LoopEvent): void {
    if (this.lost) {
      // The run's first event comes first however late (a record is read from it), then the gap.
      if (this.lost.start) this.append(JSON.stringify(this.lost.start));
      this.lost.start = undefined;
      this.append(JSON.stringify(lostGap(this.lost, event)));
    }
    this.lost = undefined;
    this.append(JSON.stringify(event));
    if (event.type === "iteration.end") this.lastN = event.n;
    if (this.bytes > this.maxBytes && event.type !== "run.end") this.compactOrWait(event);
  }

  /**
   * An event that could not be written. On a full disk, the run's end is written into the room
   * its reserve kept (records/reserve.ts), else into room the record's own last lines give up
   * (records/room.ts) — the record then says how the run ended, not that it crashed; any other
   * event is counted as lost.
   */
  private missed(event: LoopEvent, error: unknown): void {
    if (!isNoSpace(error)) return this.fail(error);
    const rooms = event.type === "run.end" ? [() => this.reserve?.release() ?? false, () => this.giveUpTail(event)] : [];
    for (const room of rooms) {
      if (!room()) continue;
      try {
        this.put(event);
        return;
      } catch (again) {
        if (!isNoSpace(again)) return this.fail(again);
      }
    }
    this.lose(event, error);
  }

  /** No reserve, or not enough: the record's own last lines make room for its end (records/room.ts). */
  private giveUpTail(end: LoopEvent): boolean {
    if (this.fd === undefined || this.path === undefined || this.lost?.start) return false;
    let cut: Cut | undefined;
    try {
      cut = cutTail(this.fd, this.path, Buffer.byteLength(JSON.stringify(end)) + GAP_LINE_BYTES);
    } catch {
      return false; // the record stays as it is
    }
    if (!cut) return false;
    const lost = (this.lost ??= { after: this.lastN, iterations: 0, bytes: 0 });
    lost.iterations += cut.iterations;
    lost.bytes += cut.bytes;
    if (cut.after !== undefined) lost.after = Math.min(lost.after, cut.after);
    this.bytes -= cut.removed;
    return true;
  }

  /** Room kept for the run's end (`release()`: true if there was some), taken once the run's first event is written. */
  keepReserve(reserve: { release(): boolean }): void {
    this.reserve = reserve;
  }

  /** Compacts the file; a disk too full for the compacted copy leaves it as it is, to try again later. */
  private compactOrWait(last: LoopEvent): void {
    try {
      this.compact(last);
    } catch {
      try {
        unlinkSync(this.compactPath());
      } catch {
        // Never made.
      }
    }
  }

  /**
   * One line, whole or not at all: a write cut short by a full disk is taken back (the file is
   * truncated to where it was), so that the record stays one JSON object per line.
   */
  private append(line: string): void {
    const data = Buffer.from(`${line}\n`);
    const written = writeSync(this.fd!, data);
    if (written < data.length) {
      ftruncateSync(this.fd!, fstatSync(this.fd!).size - written);
      throw Object.assign(new Error("no space left on device"), { code: "ENOSPC" });
    }
    this.bytes += written;
  }

  /** A full disk: the event is counted as lost, and the record goes on once it can be written again. */
  private lose(event: LoopEvent, error: unknown): void {
    this.lost ??= { after: this.lastN, iterations: 0, bytes: 0 };
    if (event.type === "run.start" || event.type === "run.resume") this.lost.start = event;
    else this.lost.bytes += Buffer.byteLength(JSON.stringify(event)) + 1;
    if (event.type === "iteration.end") this.lost.iterations++;
    if (!this.failed) {
      this.failed = true;
      warnToStderr(`cannot write ${this.describe}: ${fsReason(error)}; the run goes on, and the events lost are marked in it once it can be written again`);
    }
  }

  private compact(last: LoopEvent): void {
    const path = this.path!;
    const size = fstatSync(this.fd!).size; // scripts' notes included
    if (size <= this.maxBytes) {
      this.bytes = size;
      return;
    }
    const text = compactRecord(readFileSync(path, "utf8"), this.maxBytes, { v: 1, time: last.time, run: last.run });
    const temp = this.compactPath();
    writeFileSync(temp, text, { mode: 0o600 });
    renameSync(temp, path);
    closeSync(this.fd!);
    this.fd = openSync(path, "a", 0o600);
    this.bytes = Buffer.byteLength(text);
  }

  private compactPath(): string {
    return `${this.path!}.${process.pid}.compact`;
  }

  fail(error: unknown): void {
    this.close();
    if (this.failed) return;
    this.failed = true;
    warnToStderr(`cannot write ${this.describe}: ${fsReason(error)}; the run goes on without it`);
  }

  close(): void {
    this.reserve?.release();
    this.reserve = undefined;
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    try {
      // A record a full disk kept every event out of says nothing: it is not left behind, empty.
      if (this.lost?.start && fstatSync(fd).size === 0 && this.path) unlinkSync(this.path);
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
