/**
 * What run records cost: the same no-op bash loop under `bun dist/bin.js run -n N`, with
 * records on (the default) and off (LOOPX_RECORD=0), alternated in rounds on the same machine at
 * the same time; reports the growth of the per-iteration wall and CPU time (medians). Target: the
 * per-iteration wall time grows by < 0.3 ms. The record's per-run cost (mkdir, pruning, open) is
 * included, spread over N.
 *
 * Run alone: `node --import tsx/esm scripts/bench/measures/records.ts [--quick]` (dist/ built), or as part
 * of `npm run bench`.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { BUN, DIST_BIN, ROOT, noopBashProject } from "../setup.js";


export interface RecordsResult {
  runtime: "bun";
  n: number;
  rounds: number;
  offMsPerIteration: number;
  onMsPerIteration: number;
  /** Growth of wall time per iteration with records on. */
  wallGrowthMs: number;
  /** Growth of CPU time (loopx and its scripts) per iteration with records on. */
  cpuGrowthMs: number;
  met: boolean;
  /** The record part alone, in this process: ms per iteration (iteration.start + iteration.end written). */
  partMsPerIteration: number;
  /** The run's lifeline alone, in this process, beside 200 records: ms per run (its start and its end). */
  lifelineMsPerRun: number;
}

/**
 * The record part alone, timed in-process over many iterations: what the wall-clock comparison
 * above cannot resolve on a busy machine (it is the whole of what records add per iteration).
 */
async function partCost(dir: string, iterations: number): Promise<number> {
  const { recordPart } = (await import(pathToFileURL(join(ROOT, "dist", "records", "writer.js")).href)) as typeof import("../../../src/records/writer.js");
  const part = recordPart(dir);
  const base = { v: 1 as const, run: "0000benchpart00" };
  part.onEvent!({ ...base, type: "run.start", time: new Date().toISOString(), pid: process.pid, projectRoot: dir, target: "noop:index", version: "bench", runtime: "node", maxIterations: null });
  const start = performance.now();
  for (let n = 1; n <= iterations; n++) {
    part.onEvent!({ ...base, type: "iteration.start", time: new Date().toISOString(), n, target: "noop:index" });
    part.onEvent!({ ...base, type: "iteration.end", time: new Date().toISOString(), n, target: "noop:index", durationMs: 2, exitCode: 0, signal: null, stdoutBytes: 0, output: {} });
  }
  const ms = (performance.now() - start) / iterations;
  part.onEvent!({ ...base, type: "run.end", time: new Date().toISOString(), reason: "limit", exitCode: 0, iterations, durationMs: 1 });
  return ms;
}

/**
 * The run's lifeline (records/lifeline.ts) alone, timed in-process beside 200 records: what every
 * recorded run pays once, at its start (the look for runs that died with their guardian, its
 * `.live` file written) and at its end (the file removed). Its heartbeat is once a second, not here.
 */
async function lifelineCost(dir: string, runs: number): Promise<number> {
  const { lifelinePart } = (await import(pathToFileURL(join(ROOT, "dist", "records", "lifeline.js")).href)) as typeof import("../../../src/records/lifeline.js");
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < 200; i++) writeFileSync(join(dir, `0000bench${String(i).padStart(6, "0")}.jsonl`), "{}\n");
  const start = performance.now();
  for (let i = 0; i < runs; i++) {
    const base = { v: 1 as const, run: `0001bench${String(i).padStart(6, "0")}`, time: new Date().toISOString() };
    const part = lifelinePart(dir, { guardian: () => undefined, scratch: () => undefined });
    part.onEvent!({ ...base, type: "run.start", pid: process.pid, projectRoot: dir, target: "noop:index", version: "bench", runtime: "node", maxIterations: null });
    await part.begin!({ id: base.run, warn: () => undefined } as unknown as Parameters<NonNullable<typeof part.begin>>[0]);
    part.onEvent!({ ...base, type: "run.end", reason: "limit", exitCode: 0, iterations: 1, durationMs: 1 });
  }
  return (performance.now() - start) / runs;
}

