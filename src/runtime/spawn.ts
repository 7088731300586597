import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, openSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Socket } from "node:net";
import type { Readable } from "node:stream";
import { isBun } from "./detect.js";
import { groupAlive } from "./process-group.js";
import { openStdoutPipe } from "./stdout-pipe.js";

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
  try {
    stdinFd = spec.stdin === undefined ? undefined : stdinFile(spec.stdin);
    child = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      env: spec.env,
      detached: true, // new session and process group: signals can reach the whole tree
      stdio: [stdinFd ?? "ignore", pipe?.write ?? "pipe", "inherit"],
    });
  } catch (error) {
    if (pipe) {
      closeSync(pipe.read);
      pipe.release(true);
    }
    return failed(error);
  } finally {
    if (stdinFd !== undefined) closeSync(stdinFd); // the child holds its own copy
    if (pipe) closeSync(pipe.write);
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
      resolve({ code: exit.code, signal: exit.signal, stdout: Buffer.concat(chunks), spawnError });
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
  try {
    proc = bun.spawn({
      cmd: [spec.command, ...spec.args],
      cwd: spec.cwd,
      env: spec.env,
      detached: true, // new session and process group (pgid = pid)
      stdin: spec.stdin === undefined ? "ignore" : Buffer.from(spec.stdin),
      stdout: pipe?.write ?? "pipe",
      stderr: "inherit",
    });
  } catch (error) {
    if (pipe) {
      closeSync(pipe.read);
      pipe.release(true);
    }
    return failed(error);
  } finally {
    if (pipe) closeSync(pipe.write); // the child holds its own copy
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
    if (!ended) {
      const stopWatching = stopReadingOnceGroupGone(proc.pid, chunks, stopReading);
      await reading.finally(stopWatching);
    }
    await reading;
    return { code: proc.signalCode ? null : proc.exitCode, signal: proc.signalCode, stdout: Buffer.concat(chunks) };
  })().catch((error: unknown) => ({ code: null, signal: null, stdout: Buffer.alloc(0), spawnError: error as Error }));
  return { pid: proc.pid, done, stopReading };
}

/** A process started to watch loopx from outside: lines go to its stdin, nothing comes back. */
export interface Watcher {
  /** Writes `line` and a newline now (in one write while the pipe has room); false once it is gone. */
  send(line: string): boolean;
  /** Closes loopx's end of the pipe. */
  close(): void;
}

/**
 * Starts `command args` as the leader of a new session (no terminal), in `/`, with stdout and
 * stderr on /dev/null and stdin a pipe whose write end only this process holds (close-on-exec, so
 * no script inherits it): its end of file tells the watcher that loopx is gone. Neither the child
 * nor the pipe keeps this process alive. Bun's own spawn is used under Bun (node:child_process
 * costs Bun ~10-40 ms to load and spawn with).
 */
export function spawnWatcher(command: string, args: string[], env: Record<string, string | undefined>, onError: (error: Error) => void): Watcher {
  if (isBun) {
    const bun = (globalThis as unknown as { Bun: { spawn(options: Record<string, unknown>): { stdin: { write(data: string): number; flush(): unknown; end(): unknown; unref?(): void }; unref(): void } } }).Bun;
    const proc = bun.spawn({ cmd: [command, ...args], cwd: "/", env, detached: true, stdin: "pipe", stdout: "ignore", stderr: "ignore" });
    proc.unref();
    proc.stdin.unref?.();
    let open = true;
    return {
      send(line) {
        if (!open) return false;
        try {
          proc.stdin.write(`${line}\n`);
          proc.stdin.flush();
          return true;
        } catch {
          open = false;
          return false;
        }
      },
      close() {
        if (!open) return;
        open = false;
        try {
          proc.stdin.end();
        } catch {
          // gone
        }
      },
    };
  }
  const child = spawn(command, args, { cwd: "/", env, detached: true, stdio: ["pipe", "ignore", "ignore"] });
  child.on("error", onError);
  child.stdin!.on("error", () => undefined);
  child.unref();
  (child.stdin as unknown as { unref?(): void }).unref?.();
  return {
    send(line) {
      if (child.stdin!.destroyed) return false;
      child.stdin!.write(`${line}\n`); // libuv writes at once when nothing is queued
      return true;
    },
    close: () => child.stdin!.end(),
  };
}
