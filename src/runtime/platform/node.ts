/** Node: child_process for scripts, loopx's module hooks for JS/TS, V8 tuning for long loops. */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync } from "node:fs";
import { Socket } from "node:net";
import type { Readable } from "node:stream";
import { pathToFileURL } from "node:url";
import { nodeModule } from "../../os/builtins.js";
import { hooklessFlags } from "../hookless-script.js";
import { stdinFile } from "../stdin-file.js";
import { StdoutCapture } from "../stdout-capture.js";
import { boundedWait, capturedStdout, failedSpawn, stopReadingOnceGroupGone, watchHeldStdout, type ScriptExit, type ScriptProcess, type SpawnSpec, type Watcher } from "../spawn.js";
import { scriptStderr, type DescriptorReader, type ScriptStderr } from "../stderr-relay.js";
import { openStdoutPipe, type StdoutPipe } from "../stdout-pipe.js";
import { distPath } from "./runtime.js";
import type { Platform } from "./types.js";

/**
 * A pipe's read end as a socket that fills one reused buffer (`onread`): 100 MB of stderr relayed
 * costs no memory growth, where a fresh 64 KiB Buffer per read grows V8's young generation by tens
 * of MB. Detached, it keeps reading without keeping loopx alive.
 */
const readDescriptor: DescriptorReader = (fd, onData, onClose) => {
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
};

/**
 * Where every script's stdout is read into before `capture` copies it: a fresh Buffer per read
 * would leave hundreds of MB to the collector under a huge stdout. One for all
 * scripts: each read is copied out in its callback, before any other read can happen.
 */
const stdoutReads = Buffer.allocUnsafe(64 * 1024);

/** loopx's end of a script's stdout pipe, read into stdoutReads and copied into `capture`. */
function readInto(fd: number, capture: StdoutCapture): Socket {
  const callback = (n: number, buffer: Uint8Array) => {
    capture.push(buffer.subarray(0, n), true);
    return true;
  };
  return new Socket({ fd, readable: true, writable: false, onread: { buffer: stdoutReads, callback } });
}

/**
 * The script's end: its exit and its stdout's close, then its last stderr forwarded. Once it has
 * exited, the read stops when its process group is gone and a stdout held open is reported.
 */
function awaitEnd(spec: SpawnSpec, child: ChildProcess, stdout: Readable, pipe: StdoutPipe | undefined, stderr: ScriptStderr, capture: StdoutCapture): Promise<ScriptExit> {
  return new Promise<ScriptExit>((resolve) => {
    let spawnError: Error | undefined;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let sawEnd = false;
    let closed = false;
    let stopWatching: (() => void) | undefined;
    let stopHeldWatch: (() => void) | undefined;
    const finish = () => {
      if (!exit || !closed) return;
      stopWatching?.();
      stopHeldWatch?.();
      pipe?.release(sawEnd);
      const { code, signal } = exit;
      // The script's last stderr is forwarded before loopx says anything about its end.
      void stderr.settled.then(() => {
        const stderrTail = code !== 0 || signal ? stderr.tail() : undefined;
        resolve({ code, signal, ...capturedStdout(capture), spawnError, ...(stderrTail ? { stderrTail } : {}) });
      });
    };
    if (!pipe) stdout.on("data", (chunk: Buffer) => capture.push(chunk));
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
      stderr.settle(child.pid);
      if (!closed && child.pid !== undefined) stopWatching = stopReadingOnceGroupGone(child.pid, () => capture.reads, () => stdout.destroy());
      if (!closed) stopHeldWatch = watchHeldStdout(pipe?.read, spec.onStdoutHeld);
    });
    // The child's 'close' comes after its exit (and, with the runtime's pipe, after stdout's end).
    child.on("close", (code, signal) => {
      exit = { code, signal };
      finish();
    });
  });
}

