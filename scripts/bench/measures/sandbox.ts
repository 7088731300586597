/**
 * What `loopx run --sandbox` costs (src/sandbox/): a no-op bash workflow, `run -n 1` and `run -n 21`
 * without the fence, fenced with no network entry (bwrap alone), and fenced with an allowed
 * 127.0.0.1 port (bwrap + the relay inside, started by the JS runtime); alternated, medians, under
 * node. Per iteration: (t(21) - t(1)) / 20; per run (the fence's set-up and its probe): the fenced
 * t(1) minus the plain t(1). Without --sandbox nothing of it is loaded.
 *
 * Run alone: `node --import tsx/esm scripts/bench/measures/sandbox.ts [--quick]` (dist/ built), or
 * as part of `npm run bench` (`--only sandbox`).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const DIST_BIN = join(ROOT, "dist", "bin.js");

export interface SandboxBench {
  rounds: number;
  /** ms per iteration and ms per run (set-up + probe), each way. */
  plain: { iteration: number; run: number };
  fenced: { iteration: number; run: number };
  fencedNetwork: { iteration: number; run: number };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

function wall(args: string[], cwd: string, env: NodeJS.ProcessEnv): number {
  const start = performance.now();
  const result = spawnSync(process.execPath, [DIST_BIN, ...args], { cwd, env, stdio: ["ignore", "ignore", "pipe"] });
  if (result.status !== 0) throw new Error(`loopx ${args.join(" ")} failed: ${result.stderr}`);
  return performance.now() - start;
}

export async function benchSandbox(options: { quick?: boolean } = {}): Promise<SandboxBench> {
  const rounds = options.quick ? 3 : 7;
  const work = realpathSync(mkdtempSync(join(tmpdir(), "loopx-bench-sandbox-")));
  const project = join(work, "project");
  mkdirSync(join(project, ".loopx", "n"), { recursive: true });
  mkdirSync(join(project, ".loopx", "net"), { recursive: true });
  writeFileSync(join(project, ".loopx", "n", "index.sh"), "#!/bin/bash\necho '{\"result\":\"x\"}'\n", { mode: 0o755 });
  writeFileSync(join(project, ".loopx", "net", "index.sh"), "#!/bin/bash\necho '{\"result\":\"x\"}'\n", { mode: 0o755 });
  writeFileSync(join(project, ".loopx", "net", "sandbox.json"), JSON.stringify({ network: ["127.0.0.1:9"] }));
  const env = { PATH: process.env.PATH, HOME: work, XDG_STATE_HOME: join(work, "state"), LOOPX_RECORD: "0", LOOPX_PROGRESS: "0" };
  const ways = { plain: ["n"], fenced: ["--sandbox", "n"], fencedNetwork: ["--sandbox", "net"] } as const;
  const times: Record<string, { one: number[]; many: number[] }> = {};
  try {
    for (let round = 0; round < rounds; round++) {
      for (const [name, args] of Object.entries(ways)) {
        times[name] ??= { one: [], many: [] };
        times[name].one.push(wall(["run", "-n", "1", ...args], project, env));
        times[name].many.push(wall(["run", "-n", "21", ...args], project, env));
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const cost = (name: string) => ({ iteration: (median(times[name]!.many) - median(times[name]!.one)) / 20, run: median(times[name]!.one) - median(times.plain!.one) });
  return { rounds, plain: cost("plain"), fenced: cost("fenced"), fencedNetwork: cost("fencedNetwork") };
}

export function formatSandbox(bench: SandboxBench): string {
  const line = (label: string, cost: { iteration: number; run: number }) => `  ${label.padEnd(34)} ${cost.iteration.toFixed(1).padStart(7)} ms/iteration   ${cost.run.toFixed(0).padStart(6)} ms/run more`;
  return [
    `--sandbox (node, no-op bash script, ${bench.rounds} rounds, medians):`,
    line("without --sandbox", bench.plain),
    line("--sandbox (bwrap)", bench.fenced),
    line("--sandbox + an allowed port (relay)", bench.fencedNetwork),
  ].join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(formatSandbox(await benchSandbox({ quick: process.argv.includes("--quick") })));
