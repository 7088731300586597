/**
 * `loopx runs show` of a 100,000-iteration record: the whole table, and `--last 20`,
 * under node and bun, median wall time of a few runs, beside the floor: `wc -l` of the same file,
 * and the --before build's. Target: under 0.5 s. The record is written
 * as loopx writes one (a record that size comes from an older loopx, or a raised
 * LOOPX_RECORD_MAX_BYTES: the default cap keeps live records far smaller).
 *
 * Run alone: `node --import tsx/esm scripts/bench/measures/runs-show.ts [--quick]` (dist/ built).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { beforeRoot } from "../before.js";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const DIST_BIN = join(ROOT, "dist", "bin.js");
const BUN = realpathSync(join(ROOT, "node_modules", ".bin", "bun"));
const ITERATIONS = 100_000;
const ID = "0benchrunshow01";

export interface RunsShowResult {
  iterations: number;
  recordBytes: number;
  /** Median wall ms per runtime (and build: "node before") and form. */
  ms: Record<string, { full: number; last20: number }>;
  /** Median wall ms of `wc -l` of the record: the floor. */
  wcMs: number;
  met: boolean;
}

function writeRecord(dir: string): number {
  mkdirSync(dir, { recursive: true });
  const t0 = Date.parse("2026-01-01T00:00:00.000Z");
  const event = (type: string, ms: number, extra: object) => JSON.stringify({ v: 1, type, time: new Date(t0 + ms).toISOString(), run: ID, ...extra });
  const lines = [event("run.start", 0, { pid: 999999999, projectRoot: "/bench", target: "w:index", version: "bench", runtime: "node", maxIterations: null })];
  for (let n = 1; n <= ITERATIONS; n++) {
    lines.push(event("iteration.start", n * 5, { n, target: "w:index" }));
    lines.push(event("iteration.end", n * 5 + 4, { n, target: "w:index", durationMs: 4, exitCode: 0, signal: null, stdoutBytes: 60, output: { result: `iteration ${n} did some work and said so`, resultBytes: 40 } }));
  }
  lines.push(event("run.end", ITERATIONS * 5 + 5, { reason: "limit", exitCode: 0, iterations: ITERATIONS, durationMs: ITERATIONS * 5 + 5 }));
  const text = `${lines.join("\n")}\n`;
  writeFileSync(join(dir, `${ID}.jsonl`), text);
  return Buffer.byteLength(text);
}

const TARGET_MS = 500;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function benchRunsShow(options: { quick?: boolean } = {}): Promise<RunsShowResult> {
  const state = mkdtempSync(join(tmpdir(), "loopx-bench-runs-show-"));
  try {
    const recordBytes = writeRecord(join(state, "loopx", "runs"));
    const env = { ...process.env, XDG_STATE_HOME: state, NO_COLOR: "1" };
    const rounds = options.quick ? 1 : 3;
    const ms: RunsShowResult["ms"] = {};
    const wc: number[] = [];
    const before = beforeRoot();
    const builds: Array<[string, string[]]> = [["node", [process.execPath, DIST_BIN]], ["bun", [BUN, DIST_BIN]]];
    if (before) builds.push(["node before", [process.execPath, join(before, "dist", "bin.js")]], ["bun before", [BUN, join(before, "dist", "bin.js")]]);
    for (const [name, argv] of builds) {
      const time = (extra: string[]) => {
        const start = performance.now();
        const result = spawnSync(argv[0]!, [...argv.slice(1), "runs", "show", ID, ...extra], { env, stdio: ["ignore", "ignore", "pipe"] });
        if (result.status !== 0) throw new Error(`runs show failed: ${result.stderr}`);
        return performance.now() - start;
      };
      const full: number[] = [];
      const last: number[] = [];
      for (let round = 0; round < rounds; round++) {
        const start = performance.now();
        spawnSync("wc", ["-l", join(state, "loopx", "runs", `${ID}.jsonl`)], { stdio: "ignore" });
        wc.push(performance.now() - start);
        full.push(time([]));
        last.push(time(["--last", "20"]));
      }
      ms[name] = { full: median(full), last20: median(last) };
    }
    return { iterations: ITERATIONS, recordBytes, ms, wcMs: median(wc), met: Object.entries(ms).every(([name, value]) => name.endsWith("before") || value.full <= TARGET_MS) };
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
}

export function formatRunsShow(result: RunsShowResult): string {
  const rows = Object.entries(result.ms).map(([name, value]) => `  ${name.padEnd(11)} full ${value.full.toFixed(0).padStart(6)} ms   --last 20 ${value.last20.toFixed(0).padStart(5)} ms`);
  return [
    `runs show of a ${result.iterations.toLocaleString("en")}-iteration record (${(result.recordBytes / 1e6).toFixed(1)} MB): target <= ${TARGET_MS} ms ${result.met ? "met" : "NOT met"}; floor: wc -l of it ${result.wcMs.toFixed(0)} ms`,
    ...rows,
  ].join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(formatRunsShow(await benchRunsShow({ quick: process.argv.includes("--quick") })));
}