function spawnScript(spec: SpawnSpec): ScriptProcess {
  let child;
  let stdinFd: number | undefined;
  const pipe = openStdoutPipe();
  const stderr = scriptStderr(readDescriptor);
  try {
    stdinFd = spec.stdin === undefined ? undefined : stdinFile(spec.stdin);
    child = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      env: spec.env,
      detached: true, // new session and process group: signals can reach the whole tree
      stdio: [stdinFd ?? "ignore", pipe?.write ?? "pipe", stderr.fd],
    });
  } catch (error) {
    stderr.abandon();
    return failedSpawn(error, pipe);
  } finally {
    if (stdinFd !== undefined) closeSync(stdinFd); // the child holds its own copy
    if (pipe) closeSync(pipe.write);
    if (stderr.fd !== "inherit") closeSync(stderr.fd);
  }
  const capture = new StdoutCapture();
  const stdout: Readable = pipe ? readInto(pipe.read, capture) : child.stdout!;
  const done = awaitEnd(spec, child, stdout, pipe, stderr, capture);
  return { pid: child.pid, done, stopReading: () => stdout.destroy() };
}

/**
 * Keeps a long CLI loop's resident memory flat under Node. Nothing leaks — the live heap stays
 * ~5 MB — but V8 grows its young generation under the steady allocation of thousands of spawns,
 * so RSS climbs by 10–35 MB over 10,000 iterations before levelling off. Fixing the semi-space
 * growth and collecting fully every 1,000 iterations keeps it within a few MB at no measurable cost
 * (measured with scripts/bench.ts).
 */
function createHeapKeeper(): () => void {
  let collect: (() => void) | undefined;
  let iterations = 0;
  return () => {
    iterations++;
    // From the 100th iteration, not at start: the young generation has not grown by then, and a
    // short run does not load node:v8 (and the modules it pulls in) at all.
    if (iterations === 100) collect = heapFlags();
    if (iterations % 1000 === 0) collect?.();
  };
}

/** Fixes the semi-space growth; returns a full collection (a new V8 context's `gc`), if it can. */
function heapFlags(): (() => void) | undefined {
  try {
    const require = nodeModule.createRequire(import.meta.url);
    const { setFlagsFromString } = require("node:v8") as typeof import("node:v8");
    setFlagsFromString("--semi-space-growth-factor=1");
    setFlagsFromString("--expose-gc");
    return (require("node:vm") as typeof import("node:vm")).runInNewContext("gc") as () => void;
  } catch {
    return undefined;
  }
}

/**
 * One Node process per script with loopx's module hooks preloaded by `--import`
 * (loader/register.ts: in-thread hooks where Node has them, TypeScript/JSX from loopx's transform
 * cache). On Node without module.registerHooks, a plain JS script that needs nothing from the
 * hooks skips their ~50 ms worker thread (hookless-script.ts) and runs as ESM by Node's own flag.
 */
function spawnWatcher(command: string, args: string[], env: Record<string, string | undefined>, onError: (error: Error) => void): Watcher {
  const child = spawn(command, args, { cwd: "/", env, detached: true, stdio: ["pipe", "ignore", "ignore"] });
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.once("error", () => resolve());
  });
  child.on("error", onError);
  child.stdin!.on("error", () => undefined);
  child.unref();
  (child.stdin as unknown as { unref?(): void }).unref?.();
  return {
    pid: child.pid,
    send(line) {
      if (child.stdin!.destroyed) return false;
      child.stdin!.write(`${line}\n`); // libuv writes at once when nothing is queued
      return true;
    },
    close: () => child.stdin!.end(),
    exited: (withinMs) => boundedWait(exited, withinMs),
  };
}

export const nodePlatform: Platform = {
  spawnScript,
  spawnWatcher,
  jsLauncher() {
    const loader = pathToFileURL(distPath("runtime/loader/register.js")).href;
    return { command: process.execPath, args: (path) => hooklessFlags(path) ?? ["--import", loader, path], extraEnv: () => ({}) };
  },
  createHeapKeeper,
};
