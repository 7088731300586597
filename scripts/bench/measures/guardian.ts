/**
 * What the run's guardian costs. Every run starts one (a /bin/sh waiting on a pipe,
 * src/guardian/part.ts), once, and nothing per iteration. Measured side by side, runs
 * alternated in rounds, medians, under node and bun:
 *
 * - per run: `loopx run -n 1` of a no-op bash script, wall and CPU time (loopx, its script and the
 *   guardian: all reaped children), with the guardian vs without;
 * - per iteration: a 1,000-iteration bash loop's ms/iteration, with vs without — the proof that it
 *   costs nothing per iteration;
 * - the guardian itself: from the spawn to its exit after "done", and what the spawn call blocks
 *   loopx for, in this process.
 *
 * "Without" is loopx with a preload (--require / --preload, bench only) that replaces the
 * guardian's spawn by an inert object: the product has no switch to turn the guardian off.
 *
 * Run alone: `node --import tsx/esm scripts/bench/measures/guardian.ts [--quick]` (dist/ built), or
 * as part of `npm run bench` (`--only guardian`).
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const DIST_BIN = join(ROOT, "dist", "bin.js");
const BUN = realpathSync(join(ROOT, "node_modules", ".bin", "bun"));

/** The preload that takes the guardian out: its spawn (sh -c ... loopx-guardian) returns an inert child. */
const WITHOUT_GUARDIAN = `const cp = require("node:child_process");
const { EventEmitter } = require("node:events");
const { Writable } = require("node:stream");
const spawn = cp.spawn;
cp.spawn = function (command, args) {
  if (command !== "/bin/sh" || !Array.isArray(args) || args[2] !== "loopx-guardian") return spawn.apply(this, arguments);
  const inert = new EventEmitter();
  inert.unref = () => {};
  inert.stdin = new Writable({ write(_chunk, _encoding, done) { done(); } });
  inert.stdin.unref = () => {};
  return inert;
};
require("node:module").syncBuiltinESMExports?.();
if (globalThis.Bun) {
  const bunSpawn = Bun.spawn;
  const sink = { write: () => 0, flush: () => 0, end: () => {}, unref: () => {} };
  Bun.spawn = function (options, ...rest) {
    if (!Array.isArray(options?.cmd) || options.cmd[3] !== "loopx-guardian") return bunSpawn.call(this, options, ...rest);
    return { unref: () => {}, stdin: sink };
  };
}
`;

interface Sample {
  ms: number;
  cpuMs: number;
}

export interface GuardianRow {
  runtime: "node" | "bun";
  perRun: { withMs: number; withoutMs: number; withCpuMs: number; withoutCpuMs: number };
  perIteration: { n: number; withMs: number; withoutMs: number; withCpuMs: number; withoutCpuMs: number };
}

export interface GuardianResult {
  rounds: number;
  rows: GuardianRow[];
  /** In this process (node): spawn() call, and spawn to exit after "done". */
  spawnCallMs: number;
  lifetimeMs: number;
}

/** CPU time of this process's reaped children, in ms (user + system; USER_HZ 100). */
function childrenCpuMs(): number {
  const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

function once(exe: string, preload: string[], env: Record<string, string>, cwd: string, n: number): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const cpu = childrenCpuMs();
    const start = performance.now();
    const child = spawn(exe, [...preload, DIST_BIN, "run", "-n", String(n), "noop"], { cwd, env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr!.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      const ms = performance.now() - start;
      if (code !== 0 || stderr !== "") reject(new Error(`loopx exited with ${code}: ${stderr}`));
      // The guardian (not waited for by loopx) has gone by now: it exits as soon as it reads "done".
      else setTimeout(() => resolve({ ms, cpuMs: childrenCpuMs() - cpu }), 20);
    });
  });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** The guardian part alone, in this process: its spawn call and its lifetime to "done". */
async function lifetime(rounds: number): Promise<{ spawnCallMs: number; lifetimeMs: number }> {
  const { guardianPart } = (await import(pathToFileURL(join(ROOT, "dist", "guardian", "part.js")).href)) as typeof import("../../../src/guardian/part.js");
  const { TmpdirPart } = (await import(pathToFileURL(join(ROOT, "dist", "parts", "tmpdir.js")).href)) as typeof import("../../../src/parts/tmpdir.js");
  const calls: number[] = [];
  const lives: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const part = guardianPart({ tmpdir: new TmpdirPart() });
    const controls = { id: `0000benchguard${i}`, cancel: async () => {}, warn: () => {}, emit: () => {}, runEnv: {}, progress: () => ({ iterations: 0, durationMs: 0 }), scriptExited: () => false };
    await import("signal-exit"); // loaded once per process by the part: not the guardian's cost
    const started = performance.now();
    await part.begin!(controls);
    calls.push(performance.now() - started);
    const pid = (await waitForGuardian(controls.id)) ?? 0;
    part.onEvent!({ v: 1, type: "run.end", time: "", run: controls.id, reason: "limit", exitCode: 0, iterations: 0, durationMs: 0 });
    while (pid && alive(pid)) await new Promise((resolve) => setTimeout(resolve, 1));
    lives.push(performance.now() - started);
  }
  return { spawnCallMs: median(calls), lifetimeMs: median(lives) };
}

