/**
 * Per Node version (the machine's, then Node 22, 24, 26 pinned in test/node-versions): ms per
 * iteration of a no-op TS script and of a plain `.js` script under `loopx run -n N` against the
 * physical limit, `node plain.mjs` (the same code already in JavaScript, started directly by the
 * raw driver on the same Node), and `loopx output --stop` against `node -e 0`. Alternating rounds,
 * medians, warm transform cache.
 */
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
// @ts-expect-error: a plain .mjs script without types
import { ensureNodeVersions, nodeVersions } from "../../node-versions.mjs";
import type { Channel } from "../channels.js";
import { type Timing, loopxRun, median, medianTiming, perIteration, rawPerIteration, runOk } from "../harness.js";
import { fmt, table } from "../report.js";
import { BASE_ENV, BUDGET_MS, DIST_BIN, MAX_N, MIN_N, NODE, ROUNDS, STARTUP_RUNS, WORK, scriptPath } from "../setup.js";

export interface NodeVersionResult {
  version: string;
  n: number;
  tsMs: number;
  jsMs: number;
  plainMs: number;
  outputMs: number;
  emptyMs: number;
}

const PLAIN = "const noop = 0;\nvoid noop;\nexport {};\n"; // the TS no-op script, already JavaScript

export async function measureNodeVersions(): Promise<NodeVersionResult[]> {
  ensureNodeVersions();
  const nodes: string[] = [NODE, ...(nodeVersions() as { exe: string }[]).map((v) => v.exe)];
  const cwd = dirname(scriptPath("ts", "ts"));
  const plain = join(WORK, "plain.mjs");
  writeFileSync(plain, PLAIN);
  const results: NodeVersionResult[] = [];
  for (const exe of nodes) {
    const version = (await runOk([exe, "--version"])).stdout.trim();
    process.stderr.write(`  ${version}\n`);
    const channel: Channel = { name: "node", loopx: [exe, DIST_BIN], driver: [exe], rawEnv: {}, rawScript: (path) => [exe, path], rawLabel: "node <script>" };
    const raw = { cmd: [exe, plain], env: BASE_ENV, cwd };
    await loopxRun(channel, "ts", 2); // warms loopx's transform cache and Node's compile cache
    const estimate = await rawPerIteration(channel, raw, 3, 2);
    const n = Math.max(MIN_N, Math.min(MAX_N, Math.round(BUDGET_MS / estimate.ms)));
    const samples = { ts: [] as Timing[], js: [] as Timing[], plain: [] as Timing[], start: [] as Timing[], output: [] as number[], empty: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      const steps = [
        async () => samples.start.push(await loopxRun(channel, "sh", 0)),
        async () => samples.ts.push(await loopxRun(channel, "ts", n)),
        async () => samples.plain.push(await rawPerIteration(channel, raw, n, 1)),
        async () => samples.js.push(await loopxRun(channel, "js", n)),
      ];
      if (round % 2 === 1) steps.reverse();
      for (const step of steps) await step();
    }
    for (let i = 0; i < STARTUP_RUNS; i++) {
      samples.output.push((await runOk([exe, DIST_BIN, "output", "--stop"])).ms);
      samples.empty.push((await runOk([exe, "-e", "0"])).ms);
    }
    const start = medianTiming(samples.start);
    results.push({
      version,
      n,
      tsMs: medianTiming(perIteration(samples.ts, start, n)).ms,
      jsMs: medianTiming(perIteration(samples.js, start, n)).ms,
      plainMs: medianTiming(samples.plain).ms,
      outputMs: median(samples.output),
      emptyMs: median(samples.empty),
    });
  }
  return results;
}

export function printNodeVersions(rows: NodeVersionResult[]): void {
  console.log("\n== Per Node version: loopx run -n N per iteration vs `node plain.mjs`; loopx output --stop vs `node -e 0` (medians, wall ms) ==");
  const major = (version: string) => Number(version.slice(1).split(".")[0]);
  const met = (ok: boolean) => (ok ? "yes" : "NO");
  console.log(
    table(
      ["node", "", "plain.mjs", "TS", "TS ratio", "target", "met", "JS", "JS ratio", "met", "output", "node -e 0", "ratio", "met"],
      rows.map((r) => {
        const tsTarget = major(r.version) >= 22 ? 1.25 : 1.5;
        const outputRatio = r.outputMs / r.emptyMs;
        return [
          r.version,
          "",
          fmt(r.plainMs),
          fmt(r.tsMs),
          fmt(r.tsMs / r.plainMs, 3),
          `<= ${tsTarget}`,
          met(r.tsMs <= tsTarget * r.plainMs),
          fmt(r.jsMs),
          fmt(r.jsMs / r.plainMs, 3),
          met(r.jsMs <= 1.15 * r.plainMs),
          fmt(r.outputMs, 1),
          fmt(r.emptyMs, 1),
          fmt(outputRatio, 3),
          major(r.version) >= 22 ? met(outputRatio <= 1.3) : "(n/a)",
        ];
      }),
    ),
  );
  console.log("targets: TS <= 1.25 x plain (1.5 x on Node 20), JS <= 1.15 x, output <= 1.3 x node -e 0 on Node 22+.");
}
