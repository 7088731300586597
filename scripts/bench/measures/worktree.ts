/**
 * What `loopx run --worktree` costs a run: a repository of 10,000 tracked files (100
 * directories of 100 small files), a no-op workflow that stops at once. `run -n 1 --worktree` (the
 * worktree made, checked out, .loopx/ copied, judged unchanged and removed with its branch) against
 * `run -n 1` in the same tree, alternated, medians; beside it git's own `worktree add` + `worktree
 * remove` + `branch -D` on the same repository, the floor. The worktree part has no per-iteration
 * hook (only `end`): a 50-iteration run is timed both ways to show it. Wall time and CPU time (of
 * every process involved): on a loaded machine git's checkout waits for the disk and the CPU, and
 * CPU time is the steadier number.
 *
 * Run alone: `node --import tsx/esm scripts/bench/measures/worktree.ts [--quick]` (dist/ built), or
 * as part of `npm run bench` (`--only worktree`).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { childrenCpuMs } from "../harness.js";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const DIST_BIN = join(ROOT, "dist", "bin.js");
const FILES = 10_000;

/** Wall and CPU milliseconds. */
export interface Cost {
  wall: number;
  cpu: number;
}

export interface WorktreeBench {
  files: number;
  rounds: number;
  plain: Cost;
  worktree: Cost;
  added: Cost;
  gitFloor: Cost;
  plain50: Cost;
  worktree50: Cost;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

function timed(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Cost {
  const cpu = childrenCpuMs();
  const start = performance.now();
  const result = spawnSync(command, args, { cwd, env, stdio: ["ignore", "ignore", "pipe"] });
  const wall = performance.now() - start;
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed: ${result.stderr}`);
  return { wall, cpu: childrenCpuMs() - cpu };
}

const sum = (...costs: Cost[]): Cost => ({ wall: costs.reduce((t, c) => t + c.wall, 0), cpu: costs.reduce((t, c) => t + c.cpu, 0) });
const medianCost = (costs: Cost[]): Cost => ({ wall: median(costs.map((c) => c.wall)), cpu: median(costs.map((c) => c.cpu)) });

function makeRepository(work: string, env: NodeJS.ProcessEnv): string {
  const repo = join(work, "repo");
  for (let d = 0; d < FILES / 100; d++) {
    mkdirSync(join(repo, `d${d}`), { recursive: true });
    for (let f = 0; f < 100; f++) writeFileSync(join(repo, `d${d}`, `f${f}.txt`), `file ${d}/${f}\n`);
  }
  mkdirSync(join(repo, ".loopx", "n"), { recursive: true });
  writeFileSync(join(repo, ".loopx", "n", "index.sh"), "#!/bin/bash\necho '{\"result\":\"x\"}'\n", { mode: 0o755 });
  const git = (...args: string[]) => execFileSync("git", ["-C", repo, ...args], { env, stdio: "ignore" });
  git("init", "-q", "-b", "main");
  git("add", "d*");
  git("commit", "-q", "-m", "10,000 files");
  return repo;
}

export async function benchWorktree(options: { quick?: boolean } = {}): Promise<WorktreeBench> {
  const rounds = options.quick ? 3 : 7;
  const work = realpathSync(mkdtempSync(join(tmpdir(), "loopx-bench-worktree-")));
  const env = {
    PATH: process.env.PATH,
    HOME: work,
    XDG_STATE_HOME: join(work, "state"),
    LOOPX_RECORD: "0",
    GIT_AUTHOR_NAME: "b",
    GIT_AUTHOR_EMAIL: "b@example.com",
    GIT_COMMITTER_NAME: "b",
    GIT_COMMITTER_EMAIL: "b@example.com",
  };
  try {
    const repo = makeRepository(work, env);
    const plain: Cost[] = [];
    const worktree: Cost[] = [];
    const floor: Cost[] = [];
    const plain50: Cost[] = [];
    const worktree50: Cost[] = [];
    for (let i = 0; i < rounds; i++) {
      plain.push(timed(process.execPath, [DIST_BIN, "run", "-n", "1", "n"], repo, env));
      worktree.push(timed(process.execPath, [DIST_BIN, "run", "-n", "1", "--worktree", "n"], repo, env));
      const path = join(work, `floor-${i}`);
      floor.push(
        sum(
          timed("git", ["-C", repo, "worktree", "add", "-q", "-b", `floor-${i}`, path, "HEAD"], repo, env),
          timed("git", ["-C", repo, "worktree", "remove", "--force", path], repo, env),
          timed("git", ["-C", repo, "branch", "-D", `floor-${i}`], repo, env),
        ),
      );
      plain50.push(timed(process.execPath, [DIST_BIN, "run", "-n", "50", "n"], repo, env));
      worktree50.push(timed(process.execPath, [DIST_BIN, "run", "-n", "50", "--worktree", "n"], repo, env));
    }
    const [p, w] = [medianCost(plain), medianCost(worktree)];
    return {
      files: FILES,
      rounds,
      plain: p,
      worktree: w,
      added: { wall: w.wall - p.wall, cpu: w.cpu - p.cpu },
      gitFloor: medianCost(floor),
      plain50: medianCost(plain50),
      worktree50: medianCost(worktree50),
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export function formatWorktree(result: WorktreeBench): string {
  const ms = (cost: Cost) => `${cost.wall.toFixed(0)} ms wall / ${cost.cpu.toFixed(0)} ms CPU`;
  return [
    `--worktree on a repository of ${result.files.toLocaleString("en-US")} files (node, median of ${result.rounds}):`,
    `  run -n 1: ${ms(result.plain)} plain, ${ms(result.worktree)} with --worktree (made and removed): +${ms(result.added)}`,
    `  git's floor (worktree add + remove + branch -D): ${ms(result.gitFloor)}`,
    `  run -n 50: ${ms(result.plain50)} plain, ${ms(result.worktree50)} with --worktree (no per-iteration cost: the same start)`,
  ].join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(formatWorktree(await benchWorktree({ quick: process.argv.includes("--quick") })));
}
