/** Spawning loopx (or any command) and collecting its exit status and output. */
import { spawn, type ChildProcess } from "node:child_process";
import { isolatedEnv } from "./env.js";
import { BIN } from "./paths.js";
import { CLIS, type Cli, type Runtime } from "./runtimes.js";

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd: string;
  env?: Record<string, string>;
  /** Data for loopx's stdin; by default stdin is /dev/null. */
  input?: string;
  timeoutMs?: number;
  /** Called once the process has started (e.g. to send signals). */
  onSpawn?: (child: ChildProcess) => void;
}

/** Spawns the CLI `cli` with `args` and collects its exit status and output. */
export function runCli(cli: Cli, args: string[], options: RunOptions): Promise<RunResult> {
  return runCommand(cli.exe, [...cli.prefix, ...args], options);
}

/** A way loopx ships (CLIS) with the function that starts it: for a case per channel (`it.for(LOOPX_STARTS)`). */
export interface LoopxStart {
  name: Cli["name"];
  loopx(args: string[], options: RunOptions): Promise<RunResult>;
}
export const LOOPX_STARTS: LoopxStart[] = CLIS.map((cli) => ({ name: cli.name, loopx: (args, options) => runCli(cli, args, options) }));

/** Spawns `<runtime> dist/bin.js ...args` and collects its exit status and output. */
export function runLoopx(runtime: Runtime, args: string[], options: RunOptions): Promise<RunResult> {
  return runCommand(runtime.exe, [BIN, ...args], options);
}

/**
 * Spawns `exe args` and collects its exit status and output; rejects when it runs past
 * `timeoutMs` (it is then killed). A caller that awaits the promise sees the rejection; one whose
 * test ended first (an assertion failed while the command ran in the background) does not get an
 * unhandled rejection a minute later in whatever test file the worker runs by then.
 */
export function runCommand(exe: string, args: string[], options: RunOptions): Promise<RunResult> {
  const result = collect(exe, args, options);
  result.catch(() => {});
  return result;
}

function collect(exe: string, args: string[], options: RunOptions): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(exe, args, {
      cwd: options.cwd,
      env: options.env ?? isolatedEnv(),
      stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    if (options.input !== undefined) child.stdin!.end(options.input);
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`timed out after ${options.timeoutMs ?? 30_000} ms: ${exe} ${args.join(" ")}\nstderr: ${stderr}`));
    }, options.timeoutMs ?? 30_000);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    options.onSpawn?.(child);
  });
}

/** A started loopx: its process, its eventual result, and when it exited. */
export interface Started {
  child: ChildProcess;
  result: Promise<RunResult>;
  /** Date.now() when loopx exited (0 until `result` resolves). */
  exitedAt: () => number;
}

/** Starts `cli` (a Runtime runs dist/bin.js) and returns at once, with a handle to its process and result. */
export function startLoopx(cli: Runtime | Cli, args: string[], options: Omit<RunOptions, "onSpawn">): Started {
  let child: ChildProcess | undefined;
  let exitedAt = 0;
  const prefix = "prefix" in cli ? cli.prefix : [BIN];
  const result = runCommand(cli.exe, [...prefix, ...args], { ...options, onSpawn: (c) => (child = c) }).then((r) => {
    exitedAt = Date.now();
    return r;
  });
  // A promise of its own, marked handled as runCommand's is: a test that failed before awaiting it
  // must not leave an unhandled rejection to whatever file its worker runs a minute later.
  result.catch(() => {});
  return { child: child!, result, exitedAt: () => exitedAt };
}

/** Runs `<runtime> dist/bin.js ...args` in `cwd` with a fresh isolatedEnv() (and `input` on stdin, if given). */
export function runIsolated(runtime: Runtime, cwd: string, args: string[], input?: string): Promise<RunResult> {
  return runLoopx(runtime, args, { cwd, env: isolatedEnv(), input });
}
