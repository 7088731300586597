import { closeSync } from "node:fs";
import { groupAlive } from "../os/process-group.js";
import type { StdoutPipe } from "./stdout-pipe.js";
import type { StdoutCapture } from "./stdout-capture.js";
import { stdoutOfText, type ScriptInput, type StdoutText } from "../core/stdout-text.js";
import { processesHolding } from "../os/holders.js";
import type { FoundProcess } from "../os/procfs.js";

/**
 * What a script process is, whatever runtime starts it (platform/node.ts, platform/bun.ts): how it
 * is described, what it gives back, and the helpers both spawners share.
 */

/** What a script process needs: nothing about loops, only how to start it. */
export interface SpawnSpec {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string | undefined>;
  /** Bytes for the child's stdin; undefined means empty stdin (spec §6.7). */
  stdin?: ScriptInput;
  /**
   * Called once if the child's own process has exited but its stdout is still open STDOUT_HELD_MS
   * later (a background process holds it), with the processes holding it (Linux; else none).
   */
  onStdoutHeld?: (holders: FoundProcess[]) => void;
}

export interface ScriptExit {
  /** Exit code, or null when the process was killed by a signal. */
  code: number | null;
  signal: string | null;
  /** Everything the process wrote to stdout (nothing once it wrote more than the cap). */
  stdout: StdoutText;
  /** Set when the process wrote more than loopx's stdout cap (stdout-capture.ts): how much, and the cap. */
  stdoutOverCap?: { bytes: number; cap: number };
  /** Set when the process could not be started at all (missing interpreter, missing cwd, ...). */
  spawnError?: Error;
  /** A failed script's last stderr lines, where loopx could see them (stderr-relay.ts). */
  stderrTail?: string;
}

export interface ScriptProcess {
  /** Pid of the child, which leads its own process group (pgid = pid); undefined if spawn failed. */
  pid: number | undefined;
  /** Resolves when the child has exited and its stdout has been read to the end. Never rejects. */
  done: Promise<ScriptExit>;
  /**
   * Stops reading stdout: `done` then resolves once the child has exited, without waiting for an
   * end of stdout that a process outside the group (a stray holding the pipe) may delay forever.
   */
  stopReading(): void;
}

/**
 * Called once the script itself has exited while its stdout is still open: as long as a process
 * of its group lives, the spec's "read stdout to the end" holds; once the whole group is gone,
 * whatever still holds the pipe has left the group (a setsid child, a daemon) and may hold it for
 * ever, so reading stops with what was written so far (once nothing more arrives: `reads()` has
 * not grown for one interval). Returns a cancel for when stdout ends.
 */
export function stopReadingOnceGroupGone(pgid: number, reads: () => number, stopReading: () => void): () => void {
  let seen = reads();
  const timer = setInterval(() => {
    const quiet = reads() === seen;
    seen = reads();
    if (quiet && !groupAlive(pgid)) {
      clearInterval(timer);
      stopReading();
    }
  }, 50);
  return () => clearInterval(timer);
}

/** How long a script's stdout may stay open after its own process exited before loopx says who holds it. */
export const STDOUT_HELD_MS = 2000;

/**
 * Once the child's own process has exited with its stdout (loopx's end: `fd`) still open: after
 * STDOUT_HELD_MS, `onHeld` is told who holds it. Returns a cancel for when stdout ends. Nothing
 * where loopx has no descriptor of its own to look for (no FIFO) or nobody asked.
 */
export function watchHeldStdout(fd: number | undefined, onHeld: SpawnSpec["onStdoutHeld"]): () => void {
  if (fd === undefined || !onHeld) return () => {};
  const timer = setTimeout(() => onHeld(processesHolding(fd)), STDOUT_HELD_MS);
  return () => clearTimeout(timer);
}

/** A script process that could not be started. */
export function failedSpawn(error: unknown, pipe: StdoutPipe | undefined): ScriptProcess {
  if (pipe) {
    // Nothing was started on it: loopx's read end closes and the FIFO can serve the next script.
    closeSync(pipe.read);
    pipe.release(true);
  }
  const spawnError = error instanceof Error ? error : new Error(String(error));
  return { pid: undefined, done: Promise.resolve({ code: null, signal: null, stdout: NO_STDOUT, spawnError }), stopReading() {} };
}

/** A process started to watch loopx from outside (the run's guardian): lines go to its stdin. */
export interface Watcher {
  /** Its process id (undefined if it could not be started). */
  readonly pid: number | undefined;
  /** Writes `line` and a newline now (one write while the pipe has room); false once it is gone. */
  send(line: string): boolean;
  /** Closes loopx's end of the pipe. */
  close(): void;
  /** Resolves when the watcher has exited, or after `withinMs` (the wait keeps this process alive). */
  exited(withinMs: number): Promise<void>;
}

/** Waits for `exited`, at most `ms` (a referenced timer: the process stays alive meanwhile). */
export function boundedWait(exited: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return Promise.race([exited.then(() => undefined, () => undefined), timeout]).finally(() => clearTimeout(timer));
}

/** The stdout of a script that wrote none, or whose stdout was not kept. */
export const NO_STDOUT: StdoutText = stdoutOfText("", 0);

/** The ScriptExit fields for what `capture` kept: the bytes, or how far over the cap they went. */
export function capturedStdout(capture: StdoutCapture): Pick<ScriptExit, "stdout" | "stdoutOverCap"> {
  if (capture.over) return { stdout: NO_STDOUT, stdoutOverCap: { bytes: capture.bytes, cap: capture.cap } };
  return { stdout: capture.take() };
}
