import { closeSync, existsSync, openSync, readSync, readdirSync, statSync, unlinkSync } from "node:fs";
import { processRunning } from "../os/procfs.js";
import { randomBytes } from "../os/random.js";
import { writeAllSync } from "../os/write-all.js";
import { closingPath, reserveIdOf, reservePath } from "./paths.js";

/**
 * The room a run's record keeps for its own end: `<run id>.reserve` beside the record, taken once
 * when the run (or a resume of it) starts and released when it ends. On a disk that is full when
 * the run ends, releasing it first makes room for the `gap` (the events lost) and the `run.end`, so
 * that the record says how the run ended instead of leaving it to look crashed. Nothing per
 * iteration: the file is written once and never touched again until the end.
 *
 * Its first line names the process it belongs to (pid, start): a reserve whose process is gone
 * (loopx and its guardian both killed) is removed by the next run's start (sweepReserves).
 */

/** A file system block (and a tmpfs page): what a write on a full disk needs one more of. */
const BLOCK_BYTES = 4096;
/** Enough for a gap line and a run.end with receipts and a long message, and a lost run.start. */
const RESERVE_BYTES = 4 * BLOCK_BYTES;

/** Whose reserve it is: the process running the loop, and when it started the run (or its resume). */
interface Owner {
  pid: number;
  time: string;
}

/**
 * Takes the reserve of run `id` in `dir`, in whole blocks: as many as the disk has room for, up to
 * RESERVE_BYTES (one block holds a gap and a run.end). Its bytes are not zeros (a file system that
 * compresses or dedupes would keep no room for them). False, with nothing left behind, when not
 * even one block could be taken.
 */
export function takeReserve(dir: string, id: string, owner: Owner): boolean {
  const path = reservePath(dir, id);
  const bytes = reserveBytes(owner);
  let fd: number | undefined;
  let taken = 0;
  try {
    fd = openSync(path, "w", 0o600);
    for (; taken < RESERVE_BYTES; taken += BLOCK_BYTES) writeAllSync(fd, bytes.subarray(taken, taken + BLOCK_BYTES));
  } catch {
    // The disk is (nearly) full: what was taken is kept.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  if (taken === 0) releaseReserve(dir, id);
  return taken > 0;
}

/** The reserve's content: its owner on the first line, then printable noise. */
function reserveBytes(owner: Owner): Buffer {
  const head = Buffer.from(`${JSON.stringify({ pid: owner.pid, time: owner.time })}\n`);
  const bytes = Buffer.alloc(RESERVE_BYTES);
  head.copy(bytes);
  // Base64 of random bytes: printable and incompressible, made natively (a 16 KB loop in JS at
  // every run's start was hot enough for V8 to compile it with its optimizing compiler).
  const random = Buffer.from(randomBytes(Math.ceil(((RESERVE_BYTES - head.length) * 3) / 4)).buffer);
  bytes.write(random.toString("base64"), head.length, "latin1");
  return bytes;
}

/** Removes the reserve of run `id`; true if there was one to remove (room was made). */
export function releaseReserve(dir: string, id: string): boolean {
  try {
    unlinkSync(reservePath(dir, id));
    return true;
  } catch {
    return false;
  }
}

/** The owner named in a reserve's first line; undefined if it cannot be read. */
function ownerOf(path: string): Owner | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    const buffer = Buffer.alloc(256);
    const text = buffer.toString("utf8", 0, readSync(fd, buffer, 0, buffer.length, 0));
    const owner = JSON.parse(text.slice(0, text.indexOf("\n"))) as Partial<Owner>;
    return typeof owner.pid === "number" && typeof owner.time === "string" ? { pid: owner.pid, time: owner.time } : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * True when the reserve of run `id` belongs to no one: its process is gone and no guardian is
 * closing the run, or (its first line never written) it is over a minute old.
 */
function reserveGone(dir: string, id: string): boolean {
  const path = reservePath(dir, id);
  const owner = ownerOf(path);
  if (owner === undefined) {
    try {
      return statSync(path).mtimeMs < Date.now() - 60_000;
    } catch {
      return false;
    }
  }
  return !processRunning(owner.pid, Date.parse(owner.time) + 2000) && !existsSync(closingPath(dir, id));
}

/**
 * Removes the reserves in `dir` whose process is gone and that no guardian is closing (loopx and its
 * guardian were both killed): a run's start does this, so that no reserve is left for good.
 */
export function sweepReserves(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const id = reserveIdOf(name);
    if (id === undefined) continue;
    if (reserveGone(dir, id)) releaseReserve(dir, id);
  }
}
