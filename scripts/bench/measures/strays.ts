/**
 * What the stray scan costs: with 1,000 extra processes on the machine (plain `sleep`s
 * started here, 5 of them carrying a LOOPX_RUN_ID), times `findStrays(id)` — the /proc scan the
 * strays part runs once when a run ends (never per iteration) — under node (in this process) and
 * under bun (a child bun running the same dist module). Target: < 100 ms per scan.
 *
 * Run alone: `node --import tsx/esm scripts/bench/measures/strays.ts [--quick]` (dist/ built), or as
 * part of `npm run bench` (`--only strays`).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const STRAYS_JS = join(ROOT, "dist", "parts", "strays.js");
const BUN = realpathSync(join(ROOT, "node_modules", ".bin", "bun"));
const EXTRA_PROCESSES = 1000;
const CARRYING = 5;
const TARGET_MS = 100;

export interface StraysResult {
  processes: number;
  scans: number;
  found: number;
  nodeMedianMs: number;
  bunMedianMs: number | null;
  met: boolean;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function benchStrays(options: { quick?: boolean } = {}): Promise<StraysResult> {
  const scans = options.quick ? 5 : 15;
  const runId = `benchstrays${process.pid}`;
  const children: ChildProcess[] = [];
  try {
    for (let i = 0; i < EXTRA_PROCESSES; i++) {
      const env = i < CARRYING ? { ...process.env, LOOPX_RUN_ID: runId } : process.env;
      children.push(spawn("sleep", ["600"], { stdio: "ignore", env }));
    }
    await Promise.all(children.map((child) => new Promise((resolve) => child.once("spawn", resolve))));
    const processes = readdirSync("/proc").filter((name) => /^\d+$/.test(name)).length;

    const { findStrays } = (await import(pathToFileURL(STRAYS_JS).href)) as typeof import("../../../src/parts/strays.js");
    const nodeTimes: number[] = [];
    let found = 0;
    for (let i = 0; i < scans; i++) {
      const start = performance.now();
      found = findStrays(runId).length;
      nodeTimes.push(performance.now() - start);
    }

    const bunScript = `const { findStrays } = await import(${JSON.stringify(pathToFileURL(STRAYS_JS).href)});
const times = [];
for (let i = 0; i < ${scans}; i++) { const t = performance.now(); findStrays(${JSON.stringify(runId)}); times.push(performance.now() - t); }
console.log(JSON.stringify(times));`;
    const bun = spawnSync(BUN, ["--eval", bunScript], { encoding: "utf8" });
    const bunMedianMs = bun.status === 0 ? median(JSON.parse(bun.stdout.trim().split("\n").pop()!) as number[]) : null;
    const nodeMedianMs = median(nodeTimes);
    return {
      processes,
      scans,
      found,
      nodeMedianMs,
      bunMedianMs,
      met: found === CARRYING && nodeMedianMs < TARGET_MS && (bunMedianMs ?? 0) < TARGET_MS,
    };
  } finally {
    for (const child of children) child.kill("SIGKILL");
  }
}

export function formatStrays(result: StraysResult): string {
  const bun = result.bunMedianMs === null ? "bun n/a" : `bun ${result.bunMedianMs.toFixed(1)} ms`;
  return (
    `stray scan (findStrays, run end only) with ${result.processes} processes in /proc, median of ${result.scans}: ` +
    `node ${result.nodeMedianMs.toFixed(1)} ms, ${bun}; found ${result.found}/${CARRYING} carrying the id; ` +
    `target < ${TARGET_MS} ms: ${result.met ? "met" : "NO"}`
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(formatStrays(await benchStrays({ quick: process.argv.includes("--quick") })));
}
