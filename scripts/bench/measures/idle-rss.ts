/**
 * loopx's memory while its script sleeps: VmRSS of loopx during a recorded run with progress on
 * (LOOPX_PROGRESS=1), its script idle, beside the floor — the bare interpreter of the channel
 * (`node -e`, `bun -e`, the binary as Bun), measured in the same round, alternately. Target: floor
 * + 10 MB. RssAnon (memory of its own) is shown beside it: most of the rest is the interpreter's
 * executable and libraries paged in (RssFile), shared with every other process running them.
 *
 * A third figure says what no loopx code can go under: the bare interpreter with nothing loaded but
 * the Node built-ins that loopx's run path imports (read from the built CLI's static imports). Under
 * Bun, whose built-ins are Node-compatible layers of its own, that alone is most of the +10 MB.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Channel } from "../channels.js";
import { withBefore } from "../before.js";
import { median, sleep } from "../harness.js";
import { fmt, table } from "../report.js";
import { BUN, NODE, QUICK, WORK } from "../setup.js";

const TARGET_MB = 10;

export interface IdleRssResult {
  channel: string;
  build: "now" | "before";
  rssMb: number;
  anonMb: number;
  floorMb: number;
  floorAnonMb: number;
  /** The bare interpreter with the run path's Node built-ins loaded (`now` only). */
  builtinsMb?: number;
  met: boolean;
}

const DIST = fileURLToPath(new URL("../../../dist/", import.meta.url));

/**
 * The Node built-ins that `loopx run` imports as it starts: the static imports of bin.js and of
 * the CLI bundle's files from cli/main.js on (scripts/build.mjs puts a run's code there).
 */
export function runPathBuiltins(dist = DIST): string[] {
  const builtins = new Set<string>();
  const seen = new Set<string>();
  const walk = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const [, specifier] of readFileSync(file, "utf8").matchAll(/^(?:import|export)\b[^;'"]*?["']([^"']+)["']/gm)) {
      if (specifier!.startsWith("node:")) builtins.add(specifier!);
      else if (specifier!.startsWith("./") && file.startsWith(join(dist, "cli"))) walk(resolve(dirname(file), specifier!));
    }
  };
  walk(join(dist, "bin.js"));
  walk(join(dist, "cli", "main.js"));
  return [...builtins].sort();
}

function memory(pid: number): { rss: number; anon: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(status.match(new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m"))?.[1] ?? NaN);
  return { rss: kb("VmRSS") / 1024, anon: kb("RssAnon") / 1024 };
}

/** The bare interpreter of `channel`, idle. */
function floorCommand(channel: Channel): { argv: string[]; env: Record<string, string> } {
  const idle = "setTimeout(() => {}, 1e9)";
  if (channel.name === "node") return { argv: [NODE, "-e", idle], env: {} };
  if (channel.name === "bun") return { argv: [BUN, "-e", idle], env: {} };
  return { argv: [channel.loopx[0]!, "-e", idle], env: { BUN_BE_BUN: "1" } };
}

/** Memory of `argv` once `ready()` (then 1 s more for start-up to settle); the process is ended. */
async function sample(argv: string[], env: Record<string, string>, ready: () => boolean): Promise<{ rss: number; anon: number }> {
  const child = spawn(argv[0]!, argv.slice(1), { env: { ...process.env, ...env }, stdio: "ignore", cwd: join(WORK, "idle-rss") });
  try {
    const deadline = Date.now() + 60_000;
    while (!ready()) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`${argv.join(" ")}: never became idle`);
      await sleep(20);
    }
    await sleep(1000);
    return memory(child.pid!);
  } finally {
    child.kill("SIGINT");
    await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once("exit", resolve)));
  }
}

/** A module that imports `builtins` and idles, for the bare interpreter to run. */
function writeBuiltinsModule(builtins: string[]): string {
  const file = join(WORK, "idle-rss", "builtins.mjs");
  writeFileSync(file, `${builtins.map((id) => `import ${JSON.stringify(id)};`).join("")}setTimeout(() => {}, 1e9);`);
  return file;
}

export async function measureIdleRss(usable: Channel[]): Promise<IdleRssResult[]> {
  const project = join(WORK, "idle-rss");
  const marker = join(project, "idle");
  mkdirSync(join(project, ".loopx", "idle"), { recursive: true });
  writeFileSync(join(project, ".loopx", "idle", "index.sh"), `#!/bin/bash\ntouch "${marker}"\nexec sleep 600\n`, { mode: 0o755 });
  const state = mkdtempSync(join(WORK, "idle-state-"));
  const builtinsModule = writeBuiltinsModule(runPathBuiltins());
  const rounds = QUICK ? 1 : 3;
  const results: IdleRssResult[] = [];
  try {
    for (const { build, channel } of withBefore(usable)) {
      const own: Array<{ rss: number; anon: number }> = [];
      const floor: Array<{ rss: number; anon: number }> = [];
      const loaded: Array<{ rss: number; anon: number }> = [];
      for (let round = 0; round < rounds; round++) {
        rmSync(marker, { force: true });
        own.push(await sample([...channel.loopx, "run", "-n", "1", "idle"], { LOOPX_PROGRESS: "1", XDG_STATE_HOME: state }, () => existsSync(marker)));
        const bare = floorCommand(channel);
        floor.push(await sample(bare.argv, bare.env, () => true));
        if (build === "now") loaded.push(await sample([bare.argv[0]!, builtinsModule], bare.env, () => true));
      }
      const m = (values: Array<{ rss: number; anon: number }>, key: "rss" | "anon") => median(values.map((v) => v[key]));
      const rssMb = m(own, "rss");
      const floorMb = m(floor, "rss");
      const builtinsMb = loaded.length > 0 ? m(loaded, "rss") : undefined;
      results.push({ channel: channel.name, build, rssMb, anonMb: m(own, "anon"), floorMb, floorAnonMb: m(floor, "anon"), ...(builtinsMb === undefined ? {} : { builtinsMb }), met: rssMb <= floorMb + TARGET_MB });
    }
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
  return results;
}

export function printIdleRss(results: IdleRssResult[]): void {
  console.log(`\nidle recorded run with progress on: VmRSS of loopx while its script sleeps, beside the bare interpreter (floor); target <= floor + ${TARGET_MB} MB`);
  console.log(
    table(
      ["channel", "build", "loopx RSS", "floor RSS", "over floor", "loopx RssAnon", "floor RssAnon", "floor + built-ins", "met"],
      results.map((r) => [
        r.channel,
        r.build,
        `${fmt(r.rssMb, 1)} MB`,
        `${fmt(r.floorMb, 1)} MB`,
        `+${fmt(r.rssMb - r.floorMb, 1)} MB`,
        `${fmt(r.anonMb, 1)} MB`,
        `${fmt(r.floorAnonMb, 1)} MB`,
        r.builtinsMb === undefined ? "" : `+${fmt(r.builtinsMb - r.floorMb, 1)} MB`,
        r.met ? "yes" : "NO",
      ]),
    ),
  );
  console.log(`floor + built-ins: the bare interpreter with only the Node built-ins loopx's run imports (${runPathBuiltins().join(", ")}): no loopx code`);
}
