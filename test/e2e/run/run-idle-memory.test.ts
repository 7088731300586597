/**
 * loopx's own memory while its script sleeps (a guard, quick: one sample per channel): a recorded
 * run with progress on, under node, bun and the binary, beside the bare interpreter of the same
 * channel sampled the same way. What is held is loopx's private memory (RssAnon of
 * /proc/<pid>/status: its heap, modules compiled, buffers): at most 12 MB over the interpreter's
 * own. The rest of VmRSS is the interpreter's executable paged in (RssFile), shared with every
 * process running it; `npm run bench` (idle-rss) prints both beside the target of floor + 10 MB.
 * Under Node that target is held here too, on the whole VmRSS: what a run loads used to make Node
 * compile its module loader with TurboFan, whose code paged in was ~4 MB of it (scripts/build.mjs
 * RUN_PATH). Bun pays more for its Node built-ins alone (`npm run bench`'s notes).
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { CLIS, isolatedEnv, linuxOnly, makeProject, sleep, type Cli } from "../../helpers.js";

/** Private memory loopx may hold over its interpreter's, in MB. */
const OVER_FLOOR_MB = 12;
/** All the memory (VmRSS) a run under Node may hold over Node's own, in MB (issue 43's target). */
const NODE_OVER_FLOOR_MB = 10;

function memoryMb(pid: number): { rss: number; anon: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(status.match(new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m"))?.[1]);
  return { rss: kb("VmRSS") / 1024, anon: kb("RssAnon") / 1024 };
}

/** The memory of `argv` once `ready()` and a second more; then it is interrupted and awaited. */
async function idleMemory(argv: string[], env: Record<string, string>, cwd: string, ready: () => boolean): Promise<{ rss: number; anon: number }> {
  const child = spawn(argv[0]!, argv.slice(1), { cwd, env, stdio: "ignore" });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  try {
    for (let waited = 0; !ready(); waited += 20) {
      if (waited > 60_000 || child.exitCode !== null) throw new Error(`${argv.join(" ")} never went idle`);
      await sleep(20);
    }
    await sleep(1000);
    return memoryMb(child.pid!);
  } finally {
    child.kill("SIGINT");
    await exited;
  }
}

/** The bare interpreter behind `cli`, idle. */
function bare(cli: Cli): { argv: string[]; env: Record<string, string> } {
  const idle = "setTimeout(() => {}, 1e9)";
  return { argv: [cli.exe, "-e", idle], env: cli.name === "binary" ? { BUN_BE_BUN: "1" } : {} };
}

/** loopx idle in a recorded run with progress on, and then `cli`'s bare interpreter, sampled alike. */
async function idleBeside(cli: Cli): Promise<{ loopx: { rss: number; anon: number }; interpreter: { rss: number; anon: number } }> {
  const cwd = makeProject({ ".loopx/idle/index.sh": '#!/bin/bash\ntouch "$LOOPX_PROJECT_ROOT/idle"\nexec sleep 600\n' });
  const env = isolatedEnv({ LOOPX_PROGRESS: "1" });
  const loopx = await idleMemory([cli.exe, ...cli.prefix, "run", "-n", "1", "idle"], env, cwd, () => existsSync(join(cwd, "idle")));
  const floor = bare(cli);
  const interpreter = await idleMemory(floor.argv, { ...env, ...floor.env }, cwd, () => true);
  return { loopx, interpreter };
}

linuxOnly("loopx's own memory, idle", () => {
  it.each(CLIS)("$name: an idle recorded run with progress on holds at most 12 MB of its own over its interpreter", async (cli) => {
    const { loopx, interpreter } = await idleBeside(cli);
    expect(interpreter.anon).toBeGreaterThan(0);
    expect(loopx.anon - interpreter.anon, `loopx ${loopx.anon.toFixed(1)} MB private (${loopx.rss.toFixed(1)} MB RSS), ${cli.name} alone ${interpreter.anon.toFixed(1)} MB (${interpreter.rss.toFixed(1)} MB)`).toBeLessThanOrEqual(OVER_FLOOR_MB);
  }, 90_000);

  it("node: an idle recorded run with progress on holds at most 10 MB of RSS over node's own", async () => {
    const { loopx, interpreter } = await idleBeside(CLIS.find((candidate) => candidate.name === "node")!);
    expect(loopx.rss - interpreter.rss, `loopx ${loopx.rss.toFixed(1)} MB, node alone ${interpreter.rss.toFixed(1)} MB`).toBeLessThanOrEqual(NODE_OVER_FLOOR_MB);
  }, 90_000);
});
