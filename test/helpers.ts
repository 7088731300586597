/**
 * Shared black-box harness: temp projects, an isolated environment, and the built CLI spawned
 * under node and under bun. Every test gets its own directories; nothing touches the real HOME.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect } from "vitest";

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
  /** For the Node matrix: "node20", "node22", ... (the major version). */
  label?: string;
}
export const RUNTIMES: Runtime[] = [
  { name: "node", exe: NODE },
  { name: "bun", exe: BUN },
];

/** The standalone binary for this host (`node scripts/build-binaries.mjs --host` writes it). */
export const BINARY = join(ROOT, "dist", "bin", `loopx-${process.platform}-${process.arch === "arm64" ? "arm64" : "x64"}`);

/** How the CLI is started: `exe ...prefix ...args` (node or bun run dist/bin.js; the binary runs itself). */
export interface Cli {
  name: "node" | "bun" | "binary";
  exe: string;
  prefix: string[];
}
/** The three ways loopx ships: under node, under bun, and as the standalone binary. */
export const CLIS: Cli[] = [
  { name: "node", exe: NODE, prefix: [BIN] },
  { name: "bun", exe: BUN, prefix: [BIN] },
  { name: "binary", exe: BINARY, prefix: [] },
];
/** The same three ways as one command line each: what starts loopx, before its arguments. */
export interface Channel {
  name: Cli["name"];
  argv: string[];
}
export const CHANNELS: Channel[] = CLIS.map((cli) => ({ name: cli.name, argv: [cli.exe, ...cli.prefix] }));

/**
 * Tests that need Linux itself: they read /proc (process states, memory, file descriptors,
 * process groups) to prove what loopx did. Elsewhere (macOS in CI) they are reported as skipped
 * and the rest runs; README "Continuous integration" says so. Use it where the tests are defined:
 * `linuxOnly.each(RUNTIMES)(...)`, `linuxOnly("...", () => ...)`.
 */
export const linuxOnly = describe.runIf(process.platform === "linux");

/** A fresh temp directory (realpath'd, so it compares equal to what scripts see as cwd). */
export function tempDir(prefix = "loopx-test-"): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  createdTempDirs.push(dir);
  return dir;
}

/**
 * Every directory tempDir() made in this test file, removed after the file's last test (vitest
 * runs each test file in its own process, which imports this module afresh), so a run of the suite
 * leaves nothing behind in the temp dir.
 */
const createdTempDirs: string[] = [];
afterAll(() => {
  for (const dir of createdTempDirs.splice(0)) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 2 });
    } catch {
      // A directory a test made unremovable on purpose: nothing more to do at exit.
    }
  }
});

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
 * An environment isolated from the machine: own HOME, XDG_CONFIG_HOME (so the global env file is
 * per test) and XDG_STATE_HOME (so run records are per test), PATH that still finds bash/node/bun,
 * and no inherited LOOPX_* variables.
 */
export function isolatedEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const home = tempDir("loopx-home-");
  const env: Record<string, string> = {
    PATH: `${dirname(NODE)}:${dirname(BUN)}:/usr/local/bin:/usr/bin:/bin`,
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_STATE_HOME: join(home, ".local", "state"),
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

/** Spawns the CLI `cli` with `args` and collects its exit status and output. */
export function runCli(cli: Cli, args: string[], options: RunOptions): Promise<RunResult> {
  return runCommand(cli.exe, [...cli.prefix, ...args], options);
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
  if (process.platform !== "linux") {
    // No /proc (macOS): ps prints the state, "Z" for a zombie, nothing once the pid is gone.
    const state = spawnSync("ps", ["-o", "stat=", "-p", String(pid)], { encoding: "utf8" }).stdout.trim();
    return state !== "" && !state.startsWith("Z");
  }
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const state = status.match(/^State:\s+(\S)/m)?.[1];
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
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
  return { child: child!, result, exitedAt: () => exitedAt };
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

/** Waits for `path` to exist (a script's "ready" marker); throws if it never does. */
export async function waitForFile(path: string, timeoutMs = 10_000): Promise<void> {
  if (!(await waitFor(() => existsSync(path), timeoutMs))) throw new Error(`timed out waiting for ${path}`);
}

/** Runs `<runtime> dist/bin.js ...args` in `cwd` with a fresh isolatedEnv() (and `input` on stdin, if given). */
export function runIsolated(runtime: Runtime, cwd: string, args: string[], input?: string): Promise<RunResult> {
  return runLoopx(runtime, args, { cwd, env: isolatedEnv(), input });
}

/** The project root, quoted, in a bash script. */
export const R = '"$LOOPX_PROJECT_ROOT"';

/** The non-empty lines of `file`; [] when it does not exist. */
export function fileLines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
}

/** A bash script: shebang line, then `body`. */
export const sh = (body: string): string => `#!/bin/bash\n${body}\n`;

/** The lines of `<root>/trace.log` (the file scripts append to); [] if it is missing or empty. */
export function readTrace(root: string): string[] {
  const path = join(root, "trace.log");
  if (!existsSync(path)) return [];
  const text = readFileSync(path, "utf8");
  return text === "" ? [] : text.replace(/\n$/, "").split("\n");
}

/**
 * Every file, directory and symlink under `root` (relative path → kind + mode + content).
 * `.bun/` at the top level (bun's own transpiler cache in $HOME, written by the runtime, not by
 * loopx) is skipped. Not the same format as `snapshot` in fixtures/install/support.ts.
 */
export function snapshotTree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string, rel: string): void => {
    if (!existsSync(dir)) return;
    for (const name of readdirSync(dir).sort()) {
      if (rel === "" && name === ".bun") continue;
      const path = join(dir, name);
      const relative = rel === "" ? name : `${rel}/${name}`;
      const stat = lstatSync(path);
      if (stat.isSymbolicLink()) out[relative] = `link:${readlinkSync(path)}`;
      else if (stat.isDirectory()) {
        out[relative] = `dir:${(stat.mode & 0o7777).toString(8)}`;
        walk(path, relative);
      } else out[relative] = `file:${(stat.mode & 0o7777).toString(8)}:${readFileSync(path, "utf8")}`;
    }
  };
  walk(root, "");
  return out;
}

