import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, openSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Socket } from "node:net";
import type { Readable } from "node:stream";
import { isBun } from "./detect.js";
import { groupAlive } from "./process-group.js";
import { openStdoutPipe, type StdoutPipe } from "./stdout-pipe.js";
import { noteScriptStderr, stderrKind, writeStderr } from "./stderr.js";

/**
 * A script's stderr when loopx's own is a pipe: a pipe of its own, read by loopx and forwarded to
 * loopx's stderr as it comes (so that loopx knows whether it ended with a newline, stderr.ts).
 * Elsewhere (a terminal, a file, /dev/null) the script writes to loopx's stderr directly.
 */
interface StderrRelay {
  /** The script's fd 2. */
  fd: number;
  /** Resolves once everything the script's group wrote has been forwarded (see settle). */
  settled: Promise<void>;
  /** The script has exited: settle once EOF is read, or once its group is gone and all is quiet. */
  settle(pgid: number | undefined): void;
  /** loopx's end of a relay whose script never started. */
  abandon(): void;
}

/**
 * Reads `fd` to its end, calling `onData` per chunk and `onClose` once. `detach` lets loopx go on
 * without waiting for an end that a stray process may delay for ever: under Node the read goes on
 * without keeping the process alive; under Bun (whose net.Socket does not read a FIFO descriptor)
 * it stops.
 */
function readDescriptor(fd: number, onData: (chunk: Uint8Array) => void, onClose: (sawEnd: boolean) => void): { detach(): void; destroy(): void } {
  if (!isBun) {
    // One reused buffer (`onread`): 100 MB streamed through costs no memory growth, where a fresh
    // 64 KiB Buffer per read grows V8's young generation by tens of MB.
    const buffer = Buffer.allocUnsafe(64 * 1024);
    const callback = (n: number, chunk: Uint8Array) => {
      onData(chunk.subarray(0, n));
      return true;
    };
    const socket = new Socket({ fd, readable: true, writable: false, onread: { buffer, callback } });
    let sawEnd = false;
    socket.on("error", () => undefined);
    socket.on("end", () => (sawEnd = true));
    socket.on("close", () => onClose(sawEnd));
    return { detach: () => void socket.unref(), destroy: () => void socket.destroy() };
  }
  const bun = (globalThis as unknown as { Bun: BunGlobal }).Bun;
  const reader = bun.file(fd).stream().getReader();
  let cancelled = false;
  void (async () => {
    let sawEnd = false;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        onData(value);
      }
      sawEnd = !cancelled;
    } catch {
      // a read error ends the relay like an end of file
    } finally {
      try {
        closeSync(fd);
      } catch {
        // already closed
      }
      onClose(sawEnd);
    }
  })();
  const cancel = () => {
    cancelled = true;
    void reader.cancel().catch(() => undefined);
  };
  return { detach: cancel, destroy: cancel };
}

