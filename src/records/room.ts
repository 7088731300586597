import { closeSync, fstatSync, ftruncateSync, openSync, readSync } from "node:fs";
import type { GapEvent, LoopEvent } from "../core/events.js";

/**
 * A record on a full disk: the events a full disk kept out of it, the `gap` line that marks them
 * once it can be written again, and the last resort for its end (cutTail).
 */

/** Events a full disk kept out of a record, since the last one written. */
export interface LostEvents {
  /** The last iteration whose end was written before them. */
  after: number;
  /** Iterations whose end is among them. */
  iterations: number;
  bytes: number;
  /** The run's run.start / run.resume, when it was lost: written first once the disk has room. */
  start?: LoopEvent;
}

/** ENOSPC / EDQUOT: the disk (or the user's quota) is full; space may come back. */
export function isNoSpace(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === "ENOSPC" || code === "EDQUOT";
}

/** At most what a `gap` line takes (its numbers and time included). */
export const GAP_LINE_BYTES = 512;

/** The `gap` line that marks events a full disk kept out of the record. */
export function lostGap(lost: LostEvents, next: LoopEvent): GapEvent {
  const { after, iterations, bytes } = lost;
  return { v: 1, type: "gap", time: next.time, run: next.run, after, iterations, bytes, reason: "disk" };
}

/**
 * The last resort for a record's end on a disk that stays full when no reserve could be kept for
 * it (records/reserve.ts; the disk had room for the record's first block only): the record gives
 * up its own last lines — whole lines, never its first — so that the `gap` and the `run.end` fit
 * in the blocks the file already holds. What it gave up is counted in that gap: the record then
 * says how the run ended, and that the details of its last iterations are missing.
 */

/** What a cut took from the record's end. */
export interface Cut {
  /** Iterations whose end it removed (a removed gap's included). */
  iterations: number;
  /** Bytes of events it removed (a removed gap's count included, not the gap line itself). */
  bytes: number;
  /** The last iteration whose end is still in the record, when the cut removed one. */
  after?: number;
  /** Bytes the file is shorter by. */
  removed: number;
}

/** The longest line the cut expects to step over (an iteration.end: 4 KiB of result, 4 KiB of stderr). */
const READ_BYTES = 64 * 1024;

/**
 * Cuts whole lines off the end of the record at `path` (open for appending on `fd`) until `needed` more bytes fit in the
 * blocks it holds. Undefined when they cannot (nothing but its first line, or lines too long).
 */
export function cutTail(fd: number, path: string, needed: number): Cut | undefined {
  const { size, blocks } = fstatSync(fd);
  // What the file holds on disk: a write within it needs no block the full disk does not have.
  const held = Math.max(size, (blocks ?? 0) * 512);
  const cut = size + needed - held;
  if (cut <= 0) return undefined; // it should fit already: not a matter of blocks (a quota?)
  const from = Math.max(0, size - cut - READ_BYTES);
  const buffer = Buffer.alloc(size - from);
  // `fd` is open for appending only: the lines are read through a descriptor of their own.
  const read = openSync(path, "r");
  let text: string;
  try {
    text = buffer.toString("utf8", 0, readSync(read, buffer, 0, buffer.length, from));
  } finally {
    closeSync(read);
  }
  const lines = text.split("\n");
  lines.pop(); // after the last newline: nothing
  // The first piece is the record's first line (kept) or the end of a line begun before `from`.
  const taken: string[] = [];
  let removed = 0;
  for (let i = lines.length - 1; i >= 1 && removed < cut; i--) {
    taken.push(lines[i]!);
    removed += Buffer.byteLength(lines[i]!) + 1;
  }
  if (removed < cut) return undefined;
  const result = countCut(taken);
  ftruncateSync(fd, size - removed);
  return { ...result, removed };
}

/** What the cut lines held: iterations ended, their bytes, the iteration before the first of them. */
function countCut(lines: string[]): Omit<Cut, "removed"> {
  const cut: Omit<Cut, "removed"> = { iterations: 0, bytes: 0 };
  const before = (n: number) => (cut.after = Math.min(cut.after ?? n, n));
  for (const line of lines) {
    let event: { type?: unknown; n?: unknown; after?: unknown; iterations?: unknown; bytes?: unknown };
    try {
      event = JSON.parse(line) as typeof event;
    } catch {
      cut.bytes += Buffer.byteLength(line) + 1;
      continue;
    }
    if (event.type === "gap") {
      // An earlier gap within the cut: merged into the one written after it.
      cut.iterations += typeof event.iterations === "number" ? event.iterations : 0;
      cut.bytes += typeof event.bytes === "number" ? event.bytes : 0;
      if (typeof event.after === "number") before(event.after);
      continue;
    }
    cut.bytes += Buffer.byteLength(line) + 1;
    if (event.type === "iteration.end" && typeof event.n === "number") {
      cut.iterations++;
      before(event.n - 1);
    }
  }
  return cut;
}
