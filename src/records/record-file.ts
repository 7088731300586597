import { closeSync, fstatSync, ftruncateSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import type { LoopEvent } from "../core/events.js";
import { compactRecord } from "./compact.js";

/**
 * The file under a record writer (records/writer.ts): appending one whole line at a time, and
 * compacting the file in place once it grows past its cap (records/compact.ts).
 */

/** A record file open for appending. */
export interface OpenRecord {
  readonly path: string;
  fd: number;
  /** Bytes in the file, as far as its writer knows (notes by scripts come on top). */
  bytes: number;
}

export function openRecord(path: string): OpenRecord {
  const fd = openSync(path, "a", 0o600);
  return { path, fd, bytes: fstatSync(fd).size };
}

/**
 * One line, whole or not at all: a write cut short by a full disk is taken back (the file is
 * truncated to where it was), so that the record stays one JSON object per line.
 */
export function appendWhole(file: OpenRecord, line: string): void {
  const data = Buffer.from(`${line}\n`);
  const written = writeSync(file.fd, data);
  if (written < data.length) {
    ftruncateSync(file.fd, fstatSync(file.fd).size - written);
    throw Object.assign(new Error("no space left on device"), { code: "ENOSPC" });
  }
  file.bytes += written;
}

/** Compacts the file; a disk too full for the compacted copy leaves it as it is, to try again later. */
export function compactOrWait(file: OpenRecord, maxBytes: number, last: LoopEvent): void {
  try {
    compact(file, maxBytes, last);
  } catch {
    try {
      unlinkSync(compactPath(file));
    } catch {
      // Never made.
    }
  }
}

function compact(file: OpenRecord, maxBytes: number, last: LoopEvent): void {
  const size = fstatSync(file.fd).size; // scripts' notes included
  if (size <= maxBytes) {
    file.bytes = size;
    return;
  }
  const text = compactRecord(readFileSync(file.path, "utf8"), maxBytes, { v: 1, time: last.time, run: last.run });
  const temp = compactPath(file);
  writeFileSync(temp, text, { mode: 0o600 });
  renameSync(temp, file.path);
  closeSync(file.fd);
  file.fd = openSync(file.path, "a", 0o600);
  file.bytes = Buffer.byteLength(text);
}

function compactPath(file: OpenRecord): string {
  return `${file.path}.${process.pid}.compact`;
}