/** Exit 0, empty stdout, no stack trace on stderr (stderr may otherwise hold anything). */
export function expectClean(result: RunResult): void {
  expect(result.stderr).not.toContain("    at ");
  expect(result.stdout).toBe("");
  expect(result.code).toBe(0);
}

/**
 * Exit 1, nothing on stdout, stderr is exactly one `loopx:` line (nothing else), no stack trace,
 * no internal error; every pattern must match stderr (a string: be contained in it).
 */
export function expectOneLineError(result: RunResult, ...patterns: Array<RegExp | string>): void {
  expect(result.stdout).toBe("");
  expect(result.stderr).toMatch(/^loopx: [^\n]*\n$/);
  expect(result.stderr).not.toContain("    at ");
  expect(result.stderr).not.toContain("internal error");
  for (const pattern of patterns) {
    if (typeof pattern === "string") expect(result.stderr).toContain(pattern);
    else expect(result.stderr).toMatch(pattern);
  }
  expect(result.code).toBe(1);
}

/** The `loopx: warning:` lines of `stderr`. */
export const warnings = (stderr: string): string[] => stderr.split("\n").filter((line) => line.startsWith("loopx: warning:"));

/** The version in package.json: what `loopx version` prints. */
export const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;

/**
 * Exit 1, empty stdout, exactly one `loopx:` line on stderr containing every needle, no stack trace,
 * no internal error
 * (other, non-`loopx:` stderr lines are allowed). Returns that line.
 */
export function expectLoopxError(result: RunResult, ...needles: string[]): string {
  expect(result.stdout).toBe("");
  expect(result.stderr).not.toContain("    at ");
  expect(result.stderr).not.toMatch(/^\s+at /m);
  expect(result.stderr).not.toContain("internal error");
  const lines = result.stderr.split("\n").filter((line) => line.startsWith("loopx:"));
  expect(lines, result.stderr).toHaveLength(1);
  for (const needle of needles) expect(lines[0]).toContain(needle);
  expect(result.code).toBe(1);
  return lines[0]!;
}

/** Live (non-zombie) processes whose environment holds the variable `name=value`. */
export function carriersOf(name: string, value: string): number[] {
  const needle = `\0${name}=${value}\0`;
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let environ: string;
    try {
      environ = `\0${readFileSync(`/proc/${entry}/environ`, "latin1")}`;
    } catch {
      continue;
    }
    if (environ.includes(needle) && processAlive(Number(entry))) found.push(Number(entry));
  }
  return found;
}

// ---------------------------------------------------------------------------------------------
// The programmatic API from a consumer program, and LOOPX_TMPDIR bookkeeping.

/** A consumer project: `consumer.mjs` (plus `files`) importing the built package as `loopx`. */
export function consumer(source: string, files: Record<string, string> = {}): string {
  const dir = makeProject({ "consumer.mjs": source, ...files });
  makeSymlink(ROOT, join(dir, "node_modules", "loopx"));
  return dir;
}

/**
 * Runs `consumer.mjs` under `runtime`; `json` is its last stdout line parsed (undefined when it
 * printed nothing; a line that is not JSON throws, with the consumer's output).
 */
export async function runConsumer(runtime: Runtime, dir: string, options: { env?: Record<string, string>; timeoutMs?: number } = {}) {
  const result = await runCommand(runtime.exe, ["consumer.mjs"], { cwd: dir, env: options.env ?? isolatedEnv(), timeoutMs: options.timeoutMs ?? 60_000 });
  const last = result.stdout.trim().split("\n").pop() ?? "";
  let json: any;
  try {
    json = last === "" ? undefined : JSON.parse(last);
  } catch {
    throw new Error(`consumer printed no JSON (code ${result.code}):\n${result.stdout.slice(0, 3000)}\n${result.stderr.slice(0, 3000)}`);
  }
  return { ...result, json };
}

