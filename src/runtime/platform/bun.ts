/** Bun: Bun.spawn for scripts, Bun itself for JS/TS, Bun.gc for long loops. */
import { closeSync, readFileSync } from "node:fs";
import { delimiter } from "node:path";
import { StdoutCapture } from "../stdout-capture.js";
import { boundedWait, capturedStdout, failedSpawn, NO_STDOUT, stopReadingOnceGroupGone, watchHeldStdout, type ScriptExit, type ScriptProcess, type SpawnSpec, type Watcher } from "../spawn.js";
import { stdinFile } from "../stdin-file.js";
import { scriptStderr, type DescriptorReader } from "../stderr-relay.js";
import { openStdoutPipe, type StdoutPipe } from "../stdout-pipe.js";
import { distPath } from "./runtime.js";
import type { JsLauncher, Platform } from "./types.js";
import type { Env } from "../../core/env.js";


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
  gc(force: boolean): void;
}

const bun = () => (globalThis as unknown as { Bun: BunGlobal }).Bun;

/**
 * Bun hands each read over in a fresh array that loopx copies (a capture) or writes on (the
 * stderr relay) and lets go; under a huge output they pile up faster than Bun collects them (~150
 * MB more for a 300 MB stdout, ~20 MB for 100 MB through the relay). A full collection after each
 * few MiB read (a few ms: the arrays are all there is to collect) keeps loopx near its own size;
 * an output under that never causes one. The capture holds the output anyway (8 MiB); the relay
 * holds nothing, so its garbage is all its growth (4 MiB: +12–15 MB at 8, +6–9 at 2 for 100 MB).
 */
const COLLECT_EVERY = { capture: 8 * 1024 * 1024, relay: 4 * 1024 * 1024 };

/** A full collection when a read took a stream from `before` bytes past a multiple of `every`. */
function collectAfterRead(before: number, after: number, every: number): void {
  if (Math.floor(after / every) !== Math.floor(before / every)) bun().gc(true);
}

/**
 * A pipe's read end through Bun's file stream (Bun's net.Socket does not read a FIFO descriptor).
 * A pending read would keep the process alive, so detaching stops reading.
 */
