import type { LoopEvent } from "../core/events.js";
import type { OpenRecord } from "./record-file.js";
import { cutTail, GAP_LINE_BYTES, lostGap, type LostEvents } from "./room.js";

/** Room kept for a run's end (records/reserve.ts); `release()`: true if there was some. */
export interface Reserve {
  release(): boolean;
}

/**
 * What a full disk does to one record (records/writer.ts): the events it kept out, marked with a
 * `gap` line once the disk has room again, and where room for the run's end comes from when it
 * stays full — the reserve kept for it (records/reserve.ts), else the record's own last lines
 * (records/room.ts). The record then says how the run ended, not that it crashed.
 */
export class FullDisk {
  /** Events a full disk kept out of the file, since the last that was written. */
  private lost: LostEvents | undefined;
  /** The last iteration whose end was written. */
  private lastN = 0;
  /** The room kept for the run's end, released when the file is closed. */
  private reserve: Reserve | undefined;

  keepReserve(reserve: Reserve): void {
    this.reserve = reserve;
  }

  releaseReserve(): void {
    this.reserve?.release();
    this.reserve = undefined;
  }

  /** The run's first event was kept out of the record (and nothing since let it in). */
  get lostStart(): boolean {
    return this.lost?.start !== undefined;
  }

  /** Appends what a full disk kept out of the file before `event` (when there is room again). */
  catchUp(event: LoopEvent, append: (line: string) => void): void {
    if (this.lost) {
      // The run's first event comes first however late (a record is read from it), then the gap.
      if (this.lost.start) append(JSON.stringify(this.lost.start));
      this.lost.start = undefined;
      append(JSON.stringify(lostGap(this.lost, event)));
    }
    this.lost = undefined;
  }

  /** `event` is in the file. */
  written(event: LoopEvent): void {
    if (event.type === "iteration.end") this.lastN = event.n;
  }

  /** Where room for `event` may come from, tried in order: only the run's end has any. */
  rooms(event: LoopEvent, file: OpenRecord): (() => boolean)[] {
    if (event.type !== "run.end") return [];
    return [() => this.reserve?.release() ?? false, () => this.giveUpTail(file, event)];
  }

  /** A full disk: the event is counted as lost, and the record goes on once it can be written again. */
  lose(event: LoopEvent): void {
    this.lost ??= { after: this.lastN, iterations: 0, bytes: 0 };
    if (event.type === "run.start" || event.type === "run.resume") this.lost.start = event;
    else this.lost.bytes += Buffer.byteLength(JSON.stringify(event)) + 1;
    if (event.type === "iteration.end") this.lost.iterations++;
  }

  /** No reserve, or not enough: the record's own last lines make room for its end (records/room.ts). */
  private giveUpTail(file: OpenRecord, end: LoopEvent): boolean {
    if (this.lost?.start) return false;
    let cut: ReturnType<typeof cutTail>;
    try {
      cut = cutTail(file.fd, file.path, Buffer.byteLength(JSON.stringify(end)) + GAP_LINE_BYTES);
    } catch {
      return false; // the record stays as it is
    }
    if (!cut) return false;
    const lost = (this.lost ??= { after: this.lastN, iterations: 0, bytes: 0 });
    lost.iterations += cut.iterations;
    lost.bytes += cut.bytes;
    if (cut.after !== undefined) lost.after = Math.min(lost.after, cut.after);
    file.bytes -= cut.removed;
    return true;
  }
}
