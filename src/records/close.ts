import { closeSync, constants, fstatSync, ftruncateSync, openSync, readSync, rmSync, statSync, writeSync } from "node:fs";
import type { RunEndEvent } from "../core/events.js";
import { recordPath } from "./paths.js";
import { releaseReserve } from "./reserve.js";
import { cutTail, GAP_LINE_BYTES, lostGap } from "./room.js";

/**
 * Closing the record of a run whose loopx died (the guardian's last lines): appends without the
 * writer's open file, repairing a line loopx left cut short, and on a full disk takes the same
 * steps as the writer's end (writer.ts): the room the run kept, then the record's own last lines.
 * The record's one writer for the guardian: reserve.ts and room.ts stay private to records/.
 */

/**
 * Appends `line` to `file` if it still exists (a pruned record is not created again): true once
 * written whole. A write a full disk cut short is taken back.
 */
export function appendLine(file: string, line: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, constants.O_WRONLY | constants.O_APPEND);
  } catch {
    return false;
  }
  try {
    // The event loopx was writing when it died may be cut short: start on a line of our own.
    const size = fstatSync(fd).size;
    let text = line;
    if (size > 0) {
      const last = Buffer.alloc(1);
      const read = openSync(file, constants.O_RDONLY);
      try {
        readSync(read, last, 0, 1, size - 1);
      } finally {
        closeSync(read);
      }
      if (last[0] !== 0x0a) text = `\n${line}`;
    }
    const data = Buffer.from(text);
    const written = writeSync(fd, data);
    if (written < data.length) ftruncateSync(fd, size);
    return written === data.length;
  } catch {
    return false; // Nothing more can be done for this file.
  } finally {
    closeSync(fd);
  }
}

/**
 * Appends the run's end (and its hook's event) to its record; on a disk too full for it, into the
 * room the run kept for it (reserve.ts), saying that events may be missing before it. The
 * reserve is removed either way.
 */
export function appendEnd(dir: string, id: string, end: RunEndEvent, hook: string, lastN: number): void {
  const path = recordPath(dir, id);
  // A record a full disk kept every event out of says nothing, and a lone run.end would not make
  // it one (readers start from run.start): it is removed, as loopx itself does (records/writer.ts).
  if (isEmptyFile(path)) {
    rmSync(path, { force: true });
    releaseReserve(dir, id);
    return;
  }
  if (!appendLine(path, `${hook}${JSON.stringify(end)}\n`)) {
    const message = `${end.message}; its record's disk was full: events may be missing from it`;
    const text = `${hook}${JSON.stringify({ ...end, message })}\n`;
    // The room the run kept for its end, else the record's own last lines.
    if (!(releaseReserve(dir, id) && appendLine(path, text))) appendAfterCut(path, text, end, lastN);
  }
  releaseReserve(dir, id);
}

/**
 * Appends `text` once the record has given up its own last lines to make room for it
 * (room.ts), after a `gap` that counts them. `lastN`: the last iteration whose end the
 * record holds (before the cut).
 */
function appendAfterCut(path: string, text: string, end: RunEndEvent, lastN: number): void {
  let fd: number | undefined;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_APPEND);
    const cut = cutTail(fd, path, Buffer.byteLength(text) + GAP_LINE_BYTES);
    if (cut) appendLine(path, `${JSON.stringify(lostGap({ after: cut.after ?? lastN, iterations: cut.iterations, bytes: cut.bytes }, end))}\n${text}`);
  } catch {
    // The record stays as it is.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function isEmptyFile(path: string): boolean {
  try {
    return statSync(path).size === 0;
  } catch {
    return false;
  }
}


/** A record that loopx closed itself needs no room for its end: the room the run kept is given back. */
export function releaseEndRoom(dir: string, id: string): void {
  releaseReserve(dir, id);
}
