/**
 * loopx loop-overhead benchmark: `npm run bench` (builds dist/ first), or, with dist/ already
 * built, `node --import tsx/esm scripts/bench.ts [--quick] [--rounds N] [--channels node,bun,binary]
 * [--only loop,startup,scripts,ping,rss,idle-rss,install-size,huge-stdout,records,receipts,control,telemetry,runs-show,strays,guardian,worktree,stall,dashboard,sandbox,node-versions]
 * [--binary <path>] [--before <checkout>] [--json <file>] [--keep]`.
 *
 * This file is the runner; each measured thing is one module in scripts/bench/measures/ (a
 * measure function and its table), on top of scripts/bench/setup.ts (options, the benchmark
 * project), channels.ts and harness.ts (processes, the raw driver, timings). A new row: add a
 * module there and one line to MEASURES below.
 *
 * The only unavoidable cost of a loop iteration is starting the script's interpreter. For no-op
 * scripts of each kind (bash, JS, TS, TSX) and for each channel loopx can run in (`node dist/bin.js`,
 * `bun dist/bin.js`, the standalone binary dist/bin/loopx-linux-x64 when it has been built), this
 * measures milliseconds per iteration of `loopx run -n N` against the "raw" physical limit: a
 * minimal driver, on the same runtime as the channel, that starts the same interpreter on the same
 * script in a tight loop with the same wiring loopx uses (new process group; stdin /dev/null,
 * stdout piped and read to the end, stderr inherited — a pipe to this harness for both).
 *
 *   raw (the issue's definition)            raw' (loopx's exact command)
 *   bash     /bin/bash script.sh            as loopx runs it, probed from /proc/<script>/cmdline
 *   node     node --import tsx/esm script   and /proc/<script>/environ on a probe run: preloads,
 *   bun      bun script                     flags and environment (NODE_PATH, LOOPX_*) included
 *   binary   <binary> script (BUN_BE_BUN=1)
 *
 * loopx and raw are measured alternately in rounds and medians are reported (this machine is
 * noisy). loopx ms/iter = (wall time of `run -n N` - median wall time of `run -n 0`) / N.
 *
 * CPU time (user + system of every process involved, from rusage of reaped children) is reported
 * next to wall time: it is far less sensitive to other load on the machine.
 *
 * Run records (records): the bash loop under bun with records on vs off, and the record part's own
 * cost per iteration.
 *
 * Receipts (receipts): a script's receipt() (record only; record + the receipts file of a run
 * with a budget), the run's live reader after a script with one receipt and with none, and a bash
 * script's `loopx receipt`. Target: a receipt ≤ 0.2 ms per iteration.
 *
 * Run control channel (control): the bash loop under bun with the channel on vs off, the part's own
 * cost per iteration and per run.
 *
 * Stray scan (strays): the /proc scan for processes carrying a run's LOOPX_RUN_ID, which runs once
 * when a run ends, timed with 1,000 extra processes on the machine (target < 100 ms).
 *
 * Run guardian (guardian): `run -n 1` and a 1,000-iteration bash loop with the guardian vs without
 * (a bench-only preload takes it out), and the guardian's own spawn-to-gone time.
 *
 * The scripts people write (scripts): no-op TS and JS scripts with and without
 * `import { output, input } from "loopx"` on the machine's Node and Node 22/24/26 (from
 * test/node-versions, installed on demand by scripts/node-versions.mjs), under Bun and in the
 * binary, against each one's physical limit (`node plain.mjs`, raw `bun plain.mjs`), plus Node 20's
 * floor for any module.register loader (an empty hooks worker). `--before <checkout>` measures the
 * loopx of another build (dist/ built there) in the same rounds, for before/after columns.
 *
 * Worktrees (worktree): `run -n 1 --worktree` against `run -n 1` in a 10,000-file repository (the
 * worktree made and removed), beside git's own add + remove; and a 50-iteration run both ways.
 *
 * Stall sensor (stall): one workspace fingerprint in a 10,000-file repository (clean; 10 changed
 * and 10 untracked files), and a 50-iteration run without and with --stall-after.
 *
 * Dashboard (dashboard): `loopx runs serve` in Chromium: a 100,000-iteration run's page interactive
 * (target < 1 s), the server's memory, and a live event's way from the record to an open page
 * (target < 500 ms).
 *
 * Per Node version (node-versions): `loopx output --stop` against `node -e 0`.
 *
 * Lean (install-size, idle-rss, huge-stdout's structured row, runs-show): the npm install's size
 * (packed, installed into a fresh prefix; target 20 MB), loopx's RSS in an idle recorded run beside
 * the bare interpreter's (target + 10 MB), a 300 MB structured stdout's peak (target 1.5×) and `runs
 * show` of 100,000 iterations beside `wc -l` (target 0.5 s): each beside its floor, and with
 * `--before <checkout>` beside the old build's, measured in the same round.
 *
 * Also measured: start-up of `loopx version` / `loopx output` per channel; loopx's RSS and open fds (from
 * /proc/<pid>) at bash iteration 100 and 10,000 (the channels' long loops run concurrently);
 * iterations/s of a goto ping-pong between two bash scripts handing a 1 MB `result` to each other
 * through stdin.
 *
 * A default run takes about 3-4 minutes on 2 cores, --quick about 1 minute. Nothing is asserted:
 * targets are printed as met / NO for a person to read (timed assertions would be flaky here).
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { channels, type Channel } from "./bench/channels.js";
import { type Timing, loopxRun, medianTiming, runOk } from "./bench/harness.js";
import { measureLoop, printLoop } from "./bench/measures/loop.js";
import { measureNodeVersions, printNodeVersions } from "./bench/measures/node-versions.js";
import { measurePingPong, printPingPong } from "./bench/measures/ping-pong.js";
import { benchControl, formatControl } from "./bench/measures/control.js";
import { benchTelemetry, formatTelemetry } from "./bench/measures/telemetry.js";
import { benchDashboard, formatDashboard } from "./bench/measures/dashboard.js";
import { benchRecords, formatRecords } from "./bench/measures/records.js";
import { benchReceipts, formatReceipts } from "./bench/measures/receipts.js";
import { measureRss, printRss } from "./bench/measures/rss.js";
import { measureIdleRss, printIdleRss } from "./bench/measures/idle-rss.js";
import { measureInstallSize, printInstallSize } from "./bench/measures/install-size.js";
import { measureHugeStdout, printHugeStdout } from "./bench/measures/huge-stdout.js";
import { benchRunsShow, formatRunsShow } from "./bench/measures/runs-show.js";
import { measureScripts, printScripts } from "./bench/measures/scripts.js";
import { measureStartup, printStartup } from "./bench/measures/startup.js";
import { benchStrays, formatStrays } from "./bench/measures/strays.js";
import { benchGuardian, formatGuardian } from "./bench/measures/guardian.js";
import { benchWorktree, formatWorktree } from "./bench/measures/worktree.js";
import { benchSandbox, formatSandbox } from "./bench/measures/sandbox.js";
import { benchStall, formatStall } from "./bench/measures/stall.js";
import { fmt, loadAverage } from "./bench/report.js";
import { BUDGET_MS, BUN, JSON_OUT, KEEP, QUICK, ROUNDS, RSS_ITERATIONS, WORK, createProject, flagValue } from "./bench/setup.js";

/** What the measures share: the channels, and `run -n 0` start-up per channel (from the loop measure, or measured on demand). */
interface Context {
  usable: Channel[];
  notes: string[];
  startupTimes: Map<string, Timing>;
}

