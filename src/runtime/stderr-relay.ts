import { stopReadingOnceGroupGone } from "./spawn.js";
import { noteScriptStderr, stderrKind, writeStderr } from "./stderr.js";
import { openStdoutPipe } from "./stdout-pipe.js";

/**
 * A script's stderr when loopx's own is a pipe (CI, `2>&1 | tee`): a pipe of its own, read by
 * loopx and forwarded to loopx's stderr as it comes, so that loopx knows whether it ended with a
 * newline (stderr.ts: loopx's lines start on a fresh line). A pipe for a pipe changes nothing a
 * script can see. On a terminal, into a file or /dev/null the script writes to loopx's stderr
 * itself (its terminal is never taken away from it).
 */
export interface StderrRelay {
  /** The script's fd 2 (loopx closes its copy once the script has started). */
  fd: number;
  /** Resolves once everything the script's group wrote has been forwarded (see settle). */
  settled: Promise<void>;
  /**
   * The script has exited: settles at the end of the pipe, or once its group is gone and nothing
   * more arrives (a process that left the group may hold the pipe for ever).
   */
  settle(pgid: number | undefined): void;
  /** loopx's end of a relay whose script never started. */
  abandon(): void;
}

/**
 * Reads `fd` to its end, with `onData` per chunk and `onClose` once (`sawEnd`: the end of the pipe
 * was read). `detach` lets loopx go on without waiting for an end a stray may delay for ever;
 * `destroy` stops reading. Each runtime reads a descriptor its own way (platform/*.ts).
 */
export type DescriptorReader = (fd: number, onData: (chunk: Uint8Array) => void, onClose: (sawEnd: boolean) => void) => { detach(): void; destroy(): void };

/** The relay for one script, or undefined where the script writes to loopx's stderr itself. */
export function openStderrRelay(read: DescriptorReader): StderrRelay | undefined {
  if (stderrKind() !== "pipe") {
    noteScriptStderr();
    return undefined;
  }
  const pipe = openStdoutPipe();
  if (!pipe) return undefined;
  const chunks: unknown[] = [];
  let closed = false;
  let stopWatching: (() => void) | undefined;
  let settle!: () => void;
  const settled = new Promise<void>((resolve) => (settle = resolve));
  const reading = read(
    pipe.read,
    (chunk) => {
      chunks.push(undefined); // only counted, to see that it is quiet
      writeStderr(chunk);
    },
    (sawEnd) => {
      closed = true;
      stopWatching?.();
      pipe.release(sawEnd);
      settle();
    },
  );
  return {
    fd: pipe.write,
    settled,
    settle(pgid) {
      if (closed) return;
      if (pgid === undefined) return reading.destroy();
      stopWatching = stopReadingOnceGroupGone(pgid, chunks, () => {
        reading.detach();
        settle();
      });
    },
    abandon() {
      reading.destroy();
    },
  };
}
