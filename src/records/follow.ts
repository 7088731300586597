import { closeSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import type { RecordEvent } from "../core/events.js";
import { recordEvent } from "./parse.js";

/**
 * Following a run record as it grows — the one reader for `loopx runs tail` and the dashboard:
 * from a byte offset, complete lines only (the partial last line is kept for the next read), and a
 * record found shorter than what was read (compacted by its size cap, records/writer.ts) is read
 * on from its new end.
 */

/**
 * Bytes read at a time: 64 KiB, so that each decoded piece is an ordinary heap string (a string past
 * V8's large-object size, ~128 KiB, costs ten times as much to make and collect).
 */
const CHUNK = 64 * 1024;

/** Lines not to parse: those starting with this, or for which it says true. */
type Skip = string | ((line: string) => boolean);

export class RecordFollower {
  private consumed: number;
  private rest: Buffer = Buffer.alloc(0);
  /** False until the first read after starting mid-file has skipped to a line boundary. */
  private aligned: boolean;

  /** `from`: where to start; past 0 it may be inside a line (a size seen a moment ago). */
  constructor(
    readonly path: string,
    from = 0,
  ) {
    this.consumed = from;
    this.aligned = from === 0;
  }

  /** Bytes of the record read so far. */
  get offset(): number {
    return this.consumed;
  }

  /** Where the last complete line read ends. */
  get complete(): number {
    return this.consumed - this.rest.length;
  }

  /**
   * Reads what was appended since the last read: each complete line's event, its byte offset and
   * length. Returns false when the record cannot be read (removed).
   */
  drain(onEvent: (event: RecordEvent, offset: number, length: number) => void, onNewer?: (version: number) => void): boolean {
    let size: number;
    try {
      size = statSync(this.path).size;
    } catch {
      return false;
    }
    if (size < this.consumed) {
      // Compacted: what is left of the old lines was rewritten; read on from the new end.
      this.consumed = size;
      this.rest = Buffer.alloc(0);
      this.aligned = size === 0;
    }
    let from = this.consumed;
    let skipToLine = false;
    if (!this.aligned) {
      // Started from a size seen earlier: step back one byte, so that a boundary there is seen as
      // a newline, and skip to the next line.
      from = Math.max(0, from - 1);
      skipToLine = from > 0;
    }
    const read = readLines(this.path, from, Infinity, onEvent, this.aligned ? this.rest : undefined, skipToLine, undefined, onNewer);
    if (!read) return false;
    this.aligned = true;
    this.consumed = read.end;
    this.rest = read.rest;
    return true;
  }
}

/**
 * Reads complete lines of `path` from byte `from` up to `until`, calling `onEvent` with each
 * event and its line's byte offset and length. `rest` is an incomplete line that ended just before
 * `from`; `skipToLine` drops bytes up to the first newline. Lines starting with `skip` (or for
 * which it says true) are not parsed at all (the dashboard's index skips iteration.start lines, a
 * third of a record, that way).
 * A line of a newer record format goes to `onNewer`, never misread. Returns where it stopped and
 * the incomplete line left there, or undefined when the file cannot be read.
 */
export function readLines(
  path: string,
  from: number,
  until: number,
  onEvent: (event: RecordEvent, offset: number, length: number) => void,
  rest?: Buffer,
  skipToLine = false,
  skip?: Skip,
  onNewer?: (version: number) => void,
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
    // One buffer, reused: the incomplete line left by a read stays at its start, the next read goes after it.
    let kept = rest?.length ?? 0;
    let buffer: Buffer = Buffer.allocUnsafe(kept + Math.min(CHUNK, Math.max(1, limit - position)));
    if (rest) rest.copy(buffer, 0);
    let keptAt = position - kept;
    while (position < limit) {
      const want = Math.min(CHUNK, limit - position);
      if (buffer.length - kept < want) buffer = grown(buffer, kept);
      const read = readSync(fd, buffer, kept, want, position);
      if (read === 0) break;
      position += read;
      const data = buffer.subarray(0, kept + read);
      let lineStart = 0;
      if (skipToLine) {
        const newline = data.indexOf(10);
        if (newline < 0) {
          kept = 0;
          keptAt = position;
          continue;
        }
        lineStart = newline + 1;
        skipToLine = false;
      }
      const lastNewline = data.lastIndexOf(10);
      if (lastNewline >= lineStart) {
        emitLines(data, lineStart, lastNewline, keptAt + lineStart, onEvent, skip, onNewer);
        lineStart = lastNewline + 1;
      }
      kept = data.copy(buffer, 0, lineStart);
      keptAt += lineStart;
    }
    // Copied: the buffer is not kept.
    return { end: position, rest: Buffer.from(buffer.subarray(0, kept)) };
  } finally {
    closeSync(fd);
  }
}

/** `buffer` with room for another CHUNK after its first `kept` bytes (a line longer than a chunk). */
function grown(buffer: Buffer, kept: number): Buffer {
  const bigger = Buffer.allocUnsafe(Math.max(buffer.length * 2, kept + CHUNK));
  buffer.copy(bigger, 0, 0, kept);
  return bigger;
}

/**
 * The lines of `data` from `lineStart` up to the newline at `lastNewline`, the first at byte
 * offset `at`, each parsed and passed to `onEvent` (or `onNewer`) as readLines describes.
 */
function emitLines(
  data: Buffer,
  lineStart: number,
  lastNewline: number,
  at: number,
  onEvent: (event: RecordEvent, offset: number, length: number) => void,
  skip?: Skip,
  onNewer?: (version: number) => void,
): void {
  // Decoded once per chunk; byte offsets follow from the lengths (equal for ASCII).
  const text = data.toString("utf8", lineStart, lastNewline);
  const ascii = text.length === lastNewline - lineStart;
  const skipped = typeof skip === "string" ? (line: string) => line.startsWith(skip) : skip;
  for (const line of text.split("\n")) {
    const bytes = ascii ? line.length : Buffer.byteLength(line);
    if (line !== "" && !skipped?.(line)) {
      let event: RecordEvent | number | undefined;
      try {
        event = recordEvent(JSON.parse(line));
      } catch {
        event = undefined; // the line in flight when a loop was killed
      }
      if (typeof event === "object") onEvent(event, at, bytes + 1);
      else if (typeof event === "number") onNewer?.(event);
    }
    at += bytes + 1;
  }
}
