import { closeSync, openSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeAllSync } from "../os/write-all.js";

/** UTF-16 units written at a time: encoding a huge stdin whole would hold a second copy of it. */
const SLICE_UNITS = 1024 * 1024;

/**
 * A read-only fd of an already-unlinked temp file holding `data`, for a child's stdin (spec §6.7).
 * Node's "pipe" stdio is a socketpair, on which `cat /dev/stdin` fails (ENXIO); a file also never
 * blocks loopx on a script that does not read its input, and leaves nothing on disk. A large stdin
 * (a goto's result of hundreds of MB) is encoded and written 1 MiB at a time.
 */
export function stdinFile(data: string): number {
  const path = join(tmpdir(), `loopx-stdin-${process.pid}-${Buffer.from(crypto.getRandomValues(new Uint8Array(6))).toString("hex")}`);
  const fd = openSync(path, "wx", 0o600);
  try {
    for (let at = 0; at < data.length; ) {
      let end = Math.min(data.length, at + SLICE_UNITS);
      // A surrogate pair is never cut in two: each half alone would be written as U+FFFD.
      if (end < data.length && (data.charCodeAt(end - 1) & 0xfc00) === 0xd800) end--;
      writeAllSync(fd, data.slice(at, end));
      at = end;
    }
    return openSync(path, "r");
  } finally {
    closeSync(fd);
    unlinkSync(path);
  }
}
