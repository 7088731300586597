import { closeSync, openSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { utf8Slices, type ScriptInput } from "../core/stdout-text.js";
import { writeAllSync } from "../os/write-all.js";
import { randomBytes } from "../os/random.js";

/** This process's part of every stdin file's name: random once, then a count (no read per iteration). */
let namePrefix: string | undefined;
let named = 0;

/**
 * A read-only fd of an already-unlinked temp file holding `data`, for a child's stdin (spec §6.7).
 * Node's "pipe" stdio is a socketpair, on which `cat /dev/stdin` fails (ENXIO); a file also never
 * blocks loopx on a script that does not read its input, and leaves nothing on disk. A large stdin
 * (a goto's result of hundreds of MB) is written a piece at a time: a text encoded 1 MiB at a time
 * (utf8Slices), a result still held as bytes straight from them — never a second copy of it.
 */
export function stdinFile(data: ScriptInput): number {
  namePrefix ??= `loopx-stdin-${process.pid}-${Buffer.from(randomBytes(6)).toString("hex")}`;
  const path = join(tmpdir(), `${namePrefix}-${++named}`);
  const fd = openSync(path, "wx", 0o600);
  try {
    for (const piece of typeof data === "string" ? utf8Slices(data) : data.utf8Chunks()) writeAllSync(fd, piece);
    return openSync(path, "r");
  } finally {
    closeSync(fd);
    unlinkSync(path);
  }
}