const readDescriptor: DescriptorReader = (fd, onData, onClose) => {
  const reader = bun().file(fd).stream().getReader();
  let cancelled = false;
  let bytes = 0;
  void (async () => {
    let sawEnd = false;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        onData(value);
        const before = bytes;
        bytes += value.length;
        collectAfterRead(before, bytes, COLLECT_EVERY.relay);
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
};

/**
 * A stdin over 1 M characters (a goto's huge result) goes through a temp file written a slice at a
 * time (stdin-file.ts), as under Node: Bun would hold it encoded whole, and again in its memfd.
 * Smaller ones stay a Buffer, which costs Bun no file.
 */
const LARGE_STDIN = 1024 * 1024;

/**
 * The script's stdout into a capture. Read chunk by chunk (not `new Response(stdout)`) so that
 * stopReading() can cancel the read and close loopx's end of the pipe: a pending read would keep
 * the process alive. `ended`: whether readAll() saw the end of file.
 */
function stdoutReader(stream: ReadableStream<Uint8Array>, pipe: StdoutPipe | undefined) {
  const reader = stream.getReader();
  const capture = new StdoutCapture();
  let ended = false;
  let cancelled = false;
  const readAll = async (): Promise<void> => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const before = capture.bytes;
        capture.push(value);
        collectAfterRead(before, capture.bytes, COLLECT_EVERY.capture);
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
  return { capture, readAll, stopReading, ended: () => ended };
}

function spawnScript(spec: SpawnSpec): ScriptProcess {
  let proc: BunSubprocess;
  const pipe = openStdoutPipe();
  const stderr = scriptStderr(readDescriptor);
  let stdinFd: number | undefined;
  try {
    stdinFd = spec.stdin !== undefined && (typeof spec.stdin !== "string" || spec.stdin.length > LARGE_STDIN) ? stdinFile(spec.stdin) : undefined;
    proc = bun().spawn({
      cmd: [spec.command, ...spec.args],
      cwd: spec.cwd,
      env: spec.env,
      detached: true, // new session and process group (pgid = pid)
      stdin: spec.stdin === undefined ? "ignore" : (stdinFd ?? Buffer.from(spec.stdin as string)),
      stdout: pipe?.write ?? "pipe",
      stderr: stderr.fd,
    });
  } catch (error) {
    stderr.abandon();
    return failedSpawn(error, pipe);
  } finally {
    if (pipe) closeSync(pipe.write); // the child holds its own copy
    if (stderr.fd !== "inherit") closeSync(stderr.fd);
    if (stdinFd !== undefined) closeSync(stdinFd);
  }
  const { capture, readAll, stopReading, ended } = stdoutReader(pipe ? bun().file(pipe.read).stream() : proc.stdout!, pipe);
  const done = (async (): Promise<ScriptExit> => {
    const reading = readAll();
    await proc.exited;
    stderr.settle(proc.pid);
    if (!ended()) {
      const stopWatching = stopReadingOnceGroupGone(proc.pid, () => capture.reads, stopReading);
      const stopHeldWatch = watchHeldStdout(pipe?.read, spec.onStdoutHeld);
      await reading.finally(() => {
        stopWatching();
        stopHeldWatch();
      });
    }
    await reading;
    // The script's last stderr is forwarded before loopx says anything about its end.
    await stderr.settled;
    const code = proc.signalCode ? null : proc.exitCode;
    const stderrTail = code !== 0 ? stderr.tail() : undefined;
    return { code, signal: proc.signalCode, ...capturedStdout(capture), ...(stderrTail ? { stderrTail } : {}) };
  })().catch((error: unknown) => ({ code: null, signal: null, stdout: NO_STDOUT, spawnError: error as Error }));
  return { pid: proc.pid, done, stopReading };
}

/**
 * Under Bun (and the standalone binary) a synchronous full collection every 1,000 iterations keeps
 * a long CLI loop's resident memory flat (see platform/node.ts for why). In between, a quick
 * (asynchronous) collection every 50: Bun closes the memfd that carried a script's piped stdin only
 * when its Subprocess object is collected, and between full collections Bun's own did not always
 * come soon enough (83 such fds were seen open at once in a 10,000-iteration goto loop).
 */
function createHeapKeeper(): () => void {
  let count = 0;
  return () => {
    count++;
    if (count % 1000 === 0) bun().gc(true);
    else if (count % 50 === 0) bun().gc(false);
  };
}

/**
 * JSX the way tsx compiles it under Node: the classic transform (`React.createElement`,
 * `React.Fragment`), where Bun would default to the automatic runtime and import
 * `react/jsx-dev-runtime`. A flag costs no file read; a workflow's own tsconfig.json `jsx`,
 * `jsxFactory` and `jsxFragmentFactory` still win over it (Bun reads the tsconfig.json of the
 * script's cwd, the workflow directory — as tsx does), and so do `@jsx`/`@jsxRuntime` pragmas.
 * `--no-install`: a missing package is a resolution error, never a registry download.
 */
export const BUN_SCRIPT_FLAGS = ["--no-install", "--jsx-runtime", "classic"];

export function prependNodePath(env: Env, dir: string): string {
  return env.NODE_PATH ? `${dir}${delimiter}${env.NODE_PATH}` : dir;
}

/** True unless the script's source certainly never mentions require, module or exports. */
export function mayUseCommonJs(path: string): boolean {
  try {
    return /\b(?:require|module|exports)\b/.test(readFileSync(path, "utf8"));
  } catch {
    return true;
  }
}

/**
 * Bun itself, `import "loopx"` through NODE_PATH to dist/node-path/ (a two-file package holding
 * the script-facing entry, script.ts, bundled), and a preload that keeps scripts ESM-only.
 */
function jsLauncher(): JsLauncher {
  const preload = distPath("runtime/loader/bun-preload.js");
  const nodePath = distPath("node-path");
  return {
    command: process.execPath,
    // The ESM-only guard costs ~3 ms per start; a script that never names require, module or
    // exports has nothing for it to catch and starts as raw Bun does. Any preload costs a Bun
    // script start 0.2-0.7 ms (measured), so loopx's NODE_PATH entry is not taken out of such a
    // script's environment here (it is in the binary, which preloads anyway; README says so).
    args: (path) => [...BUN_SCRIPT_FLAGS, ...(mayUseCommonJs(path) ? ["--preload", preload] : []), path],
    extraEnv: (env) => ({ NODE_PATH: prependNodePath(env, nodePath) }),
  };
}

interface BunWatcherProcess {
  stdin: { write(data: string): number; flush(): unknown; end(): unknown; unref?(): void };
  pid: number;
  unref(): void;
  exited: Promise<number>;
}

/** Bun.spawn: node:child_process costs Bun ~10-40 ms to load and spawn with. */
function spawnWatcher(command: string, args: string[], env: Env): Watcher {
  const bun = (globalThis as unknown as { Bun: { spawn(options: Record<string, unknown>): BunWatcherProcess } }).Bun;
  const proc = bun.spawn({ cmd: [command, ...args], cwd: "/", env, detached: true, stdin: "pipe", stdout: "ignore", stderr: "ignore" });
  proc.unref();
  proc.stdin.unref?.();
  let open = true;
  return {
    pid: proc.pid,
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
    exited: (withinMs) => boundedWait(proc.exited, withinMs),
  };
}

export const bunPlatform: Platform = { spawnScript, spawnWatcher, jsLauncher, createHeapKeeper };