async function startupTimes(context: Context): Promise<Map<string, Timing>> {
  for (const channel of context.usable) {
    if (context.startupTimes.has(channel.name)) continue;
    const samples: Timing[] = [];
    for (let i = 0; i < 3; i++) samples.push(await loopxRun(channel, "sh", 0));
    context.startupTimes.set(channel.name, medianTiming(samples));
  }
  return context.startupTimes;
}

interface Measure {
  id: string;
  title: string;
  /** Measures, and returns what prints its table (printed after every measure ran) and its JSON. */
  run(context: Context): Promise<{ print(): void; json: unknown }>;
}

const MEASURES: Measure[] = [
  {
    id: "loop",
    title: "loopx vs raw per iteration",
    async run(context) {
      const loop = await measureLoop(context.usable, context.notes);
      context.usable = loop.usable;
      for (const [name, timing] of loop.startupTimes) context.startupTimes.set(name, timing);
      return { print: () => printLoop(loop), json: { loop: loop.results, runStartup: Object.fromEntries(loop.startupTimes) } };
    },
  },
  {
    id: "startup",
    title: "start-up",
    async run(context) {
      const startup = await measureStartup(context.usable);
      return { print: () => printStartup(startup), json: { startup } };
    },
  },
  {
    id: "scripts",
    title: 'TS/JS scripts with and without import "loopx", per Node version and channel',
    async run() {
      const scripts = await measureScripts();
      return { print: () => printScripts(scripts), json: { scripts } };
    },
  },
  {
    id: "ping",
    title: "1 MB ping-pong",
    async run(context) {
      const ping = await measurePingPong(context.usable, await startupTimes(context));
      return { print: () => printPingPong(ping), json: { ping } };
    },
  },
  {
    id: "huge-stdout",
    title: "peak RSS while a script writes 300 MB to stdout (and to stderr)",
    async run(context) {
      const hugeStdout = measureHugeStdout(context.usable, QUICK ? 100 : 300);
      return { print: () => printHugeStdout(hugeStdout), json: { hugeStdout } };
    },
  },
  {
    id: "rss",
    title: `RSS and fds over ${RSS_ITERATIONS} iterations`,
    async run(context) {
      const rss = await measureRss(context.usable);
      return { print: () => printRss(rss), json: { rss } };
    },
  },
  {
    id: "idle-rss",
    title: "loopx's RSS in an idle recorded run, beside the bare interpreter",
    async run(context) {
      const idleRss = await measureIdleRss(context.usable);
      return { print: () => printIdleRss(idleRss), json: { idleRss } };
    },
  },
  {
    id: "install-size",
    title: "npm install size of the packed package",
    async run() {
      const installSize = measureInstallSize();
      return { print: () => printInstallSize(installSize), json: { installSize } };
    },
  },
  {
    id: "records",
    title: "run records on vs off (bun)",
    async run(context) {
      if (!context.usable.some((channel) => channel.name === "bun")) return { print: () => {}, json: {} };
      const records = await benchRecords({ quick: QUICK });
      return { print: () => console.log(`\n${formatRecords(records)}`), json: { records } };
    },
  },
  {
    id: "receipts",
    title: "receipts: receipt(), the live reader of a run with a budget, loopx receipt",
    async run() {
      const receipts = await benchReceipts({ quick: QUICK });
      return { print: () => console.log(`\n${formatReceipts(receipts)}`), json: { receipts } };
    },
  },
  {
    id: "runs-show",
    title: "runs show of a 100,000-iteration record",
    async run() {
      const runsShow = await benchRunsShow({ quick: QUICK });
      return { print: () => console.log(`\n${formatRunsShow(runsShow)}`), json: { runsShow } };
    },
  },
  {
    id: "control",
    title: "run control channel on vs off (bun)",
    async run(context) {
      if (!context.usable.some((channel) => channel.name === "bun")) return { print: () => {}, json: {} };
      const control = await benchControl({ quick: QUICK });
      return { print: () => console.log(`\n${formatControl(control)}`), json: { control } };
    },
  },
  {
    id: "telemetry",
    title: "OpenTelemetry off vs on (bun)",
    async run(context) {
      if (!context.usable.some((channel) => channel.name === "bun")) return { print: () => {}, json: {} };
      const telemetry = await benchTelemetry({ quick: QUICK });
      return { print: () => console.log(`\n${formatTelemetry(telemetry)}`), json: { telemetry } };
    },
  },
  {
    id: "strays",
    title: "stray scan with 1,000 processes",
    async run() {
      const strays = await benchStrays({ quick: QUICK });
      return { print: () => console.log(`\n${formatStrays(strays)}`), json: { strays } };
    },
  },
  {
    id: "guardian",
    title: "run guardian: per run, and a 1,000-iteration loop with vs without",
    async run() {
      const guardian = await benchGuardian({ quick: QUICK });
      return { print: () => console.log(`\n${formatGuardian(guardian)}`), json: { guardian } };
    },
  },
  {
    id: "worktree",
    title: "--worktree: made and removed in a 10,000-file repository",
    async run() {
      const worktree = await benchWorktree({ quick: QUICK });
      return { print: () => console.log(`\n${formatWorktree(worktree)}`), json: { worktree } };
    },
  },
  {
    id: "sandbox",
    title: "--sandbox: per iteration and per run (set-up and probe)",
    async run() {
      const sandbox = await benchSandbox({ quick: QUICK });
      return { print: () => console.log(`\n${formatSandbox(sandbox)}`), json: { sandbox } };
    },
  },
  {
    id: "stall",
    title: "--stall-after: one fingerprint of a 10,000-file repository, a 50-iteration run with and without",
    async run() {
      const stall = await benchStall({ quick: QUICK });
      return { print: () => console.log(`\n${formatStall(stall)}`), json: { stall } };
    },
  },
  {
    id: "dashboard",
    title: "dashboard: 100,000-iteration page, live latency",
    async run() {
      const dashboard = await benchDashboard({ quick: QUICK });
      return { print: () => console.log(`\n${formatDashboard(dashboard)}`), json: { dashboard } };
    },
  },
  {
    id: "node-versions",
    title: "per Node version",
    async run() {
      const nodeVersions = await measureNodeVersions();
      return { print: () => printNodeVersions(nodeVersions), json: { nodeVersions } };
    },
  },
];

