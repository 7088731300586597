import { execFileSync } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ownDescriptorPath } from "../os/procfs.js";

/**
 * A real pipe for a script's stdout. Node's and Bun's "pipe" stdio is a socketpair, and on Linux
 * opening /dev/stdout (a procfs link to fd 1) on a socket fails with ENXIO — `echo x > /dev/stdout`,
 * `tee /dev/stdout`, `cat > /dev/fd/1` all break. Neither runtime can call pipe(2), so loopx uses
 * a FIFO: created once (mkfifo, one process start for two), held by an O_PATH descriptor and unlinked at
 * once (nothing stays on disk, whatever happens to loopx), and reopened through its own
 * descriptor's path (procfs.ts ownDescriptorPath) for each script: two open(2) calls per script, a fresh pipe each time.
 *
 * A FIFO is reused only after its last writer closed it (EOF was read): then the kernel has freed
 * the pipe, and the next open starts an empty one. One that a stray process may still hold open is
 * dropped. Concurrent runs in one process take different FIFOs. Elsewhere than Linux (macOS opens
 * /dev/fd/1 by dup, which works on sockets), or without mkfifo, scripts keep the runtime's pipe.
 */

const O_PATH = 0o10000000;
const MKFIFO = ["/usr/bin/mkfifo", "/bin/mkfifo", "mkfifo"];
let unavailable = process.platform !== "linux";
const free: number[] = [];

export interface StdoutPipe {
  /** loopx's end, opened non-blocking. */
  read: number;
  /** The script's stdout; loopx closes its copy once the script has started. */
  write: number;
  /** Gives the FIFO back: `reusable` once EOF was read (no writer left), else it is dropped. */
  release(reusable: boolean): void;
}

/**
 * Two FIFOs from one mkfifo start (the first is returned, the second kept free): a run whose
 * stderr is a pipe takes two, one for the script's stdout and one for its stderr relay.
 */
function createFifo(): number | undefined {
  const dir = mkdtempSync(join(tmpdir(), "loopx-stdout-"));
  try {
    const paths = [join(dir, "fifo-1"), join(dir, "fifo-2")];
    for (const mkfifo of MKFIFO) {
      try {
        execFileSync(mkfifo, ["-m", "600", ...paths], { stdio: "ignore" });
      } catch {
        continue; // the next candidate
      }
      const [first, second] = paths.map((path) => openSync(path, O_PATH));
      free.push(second as number);
      return first;
    }
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A fresh pipe for one script's stdout, or undefined where loopx keeps the runtime's own. */
export function openStdoutPipe(): StdoutPipe | undefined {
  if (unavailable) return undefined;
  let fifo = free.pop();
  try {
    fifo ??= createFifo();
  } catch {
    fifo = undefined;
  }
  if (fifo === undefined) {
    unavailable = true;
    return undefined;
  }
  const path = ownDescriptorPath(fifo);
  let read: number | undefined;
  try {
    read = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const write = openSync(path, constants.O_WRONLY);
    const fd = fifo;
    let released = false;
    return {
      read,
      write,
      release(reusable) {
        if (released) return;
        released = true;
        if (reusable) free.push(fd);
        else closeSync(fd);
      },
    };
  } catch {
    if (read !== undefined) closeSync(read);
    closeSync(fifo);
    return undefined;
  }
}
