// node:fs on first use (lazy-fs.ts): output() in a script writes through this.
import { lazyFs } from "./lazy-fs.js";

/**
 * Writes all of `text` to descriptor `fd` synchronously, so that a process exit right after loses
 * none of it. `fd` can be a non-blocking pipe (EAGAIN) whose reader is slower than we are: then it
 * waits a millisecond and goes on. Any other error (EPIPE: the reader is gone) is thrown.
 */
export function writeAllSync(fd: number, text: string | Uint8Array): void {
  const bytes = typeof text === "string" ? Buffer.from(text, "utf8") : text;
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += lazyFs().writeSync(fd, bytes, offset, bytes.length - offset);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
    }
  }
}