/** The waiting guardian of run `id`: the process whose command line names the run. */
async function waitForGuardian(id: string): Promise<number | undefined> {
  for (let i = 0; i < 500; i++) {
    for (const name of readdirSync("/proc")) {
      if (!/^\d+$/.test(name)) continue;
      try {
        if (readFileSync(`/proc/${name}/cmdline`, "latin1").includes(`"run":"${id}"`)) return Number(name);
      } catch {
        // gone
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return undefined;
}

function alive(pid: number): boolean {
  try {
    return !/^State:\s+[ZX]/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
}

export async function benchGuardian(options: { quick?: boolean } = {}): Promise<GuardianResult> {
  const rounds = options.quick ? 3 : 7;
  const n = 1000;
  const work = realpathSync(mkdtempSync(join(tmpdir(), "loopx-bench-guardian-")));
  try {
    const project = join(work, "project");
    const script = join(project, ".loopx", "noop", "index.sh");
    mkdirSync(dirname(script), { recursive: true });
    writeFileSync(script, "#!/bin/bash\n", { mode: 0o755 });
    const preloadFile = join(work, "without-guardian.cjs");
    writeFileSync(preloadFile, WITHOUT_GUARDIAN);
    const env = { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: join(work, "home"), XDG_CONFIG_HOME: join(work, "home", ".config"), XDG_STATE_HOME: join(work, "state"), LANG: "C.UTF-8", LOOPX_PROGRESS: "0" };
    const rows: GuardianRow[] = [];
    for (const [runtime, exe, flag] of [["node", process.execPath, "--require"], ["bun", BUN, "--preload"]] as const) {
      const without = [flag, preloadFile];
      await once(exe, [], env, project, 3); // warm caches
      const samples = { withRun: [] as Sample[], withoutRun: [] as Sample[], withLoop: [] as Sample[], withoutLoop: [] as Sample[] };
      for (let round = 0; round < rounds; round++) {
        const pair = [
          async () => {
            samples.withRun.push(await once(exe, [], env, project, 1));
            samples.withLoop.push(await once(exe, [], env, project, n));
          },
          async () => {
            samples.withoutRun.push(await once(exe, without, env, project, 1));
            samples.withoutLoop.push(await once(exe, without, env, project, n));
          },
        ];
        if (round % 2) pair.reverse();
        for (const measure of pair) await measure();
      }
      const m = (list: Sample[], key: keyof Sample) => median(list.map((sample) => sample[key]));
      rows.push({
        runtime,
        perRun: { withMs: m(samples.withRun, "ms"), withoutMs: m(samples.withoutRun, "ms"), withCpuMs: m(samples.withRun, "cpuMs"), withoutCpuMs: m(samples.withoutRun, "cpuMs") },
        perIteration: {
          n,
          withMs: m(samples.withLoop, "ms") / n,
          withoutMs: m(samples.withoutLoop, "ms") / n,
          withCpuMs: m(samples.withLoop, "cpuMs") / n,
          withoutCpuMs: m(samples.withoutLoop, "cpuMs") / n,
        },
      });
    }
    return { rounds, rows, ...(await lifetime(options.quick ? 5 : 15)) };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export function formatGuardian(result: GuardianResult): string {
  const f = (ms: number, digits = 1) => ms.toFixed(digits);
  const lines = [`run guardian, medians of ${result.rounds} rounds, with vs without the guardian:`];
  for (const row of result.rows) {
    const { perRun, perIteration } = row;
    lines.push(
      `  ${row.runtime.padEnd(4)}  run -n 1: ${f(perRun.withMs)} vs ${f(perRun.withoutMs)} ms wall (${perRun.withMs - perRun.withoutMs >= 0 ? "+" : ""}${f(perRun.withMs - perRun.withoutMs)}), ` +
        `${f(perRun.withCpuMs, 0)} vs ${f(perRun.withoutCpuMs, 0)} ms CPU · ` +
        `${perIteration.n}-iteration bash loop: ${f(perIteration.withMs, 3)} vs ${f(perIteration.withoutMs, 3)} ms/iteration (${perIteration.withMs - perIteration.withoutMs >= 0 ? "+" : ""}${f(perIteration.withMs - perIteration.withoutMs, 3)}), ` +
        `CPU ${f(perIteration.withCpuMs, 3)} vs ${f(perIteration.withoutCpuMs, 3)} ms/iteration`,
    );
  }
  lines.push(`  the guardian itself (node, in-process): spawn call ${f(result.spawnCallMs, 2)} ms of loopx's time; spawn to gone after "done" ${f(result.lifetimeMs)} ms`);
  return lines.join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(formatGuardian(await benchGuardian({ quick: process.argv.includes("--quick") })));
}