function selected(): Measure[] {
  const only = flagValue("--only");
  if (only === undefined) return MEASURES;
  const ids = only.split(",");
  const unknown = ids.filter((id) => !MEASURES.some((m) => m.id === id));
  if (unknown.length) {
    console.error(`bench: unknown --only ${unknown.join(", ")} (measures: ${MEASURES.map((m) => m.id).join(", ")})`);
    process.exit(2);
  }
  return MEASURES.filter((m) => ids.includes(m.id));
}

async function main(): Promise<void> {
  const measures = selected();
  createProject();
  const { active, notes } = channels();
  const startedAt = performance.now();
  const cpus = readFileSync("/proc/cpuinfo", "utf8").match(/^processor\s*:/gm)?.length ?? "?";
  console.log(
    `loopx bench${QUICK ? " (--quick)" : ""}: ${ROUNDS} rounds, ~${BUDGET_MS} ms per measurement; node ${process.version}, ` +
      `bun ${(await runOk([BUN, "--version"])).stdout.trim()}, ${cpus} CPUs, load ${loadAverage()}`,
  );
  console.log(`measures: ${measures.map((m) => m.id).join(", ")}; channels: ${active.map((c) => c.name).join(", ")}; project in ${WORK}`);
  for (const note of notes) console.log(`note: ${note}`);

  const context: Context = { usable: active, notes, startupTimes: new Map() };
  const phases: string[] = [];
  const done: Array<{ print(): void; json: unknown }> = [];
  for (const measure of measures) {
    process.stderr.write(`measuring ${measure.title}...\n`);
    const t0 = performance.now();
    done.push(await measure.run(context));
    phases.push(`${measure.title} ${fmt((performance.now() - t0) / 1000, 0)} s`);
  }
  for (const result of done) result.print();
  for (const note of notes) console.log(`note: ${note}`);
  console.log(`\nbench took ${fmt((performance.now() - startedAt) / 1000, 0)} s (${phases.join(", ")}); load now ${loadAverage()}`);
  if (JSON_OUT) {
    writeFileSync(JSON_OUT, JSON.stringify(Object.assign({ quick: QUICK, rounds: ROUNDS, notes }, ...done.map((d) => d.json)), null, 2) + "\n");
    console.log(`wrote ${JSON_OUT}`);
  }
}

process.on("SIGINT", () => {
  if (!KEEP) rmSync(WORK, { recursive: true, force: true });
  process.exit(130);
});

try {
  await main();
} catch (error) {
  console.error(`bench failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
} finally {
  if (KEEP) console.log(`kept ${WORK}`);
  else rmSync(WORK, { recursive: true, force: true });
}
