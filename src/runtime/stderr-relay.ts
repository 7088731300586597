import { STDERR_TAIL_BYTES, STDERR_TAIL_LINES } from "../core/events.js";
import { fs } from "../os/builtins.js";
import { stopReadingOnceGroupGone } from "./spawn.js";
import { noteScriptStderr, readStderrFile, stderrKind, writeStderr } from "../os/stderr.js";
import { openStdoutPipe } from "./stdout-pipe.js";

/**
 * A script's stderr, as loopx hands it over and sees it again. Never a change the script could
 * notice: on a terminal the script writes to it itself (its terminal is never taken away), into a
 * file too; only when loopx's own stderr is a pipe (CI, `2>&1 | tee`) does the script get a pipe
 * of its own that loopx reads and forwards as it comes — a pipe for a pipe. What loopx sees of it
 * serves two ends: its own lines start on a fresh line (stderr.ts), and a failed script's last
 * stderr lines go into the run record (`tail`): from the relay, or read back from the file.
 */
export interface ScriptStderr {
  /** The script's fd 2: a relay's write end (loopx closes its copy once started), or inherit. */
  fd: number | "inherit";
  /** Resolves once everything the script's group wrote has been forwarded (see settle). */
  settled: Promise<void>;
  /**
   * The script has exited: settles at the end of the pipe, or once its group is gone and nothing
   * more arrives (a process that left the group may hold the pipe for ever).
   */
  settle(pgid: number | undefined): void;
  /** loopx's end of a relay whose script never started. */
  abandon(): void;
  /** The last lines the script wrote, where loopx could see them; for a failed script's record. */
  tail(): string | undefined;
}

/**
 * Reads `fd` to its end, with `onData` per chunk and `onClose` once (`sawEnd`: the end of the pipe
 * was read). `detach` lets loopx go on without waiting for an end a stray may delay for ever;
 * `destroy` stops reading. Each runtime reads a descriptor its own way (platform/*.ts).
 */
export type DescriptorReader = (fd: number, onData: (chunk: Uint8Array) => void, onClose: (sawEnd: boolean) => void) => { detach(): void; destroy(): void };

/** The last STDERR_TAIL_LINES lines of `bytes`, within STDERR_TAIL_BYTES (a cut first line dropped). */
function lastLines(bytes: Buffer): string | undefined {
  let text = bytes.subarray(Math.max(0, bytes.length - STDERR_TAIL_BYTES)).toString("utf8");
  if (bytes.length > STDERR_TAIL_BYTES) text = text.slice(text.indexOf("\n") + 1);
  const lines = text.replace(/\n$/, "").split("\n").slice(-STDERR_TAIL_LINES);
  const joined = lines.join("\n");
  return joined.trim() === "" ? undefined : joined;
}

const INHERIT = { fd: "inherit" as const, settled: Promise.resolve(), settle() {}, abandon() {} };

/** The stderr arrangement for one script, chosen by what loopx's own stderr is. */
export function scriptStderr(read: DescriptorReader): ScriptStderr {
  const kind = stderrKind();
  if (kind === "terminal") {
    noteScriptStderr();
    return { ...INHERIT, tail: () => undefined };
  }
  if (kind === "file") return fileStderr();
  if (kind !== "pipe") return { ...INHERIT, tail: () => undefined };
  return relayedStderr(read) ?? { ...INHERIT, tail: () => undefined };
}

/** `2>file`: what the file gained while the script ran, read back when asked. */
function fileStderr(): ScriptStderr {
  const size = () => {
    try {
      return fs.fstatSync(2).size;
    } catch {
      return undefined;
    }
  };
  const from = size();
  return {
    ...INHERIT,
    tail() {
      const to = size();
      if (from === undefined || to === undefined || to <= from) return undefined;
      const length = Math.min(to - from, STDERR_TAIL_BYTES + 1);
      const bytes = readStderrFile(to - length, length);
      return bytes === undefined ? undefined : lastLines(bytes);
    },
  };
}

/** A pipe of the script's own, forwarded to loopx's stderr; its last bytes kept for `tail`. */
function relayedStderr(read: DescriptorReader): ScriptStderr | undefined {
  const pipe = openStdoutPipe();
  if (!pipe) return undefined;
  let reads = 0;
  // The last bytes only, in one buffer: 100 MB through the relay allocates nothing more.
  const kept = Buffer.alloc(STDERR_TAIL_BYTES + 1);
  let keptBytes = 0;
  let closed = false;
  let stopWatching: (() => void) | undefined;
  let settle!: () => void;
  const settled = new Promise<void>((resolve) => (settle = resolve));
  const reading = read(
    pipe.read,
    (chunk) => {
      reads++; // only counted, to see that it is quiet
      writeStderr(chunk);
      if (chunk.length >= kept.length) {
        kept.set(chunk.subarray(chunk.length - kept.length));
        keptBytes = kept.length;
      } else {
        const keep = Math.min(keptBytes, kept.length - chunk.length);
        kept.copyWithin(0, keptBytes - keep, keptBytes);
        kept.set(chunk, keep);
        keptBytes = keep + chunk.length;
      }
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
      stopWatching = stopReadingOnceGroupGone(pgid, () => reads, () => {
        reading.detach();
        settle();
      });
    },
    abandon() {
      reading.destroy();
    },
    tail() {
      return lastLines(kept.subarray(0, keptBytes));
    },
  };
}
