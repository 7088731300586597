/**
 * Shared black-box harness: temp projects, an isolated environment, and the built CLI spawned
 * under node and under bun. Every test gets its own directories; nothing touches the real HOME.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** The built CLI entry (`npm test` runs the build first). */
export const BIN = join(ROOT, "dist", "bin.js");
export const REAL_BIN = realpathSync(BIN);
/** Bun from the `bun` devDependency. */
export const BUN = realpathSync(join(ROOT, "node_modules", ".bin", "bun"));
export const NODE = process.execPath;

export interface Runtime {
  name: "node" | "bun";
  /** The interpreter that runs dist/bin.js. */
  exe: string;
}
export const RUNTIMES: Runtime[] = [
  { name: "node", exe: NODE },
  { name: "bun", exe: BUN },
];

/** A fresh temp directory (realpath'd, so it compares equal to what scripts see as cwd). */
export function tempDir(prefix = "loopx-test-"): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

/**
 * Creates a project directory holding `files` (relative path → content). `.sh` files are made
 * executable. Returns the project root.
 */
export function makeProject(files: Record<string, string> = {}, root = tempDir()): string {
  for (const [relative, content] of Object.entries(files)) {
    const path = join(root, relative);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
    if (path.endsWith(".sh")) chmodSync(path, 0o755);
  }
  return root;
}

export function makeSymlink(target: string, path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  symlinkSync(target, path);
}

/**
 * An environment isolated from the machine: own HOME and XDG_CONFIG_HOME (so the global env file
 * is per test), PATH that still finds bash/node/bun, and no inherited LOOPX_* variables.
 */
export function isolatedEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const home = tempDir("loopx-home-");
  const env: Record<string, string> = {
    PATH: `${dirname(NODE)}:${dirname(BUN)}:/usr/local/bin:/usr/bin:/bin`,
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    LANG: "C.UTF-8",
  };
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

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

/** Spawns `<runtime> dist/bin.js ...args` and collects its exit status and output. */
export function runLoopx(runtime: Runtime, args: string[], options: RunOptions): Promise<RunResult> {
  return runCommand(runtime.exe, [BIN, ...args], options);
}

export function runCommand(exe: string, args: string[], options: RunOptions): Promise<RunResult> {
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

/** True while process `pid` exists and is not a zombie (PID 1 here may never reap orphans). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const state = status.match(/^State:\s+(\S)/m)?.[1];
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `predicate` until it is true or `timeoutMs` passes; returns its last value. */
export async function waitFor(predicate: () => boolean, timeoutMs: number, intervalMs = 25): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) return false;
    await sleep(intervalMs);
  }
  return true;
}
