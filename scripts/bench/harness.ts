import { execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BASE_ENV, DRIVER, type Kind, PROBE_OUT, PROJECT, ROOT, WORK, scriptPath } from "./setup.js";
import type { Channel } from "./channels.js";

// ---------------------------------------------------------------------------------------------
// Process helpers

export interface Finished {
  ms: number;
  /** CPU time (user + system) of the process and all its descendants, from this process's rusage of reaped children. */
  cpuMs: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function run(
  command: string[],
  options: { cwd?: string; env?: Record<string, string>; timeoutMs?: number; onSpawn?: (pid: number) => void } = {},
): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const cpuStart = childrenCpuMs();
    const start = performance.now();
    const child = spawn(command[0]!, command.slice(1), {
      cwd: options.cwd ?? PROJECT,
      env: options.env ?? BASE_ENV,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timeoutMs = options.timeoutMs ?? 120_000;
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`timed out after ${timeoutMs} ms: ${command.join(" ")}`));
    }, timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ ms: performance.now() - start, cpuMs: childrenCpuMs() - cpuStart, code, signal, stdout, stderr });
    });
    if (child.pid !== undefined) options.onSpawn?.(child.pid);
  });
}

const TICKS_PER_SECOND = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

/** CPU time of this process's reaped children (cutime + cstime, which include their own reaped descendants). */
export function childrenCpuMs(): number {
  const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1]!.split(" ");
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / TICKS_PER_SECOND;
}

export function describeFailure(command: string[], result: Finished): string {
  const status = result.code ?? result.signal;
  return `${command.map(shortPath).join(" ")} exited with ${status}${result.stderr ? `: ${result.stderr.trim().split("\n").slice(-3).join(" | ")}` : ""}`;
}

export async function runOk(command: string[], options: Parameters<typeof run>[1] = {}): Promise<Finished> {
  const result = await run(command, options);
  if (result.code !== 0) throw new Error(describeFailure(command, result));
  return result;
}

export function shortPath(text: string): string {
  return text.split(WORK).join("$BENCH").split(ROOT.replace(/\/$/, "")).join("$REPO");
}

export function median(values: number[]): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// ---------------------------------------------------------------------------------------------
// Raw driver and loopx timing

export interface RawCommand {
  cmd: string[];
  env: Record<string, string>;
  cwd: string;
  stdinFile?: string;
}

export interface Timing {
  /** Wall milliseconds. */
  ms: number;
  /** CPU milliseconds (user + system, all processes involved). */
  cpuMs: number;
}

/** Wall and CPU milliseconds per start of `raw.cmd`, measured inside the driver (its start-up and warm-up excluded). */
export async function rawPerIteration(channel: Channel, raw: RawCommand, n: number, warmup: number): Promise<Timing> {
  const specFile = join(WORK, `spec-${channel.name}.json`);
  writeFileSync(
    specFile,
    JSON.stringify({ cmd: raw.cmd[0], args: raw.cmd.slice(1), cwd: raw.cwd, env: raw.env, n, warmup, stdinFile: raw.stdinFile, ticksPerSecond: TICKS_PER_SECOND }),
  );
  const command = [...channel.driver, DRIVER, specFile];
  const result = await runOk(command, { env: { ...BASE_ENV, ...channel.rawEnv }, timeoutMs: 60_000 + n * 5_000 });
  const { ms, cpuMs } = JSON.parse(result.stdout.trim().split("\n").pop()!) as { ms: number; cpuMs: number };
  return { ms: ms / n, cpuMs: cpuMs / n };
}

/** Wall and CPU time of a whole `loopx run -n n <workflow>` (start-up included: subtract the `-n 0` time). */
export async function loopxRun(channel: Channel, workflow: string, n: number): Promise<Timing> {
  const command = [...channel.loopx, "run", "-n", String(n), workflow];
  const result = await runOk(command, { timeoutMs: 60_000 + n * 5_000 });
  if (result.stderr) throw new Error(`unexpected stderr from ${command.map(shortPath).join(" ")}: ${result.stderr.trim()}`);
  return { ms: result.ms, cpuMs: result.cpuMs };
}

// ---------------------------------------------------------------------------------------------
// Probe: the exact command line and environment loopx gives each kind of script

export interface Probe {
  /** argv of the script process as loopx started it, with the probe path replaced by a placeholder. */
  argv: string[];
  env: Record<string, string>;
  /** True if the script process is a direct child of loopx (no wrapper process in between). */
  directChild: boolean;
  parentNote: string;
}

const SCRIPT_PLACEHOLDER = "\u0000SCRIPT\u0000";

export async function probe(channel: Channel, kind: Kind): Promise<Probe> {
  for (const ext of ["cmdline", "environ", "ppid"]) rmSync(join(PROBE_OUT, `${kind}.${ext}`), { force: true });
  let loopxPid = -1;
  const command = [...channel.loopx, "run", "-n", "1", `probe:${kind}`];
  const result = await run(command, {
    env: { ...BASE_ENV, BENCH_PROBE_OUT: PROBE_OUT, BENCH_PROBE_KIND: kind },
    onSpawn: (pid) => (loopxPid = pid),
  });
  if (result.code !== 0 || !existsSync(join(PROBE_OUT, `${kind}.cmdline`))) throw new Error(describeFailure(command, result));
  const probePath = scriptPath("probe", kind);
  const cmdline = readFileSync(join(PROBE_OUT, `${kind}.cmdline`), "utf8").split("\0").filter((arg, i, all) => arg !== "" || i < all.length - 1);
  const argv = cmdline.map((arg) => (arg === probePath ? SCRIPT_PLACEHOLDER : arg));
  const env: Record<string, string> = {};
  for (const entry of readFileSync(join(PROBE_OUT, `${kind}.environ`), "utf8").split("\0")) {
    const eq = entry.indexOf("=");
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  delete env.BENCH_PROBE_OUT;
  delete env.BENCH_PROBE_KIND;
  env.LOOPX_WORKFLOW = kind;
  const ppid = Number(readFileSync(join(PROBE_OUT, `${kind}.ppid`), "utf8").trim());
  const directChild = ppid === loopxPid;
  const parentNote = directChild ? "direct child of loopx" : `parent pid ${ppid} is not loopx (pid ${loopxPid}): a wrapper process sits in between`;
  if (!argv.includes(SCRIPT_PLACEHOLDER)) throw new Error(`probe: script path not found in the command line ${cmdline.map(shortPath).join(" ")}`);
  return { argv, env, directChild, parentNote };
}

export function withScript(argv: string[], path: string): string[] {
  return argv.map((arg) => (arg === SCRIPT_PLACEHOLDER ? path : arg));
}


export function perIteration(runs: Timing[], startup: Timing, n: number): Timing[] {
  return runs.map((t) => ({ ms: (t.ms - startup.ms) / n, cpuMs: (t.cpuMs - startup.cpuMs) / n }));
}

export function medianTiming(times: Timing[]): Timing {
  return { ms: median(times.map((t) => t.ms)), cpuMs: median(times.map((t) => t.cpuMs)) };
}
