import { execFileSync } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { closeSync, constants, existsSync, fstatSync, mkdtempSync, openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ownDescriptorPath } from "../os/procfs.js";

/**
 * A real pipe for a script's stdout. Node's and Bun's "pipe" stdio is a socketpair, and on Linux
 * opening /dev/stdout (a procfs link to fd 1) on a socket fails with ENXIO — `echo x > /dev/stdout`,
 * `tee /dev/stdout`, `cat > /dev/fd/1` all break. Neither runtime can call pipe(2), so loopx uses
 * a FIFO: created once (mkfifo, one process start for two — made by the run's guardian shell where
 * it can, fifoDirForHelper), held by an O_PATH descriptor and unlinked at
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
const FIFO_NAMES = ["fifo-1", "fifo-2"];
let unavailable = process.platform !== "linux";
const free: number[] = [];
/** The directory in which another process of the run makes the next two FIFOs (fifoDirForHelper). */
let pending: string | undefined;

export interface StdoutPipe {
  /** loopx's end, opened non-blocking. */
  read: number;
  /** The script's stdout; loopx closes its copy once the script has started. */
  write: number;
  /** Gives the FIFO back: `reusable` once EOF was read (no writer left), else it is dropped. */
  release(reusable: boolean): void;
}

/** A private directory (0700) for two FIFOs. */
function fifoDir(): string {
  return mkdtempSync(join(tmpdir(), "loopx-stdout-"));
}

/**
 * The FIFOs made in `dir` (by this process or the helper), held by O_PATH descriptors on the free
 * list; `dir` is removed. Returns one of them, or undefined when none was made.
 */
function takeFifos(dir: string): number | undefined {
  try {
    for (const name of FIFO_NAMES) {
      let fd: number | undefined;
      try {
        fd = openSync(join(dir, name), O_PATH | constants.O_NOFOLLOW);
        if (fstatSync(fd).isFIFO()) free.push(fd);
        else closeSync(fd);
      } catch {
        if (fd !== undefined) closeSync(fd);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return free.pop();
}

/**
 * Two FIFOs from one mkfifo start (one is returned, the other kept free): a run whose stderr is a
 * pipe takes two, one for the script's stdout and one for its stderr relay.
 */
function createFifo(): number | undefined {
  const dir = fifoDir();
  const paths = FIFO_NAMES.map((name) => join(dir, name));
  for (const mkfifo of MKFIFO) {
    try {
      runToEnd([mkfifo, "-m", "600", ...paths]);
      break;
    } catch {
      // the next candidate
    }
  }
  return takeFifos(dir);
}

/**
 * Runs `argv` to its end, with no stdio; throws if it cannot start or fails. Under Bun by
 * Bun.spawnSync: node:child_process's execFileSync first builds its Node-compatible machinery,
 * which stayed in an idle run's memory (~1.4 MB alone; with cli/context.ts's lazy streams, ~1 MB
 * of an idle Bun run).
 */
function runToEnd(argv: string[]): void {
  const bun = (globalThis as unknown as { Bun?: { spawnSync(cmd: string[], options: object): { success: boolean } } }).Bun;
  if (bun === undefined) {
    execFileSync(argv[0]!, argv.slice(1), { stdio: "ignore" });
  } else if (!bun.spawnSync(argv, { stdio: ["ignore", "ignore", "ignore"] }).success) {
    throw new Error(`${argv[0]} failed`);
  }
}

/**
 * A private directory in which a shell this process starts anyway — the run's guardian — makes
 * the next two FIFOs (`mkfifo -m 600 <dir>/fifo-1 <dir>/fifo-2`), so that loopx need not start
 * mkfifo itself: under Node that start (a fork of the whole runtime) costs ~15 ms of CPU per run.
 * Undefined where no FIFO is needed (not Linux, FIFOs free already, one pending) and under Bun.
 * The run waits for them (helperFifosMade); the first script takes what is there and starts mkfifo
 * itself only if nothing is; the directory is removed then, or by dropFifoDir() (a run that started
 * no script), or by the helper once loopx is gone.
 */
export function fifoDirForHelper(): string | undefined {
  // Not under Bun: its spawnSync (vfork) of mkfifo costs little, and the first script, which Bun
  // reaches sooner, would mostly find the helper's FIFOs not made yet.
  if (unavailable || pending !== undefined || free.length > 0 || process.versions.bun !== undefined) return undefined;
  try {
    pending = fifoDir();
  } catch {
    return undefined;
  }
  return pending;
}

/** Resolves once the helper has said it is done with `dir` (the file `made` there), or after `withinMs`. */
export async function helperFifosMade(dir: string, withinMs: number): Promise<void> {
  const until = Date.now() + withinMs;
  while (pending === dir && !existsSync(join(dir, "made")) && Date.now() < until) await sleep(2);
}

/** Removes fifoDirForHelper()'s directory if no script took its FIFOs. */
export function dropFifoDir(dir: string): void {
  if (pending !== dir) return;
  pending = undefined;
  rmSync(dir, { recursive: true, force: true });
}

/** The helper's FIFOs, when a directory was given to it and no script has taken them yet. */
function adoptPending(): number | undefined {
  const dir = pending;
  if (dir === undefined) return undefined;
  pending = undefined;
  return takeFifos(dir);
}

/** A fresh pipe for one script's stdout, or undefined where loopx keeps the runtime's own. */
export function openStdoutPipe(): StdoutPipe | undefined {
  if (unavailable) return undefined;
  let fifo = free.pop();
  try {
    fifo ??= adoptPending() ?? createFifo();
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