function openStderrRelay(): StderrRelay | undefined {
  if (stderrKind() !== "pipe") {
    noteScriptStderr();
    return undefined;
  }
  const pipe: StdoutPipe | undefined = openStdoutPipe();
  if (!pipe) return undefined;
  const chunks: unknown[] = [];
  let closed = false;
  let stopWatching: (() => void) | undefined;
  let settle!: () => void;
  const settled = new Promise<void>((resolve) => (settle = resolve));
  const reading = readDescriptor(
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
      // A process that left the group (a daemon) may hold the pipe for ever: loopx goes on once
      // the group is gone and nothing more arrives.
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

/**
 * Called once the script itself has exited while its stdout is still open: as long as a process
 * of its group lives, the spec's "read stdout to the end" holds; once the whole group is gone,
 * whatever still holds the pipe has left the group (a setsid child, a daemon) and may hold it for
 * ever, so reading stops with what was written so far (once nothing more arrives: `chunks` has
 * not grown for one interval). Returns a cancel for when stdout ends.
 */
function stopReadingOnceGroupGone(pgid: number, chunks: unknown[], stopReading: () => void): () => void {
  let seen = chunks.length;
  const timer = setInterval(() => {
    const quiet = chunks.length === seen;
    seen = chunks.length;
    if (quiet && !groupAlive(pgid)) {
      clearInterval(timer);
      stopReading();
    }
  }, 50);
  return () => clearInterval(timer);
}

/** What a script process needs: nothing about loops, only how to start it. */
export interface SpawnSpec {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string | undefined>;
  /** Bytes for the child's stdin; undefined means empty stdin (spec §6.7). */
  stdin?: string;
}

export interface ScriptExit {
  /** Exit code, or null when the process was killed by a signal. */
  code: number | null;
  signal: string | null;
  /** Everything the process wrote to stdout. */
  stdout: Buffer;
  /** Set when the process could not be started at all (missing interpreter, missing cwd, ...). */
  spawnError?: Error;
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
 * Starts a script as the leader of a new process group with stdout captured and stderr inherited
 * (streamed live, unbuffered). The one place that knows Bun from Node for spawning.
 */
export function spawnScript(spec: SpawnSpec): ScriptProcess {
  return isBun ? spawnWithBun(spec) : spawnWithNode(spec);
}

function failed(error: unknown): ScriptProcess {
  const spawnError = error instanceof Error ? error : new Error(String(error));
  return { pid: undefined, done: Promise.resolve({ code: null, signal: null, stdout: Buffer.alloc(0), spawnError }), stopReading() {} };
}

/**
 * A read-only fd of an already-unlinked temp file holding `data`, for a child's stdin. Node's
 * "pipe" stdio is a socketpair, on which `cat /dev/stdin` fails (ENXIO); a file also never blocks
 * loopx on a script that does not read its input, and leaves nothing on disk.
 */
function stdinFile(data: string): number {
  const path = join(tmpdir(), `loopx-stdin-${process.pid}-${randomBytes(6).toString("hex")}`);
  writeFileSync(path, data, { mode: 0o600, flag: "wx" });
  try {
    return openSync(path, "r");
  } finally {
    unlinkSync(path);
  }
}

function spawnWithNode(spec: SpawnSpec): ScriptProcess {
  let child;
  let stdinFd: number | undefined;
  const pipe = openStdoutPipe();
  const relay = openStderrRelay();
  try {
    stdinFd = spec.stdin === undefined ? undefined : stdinFile(spec.stdin);
    child = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      env: spec.env,
      detached: true, // new session and process group: signals can reach the whole tree
      stdio: [stdinFd ?? "ignore", pipe?.write ?? "pipe", relay?.fd ?? "inherit"],
    });
  } catch (error) {
    if (pipe) {
      closeSync(pipe.read);
      pipe.release(true);
    }
    relay?.abandon();
    return failed(error);
  } finally {
    if (stdinFd !== undefined) closeSync(stdinFd); // the child holds its own copy
    if (pipe) closeSync(pipe.write);
    if (relay) closeSync(relay.fd);
  }
  const stdout: Readable = pipe ? new Socket({ fd: pipe.read, readable: true, writable: false }) : child.stdout!;
  const done = new Promise<ScriptExit>((resolve) => {
    const chunks: Buffer[] = [];
    let spawnError: Error | undefined;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let sawEnd = false;
    let closed = false;
    let stopWatching: (() => void) | undefined;
    const finish = () => {
      if (!exit || !closed) return;
      stopWatching?.();
      pipe?.release(sawEnd);
      const result = { code: exit.code, signal: exit.signal, stdout: Buffer.concat(chunks), spawnError };
      if (relay) void relay.settled.then(() => resolve(result));
      else resolve(result);
    };
    stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    stdout.on("end", () => (sawEnd = true));
    stdout.on("error", () => undefined); // a read error ends the capture like an end of file
    stdout.on("close", () => {
      closed = true;
      finish();
    });
    child.on("error", (error) => {
      spawnError = error;
    });
    child.on("exit", () => {
      relay?.settle(child.pid);
      if (!closed && child.pid !== undefined) stopWatching = stopReadingOnceGroupGone(child.pid, chunks, () => stdout.destroy());
    });
    // The child's 'close' comes after its exit (and, with the runtime's pipe, after stdout's end).
    child.on("close", (code, signal) => {
      exit = { code, signal };
      finish();
    });
  });
  return { pid: child.pid, done, stopReading: () => stdout.destroy() };
}

interface BunSubprocess {
  pid: number;
  stdout: ReadableStream<Uint8Array> | null | undefined;
  exited: Promise<number>;
  exitCode: number | null;
  signalCode: string | null;
}
interface BunGlobal {
  spawn(options: Record<string, unknown>): BunSubprocess;
  file(fd: number): { stream(): ReadableStream<Uint8Array> };
}

function spawnWithBun(spec: SpawnSpec): ScriptProcess {
  const bun = (globalThis as unknown as { Bun: BunGlobal }).Bun;
  let proc: BunSubprocess;
  const pipe = openStdoutPipe();
  const relay = openStderrRelay();
  try {
    proc = bun.spawn({
      cmd: [spec.command, ...spec.args],
      cwd: spec.cwd,
      env: spec.env,
      detached: true, // new session and process group (pgid = pid)
      stdin: spec.stdin === undefined ? "ignore" : Buffer.from(spec.stdin),
      stdout: pipe?.write ?? "pipe",
      stderr: relay?.fd ?? "inherit",
    });
  } catch (error) {
    if (pipe) {
      closeSync(pipe.read);
      pipe.release(true);
    }
    relay?.abandon();
    return failed(error);
  } finally {
    if (pipe) closeSync(pipe.write); // the child holds its own copy
    if (relay) closeSync(relay.fd);
  }
  // Read chunk by chunk (not `new Response(stdout)`) so that stopReading() can cancel the read
  // and close loopx's end of the pipe: a pending read would keep the process alive.
  const reader = (pipe ? bun.file(pipe.read).stream() : proc.stdout!).getReader();
  const chunks: Uint8Array[] = [];
  let ended = false;
  let cancelled = false;
  const readAll = async (): Promise<void> => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
      }
      // A cancelled read ends as "done" too, but that is no end of file: a writer may remain.
      ended = !cancelled;
    } finally {
      if (pipe) {
        closeSync(pipe.read);
        pipe.release(ended);
      }
    }
  };
  const stopReading = () => {
    cancelled = true;
    void reader.cancel().catch(() => undefined);
  };
  const done = (async (): Promise<ScriptExit> => {
    const reading = readAll();
    await proc.exited;
    relay?.settle(proc.pid);
    if (!ended) {
      const stopWatching = stopReadingOnceGroupGone(proc.pid, chunks, stopReading);
      await reading.finally(stopWatching);
    }
    await reading;
    await relay?.settled;
    return { code: proc.signalCode ? null : proc.exitCode, signal: proc.signalCode, stdout: Buffer.concat(chunks) };
  })().catch((error: unknown) => ({ code: null, signal: null, stdout: Buffer.alloc(0), spawnError: error as Error }));
  return { pid: proc.pid, done, stopReading };
}