/** A per-test TMPDIR and an isolated environment that points at it. */
export function scratchEnv(extra: Record<string, string> = {}): { env: Record<string, string>; tmp: string } {
  const tmp = tempDir("loopx-tmproot-");
  return { env: isolatedEnv({ TMPDIR: tmp, ...extra }), tmp };
}

/** The run directories (LOOPX_TMPDIR) loopx created, and left, in `tmp`. */
export function leftovers(tmp: string): string[] {
  return readdirSync(tmp).filter((name) => /^loopx-[A-Za-z0-9]{6}$/.test(name));
}

/** A memory figure of a live process, in kB, from /proc/<pid>/status (Linux only). */
export function procMemoryKb(pid: number, field: "VmHWM" | "VmRSS"): number {
  const match = readFileSync(`/proc/${pid}/status`, "utf8").match(new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m"));
  if (!match) throw new Error(`no ${field} for ${pid}`);
  return Number(match[1]);
}

/**
 * Live (non-zombie) processes whose environment holds HARDENING_TAG=<tag>: a test puts a unique tag
 * in loopx's environment, and every descendant inherits it, known to the test or not.
 */
export function taggedSurvivors(tag: string): number[] {
  return carriersOf("HARDENING_TAG", tag);
}

// ---------------------------------------------------------------------------------------------
// Permission cases as an unprivileged user. Root reads a mode-000 file anyway, so when the suite
// runs as root (CI does) these cases drop privileges instead of skipping.

/** The uid/gid unprivileged runs use when the suite is root (nobody/nogroup). */
export const UNPRIVILEGED_ID = 65534;
export const IS_ROOT = process.getuid?.() === 0;

/**
 * Makes `paths` (trees this test created) belong to the unprivileged user, so a process running
 * as that user can write them; a no-op when the suite is not root (the files are already ours).
 */
export function giveToUnprivileged(...paths: string[]): void {
  if (!IS_ROOT) return;
  for (const path of paths) spawnSync("chown", ["-R", `${UNPRIVILEGED_ID}:${UNPRIVILEGED_ID}`, path], { stdio: "inherit" });
}

/** The first ancestor directory of `path` an unprivileged user cannot search, if any. */
function unsearchableAncestor(path: string): string | undefined {
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    const stat = lstatSync(dir);
    if ((stat.mode & 0o001) === 0 && stat.uid !== UNPRIVILEGED_ID) return dir;
    if (dir === "/") return undefined;
  }
}

/**
 * `exe args` as the unprivileged user: through `setpriv --reuid --regid --clear-groups` when the
 * suite is root, unchanged otherwise. Fails loudly (never skips) when the built CLI, the runtimes
 * or the test's own files sit below a directory that user cannot enter.
 */
export function unprivileged(exe: string, args: string[], ...mustReach: string[]): [string, string[]] {
  if (!IS_ROOT) return [exe, args];
  for (const path of [exe, REAL_BIN, BUN, ...mustReach]) {
    const blocked = unsearchableAncestor(path);
    if (blocked) throw new Error(`uid ${UNPRIVILEGED_ID} cannot reach ${path}: ${blocked} is not searchable by others`);
  }
  const id = String(UNPRIVILEGED_ID);
  return ["setpriv", ["--reuid", id, "--regid", id, "--clear-groups", "--", exe, ...args]];
}

/** Like {@link runLoopx}, but loopx runs as the unprivileged user (see {@link unprivileged}). */
export function runLoopxUnprivileged(runtime: Runtime, args: string[], options: RunOptions): Promise<RunResult> {
  return runCliUnprivileged({ name: runtime.name, exe: runtime.exe, prefix: [BIN] }, args, options);
}

/** Like {@link runCli}, but loopx runs as the unprivileged user (see {@link unprivileged}). */
function runCliUnprivileged(cli: Cli, args: string[], options: RunOptions): Promise<RunResult> {
  const [exe, argv] = unprivileged(cli.exe, [...cli.prefix, ...args], options.cwd);
  return runCommand(exe, argv, options);
}

/**
 * A script for "nothing outlives loopx" tests: it ignores SIGINT/SIGTERM/SIGQUIT, traces SIGHUP
 * (`got` in `trace`, and goes on), starts a `setsid` child and a double-forked daemon (both
 * carrying LOOPX_RUN_ID), then writes tmpdir.txt, parent.pid (loopx, or the host of run()) and
 * run.id, and loops for ever.
 */
export const STUBBORN_SCRIPT = sh(`cd "$LOOPX_PROJECT_ROOT"
trap 'echo "got $1" >> trace' HUP
trap '' INT TERM QUIT
setsid bash -c 'echo $$ > setsid.pid; exec sleep 1000' &
( setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > daemon.pid )
while [ ! -s setsid.pid ] || [ ! -s daemon.pid ]; do sleep 0.02; done
echo "$LOOPX_TMPDIR" > tmpdir.txt
echo $PPID > parent.pid
echo "$LOOPX_RUN_ID" > run.id
while :; do sleep 0.1; done`);
