/**
 * What the stall sensor (`loopx run --stall-after`) costs: one workspace fingerprint (HEAD, `git
 * status` of every path, the content of each changed or untracked file) in a repository of 10,000
 * tracked files — clean, and with 10 files changed and 10 untracked — and a 50-iteration run of a
 * no-op workflow without the switch and with it (the sensor fingerprints once per iteration; a run
 * without the switch has no part at all). Medians, wall and CPU time.
 *
 * Run alone: `node --import tsx/esm scripts/bench/measures/stall.ts [--quick]` (dist/ built), or as
 * part of `npm run bench` (`--only stall`).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { childrenCpuMs } from "../harness.js";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const DIST_BIN = join(ROOT, "dist", "bin.js");
const FILES = 10_000;
const OLD = new Date(Date.now() - 3_600_000);

interface Cost {
  wall: number;
  cpu: number;
}

export interface StallBench {
  files: number;
  rounds: number;
  /** One fingerprint, in-process (wall; CPU of loopx's process and git's). */
  clean: Cost;
  dirty: Cost;
  /** git's own `status --porcelain --untracked-files=all` on the clean repository: the floor. */
  gitFloor: Cost;
  plain50: Cost;
  sensor50: Cost;
  /** (sensor50 - plain50) / 50. */
  perIteration: Cost;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const medianCost = (costs: Cost[]): Cost => ({ wall: median(costs.map((c) => c.wall)), cpu: median(costs.map((c) => c.cpu)) });

function timedRun(args: string[], cwd: string, env: NodeJS.ProcessEnv): Cost {
  const cpu = childrenCpuMs();
  const start = performance.now();
  const result = spawnSync(process.execPath, [DIST_BIN, ...args], { cwd, env, stdio: ["ignore", "ignore", "pipe"] });
  const wall = performance.now() - start;
  if (result.status !== 0) throw new Error(`loopx ${args.join(" ")} failed: ${result.stderr}`);
  return { wall, cpu: childrenCpuMs() - cpu };
}

function makeRepository(work: string, env: NodeJS.ProcessEnv): string {
  const repo = join(work, "repo");
  for (let d = 0; d < FILES / 100; d++) {
    mkdirSync(join(repo, `d${d}`), { recursive: true });
    for (let f = 0; f < 100; f++) {
      const file = join(repo, `d${d}`, `f${f}.txt`);
      writeFileSync(file, `file ${d}/${f}\n`);
      // An hour old, as a repository's files are: not "racily clean" (written in the second the
      // index was), which git re-reads on every status that may not refresh the index.
      utimesSync(file, OLD, OLD);
    }
  }
  mkdirSync(join(repo, ".loopx", "n"), { recursive: true });
  writeFileSync(join(repo, ".loopx", "n", "index.sh"), "#!/bin/bash\necho '{\"result\":\"x\"}'\n", { mode: 0o755 });
  const git = (...args: string[]) => execFileSync("git", ["-C", repo, ...args], { env, stdio: "ignore" });
  git("init", "-q", "-b", "main");
  git("add", "d*");
  git("commit", "-q", "-m", "10,000 files");
  return repo;
}

type Fingerprint = typeof import("../../../src/stall/fingerprint.js");

async function fingerprintCost(fp: Fingerprint, repo: string, env: NodeJS.ProcessEnv, rounds: number): Promise<Cost> {
  const space = (await fp.findWorkspace(repo, env))!;
  await fp.fingerprint(space); // git's index stat cache warm, as after the first iteration
  const costs: Cost[] = [];
  for (let i = 0; i < rounds; i++) {
    const cpu = childrenCpuMs() + process.cpuUsage().user / 1000 + process.cpuUsage().system / 1000;
    const start = performance.now();
    await fp.fingerprint(space);
    const wall = performance.now() - start;
    costs.push({ wall, cpu: childrenCpuMs() + process.cpuUsage().user / 1000 + process.cpuUsage().system / 1000 - cpu });
  }
  return medianCost(costs);
}

export async function benchStall(options: { quick?: boolean } = {}): Promise<StallBench> {
  const rounds = options.quick ? 3 : 7;
  const work = realpathSync(mkdtempSync(join(tmpdir(), "loopx-bench-stall-")));
  const env = { PATH: process.env.PATH, HOME: work, XDG_STATE_HOME: join(work, "state"), LOOPX_RECORD: "0", GIT_AUTHOR_NAME: "b", GIT_AUTHOR_EMAIL: "b@example.com", GIT_COMMITTER_NAME: "b", GIT_COMMITTER_EMAIL: "b@example.com" };
  try {
    const repo = makeRepository(work, env);
    const fp = (await import(pathToFileURL(join(ROOT, "dist", "stall", "fingerprint.js")).href)) as Fingerprint;
    const clean = await fingerprintCost(fp, repo, env, rounds * 3);
    const floor: Cost[] = [];
    for (let i = 0; i < rounds * 3; i++) {
      const cpu = childrenCpuMs();
      const start = performance.now();
      spawnSync("git", ["-C", repo, "status", "--porcelain", "--untracked-files=all"], { env: { ...env, GIT_OPTIONAL_LOCKS: "0" }, stdio: "ignore" });
      floor.push({ wall: performance.now() - start, cpu: childrenCpuMs() - cpu });
    }
    const plain50: Cost[] = [];
    const sensor50: Cost[] = [];
    for (let i = 0; i < rounds; i++) {
      plain50.push(timedRun(["run", "-n", "50", "n"], repo, env));
      sensor50.push(timedRun(["run", "-n", "50", "--stall-after", "100", "n"], repo, env));
    }
    for (let i = 0; i < 10; i++) {
      writeFileSync(join(repo, `d${i}`, "f0.txt"), `changed ${i}\n`);
      writeFileSync(join(repo, `d${i}`, "new.txt"), `new ${i}\n`);
    }
    const dirty = await fingerprintCost(fp, repo, env, rounds * 3);
    const [p, s] = [medianCost(plain50), medianCost(sensor50)];
    return { files: FILES, rounds, clean, dirty, gitFloor: medianCost(floor), plain50: p, sensor50: s, perIteration: { wall: (s.wall - p.wall) / 50, cpu: (s.cpu - p.cpu) / 50 } };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export function formatStall(result: StallBench): string {
  const ms = (cost: Cost) => `${cost.wall.toFixed(1)} ms wall / ${cost.cpu.toFixed(1)} ms CPU`;
  return [
    `--stall-after on a repository of ${result.files.toLocaleString("en-US")} files (node, median of ${result.rounds}):`,
    `  one fingerprint: ${ms(result.clean)} clean, ${ms(result.dirty)} with 10 changed + 10 untracked files`,
    `  git's floor (git status --porcelain --untracked-files=all): ${ms(result.gitFloor)}`,
    `  run -n 50: ${ms(result.plain50)} without the switch, ${ms(result.sensor50)} with --stall-after: +${ms(result.perIteration)} per iteration`,
    "  without the switch the run has no stall part: nothing is done per iteration",
  ].join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(formatStall(await benchStall({ quick: process.argv.includes("--quick") })));
}