/** CPU time of this process's reaped children, in ms (user + system; USER_HZ 100). */
function childrenCpuMs(): number {
  const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

function once(env: Record<string, string>, cwd: string, n: number): Promise<{ ms: number; cpuMs: number }> {
  return new Promise((resolve, reject) => {
    const cpu = childrenCpuMs();
    const start = performance.now();
    const child = spawn(BUN, [DIST_BIN, "run", "-n", String(n), "noop"], { cwd, env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr!.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      const ms = performance.now() - start;
      if (code !== 0) reject(new Error(`loopx exited with ${code}: ${stderr}`));
      else if (stderr !== "") reject(new Error(`loopx wrote to stderr: ${stderr}`));
      else resolve({ ms, cpuMs: childrenCpuMs() - cpu });
    });
  });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function benchRecords(options: { quick?: boolean } = {}): Promise<RecordsResult> {
  const n = options.quick ? 150 : 400;
  const rounds = options.quick ? 4 : 7;
  const { work, project } = noopBashProject("loopx-bench-records-");
  try {
    const env = {
      PATH: "/usr/local/bin:/usr/bin:/bin",
      HOME: join(work, "home"),
      XDG_CONFIG_HOME: join(work, "home", ".config"),
      XDG_STATE_HOME: join(work, "state"),
      LANG: "C.UTF-8",
    };
    const on: Array<{ ms: number; cpuMs: number }> = [];
    const off: Array<{ ms: number; cpuMs: number }> = [];
    await once(env, project, 5); // warm the file cache
    for (let round = 0; round < rounds; round++) {
      // Alternate which goes first, so a slow moment of the machine is shared fairly.
      const pair = [
        async () => off.push(await once({ ...env, LOOPX_RECORD: "0" }, project, n)),
        async () => on.push(await once(env, project, n)),
      ];
      if (round % 2) pair.reverse();
      for (const measure of pair) await measure();
    }
    if (!existsSync(join(work, "state", "loopx", "runs"))) throw new Error("records-on runs wrote no record");
    const offMs = median(off.map((r) => r.ms)) / n;
    const onMs = median(on.map((r) => r.ms)) / n;
    const cpuGrowthMs = (median(on.map((r) => r.cpuMs)) - median(off.map((r) => r.cpuMs))) / n;
    const partMsPerIteration = await partCost(join(work, "part"), options.quick ? 2000 : 20_000);
    const lifelineMsPerRun = await lifelineCost(join(work, "lifeline"), options.quick ? 200 : 2000);
    return { runtime: "bun", n, rounds, offMsPerIteration: offMs, onMsPerIteration: onMs, wallGrowthMs: onMs - offMs, cpuGrowthMs, met: onMs - offMs < 0.3, partMsPerIteration, lifelineMsPerRun };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export function formatRecords(r: RecordsResult): string {
  return (
    `== run records: no-op bash loop under bun, records on vs off (LOOPX_RECORD=0), ${r.rounds} rounds of -n ${r.n} ==\n` +
    `  ms/iter off ${r.offMsPerIteration.toFixed(3)}  on ${r.onMsPerIteration.toFixed(3)}  ` +
    `growth ${r.wallGrowthMs.toFixed(3)} ms wall, ${r.cpuGrowthMs.toFixed(3)} ms CPU  (< 0.3 ms: ${r.met ? "yes" : "NO"})\n` +
    `  the record part alone (in-process, ${process.versions.bun ? "bun" : "node"}): ${(r.partMsPerIteration * 1000).toFixed(1)} µs per iteration (two events written)\n` +
    `  the run's lifeline alone (in-process, beside 200 records): ${(r.lifelineMsPerRun * 1000).toFixed(1)} µs per run (its start and end; nothing per iteration)`
  );
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (!existsSync(DIST_BIN)) {
    console.error(`bench: ${DIST_BIN} is missing: build first (npm run build)`);
    process.exit(1);
  }
  console.log(formatRecords(await benchRecords({ quick: process.argv.includes("--quick") })));
}
