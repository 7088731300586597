/**
 * The JS/TS scripts people write: almost every one imports `output`/`input` from
 * "loopx". Per Node version (the machine's, then 22/24/26 from test/node-versions), under Bun and in
 * the standalone binary: ms per iteration of `loopx run -n N` for a no-op TS and JS script, each
 * with and without `import { output, input } from "loopx"`, against the physical limit of the
 * channel — `node plain.mjs` on the same Node, raw `bun plain.mjs` for Bun and the binary — all
 * side by side in alternating rounds (medians; loopx ms/iter = (wall(-n N) - wall(-n 0)) / N).
 *
 * Also measured beside them (floors): on a Node without module.registerHooks (Node 20), the floor
 * of any loader there — `node --import <register an empty hooks module> plain.mjs`, which pays
 * for module.register's hooks worker and nothing else; for Bun and the binary, raw bun on plain.mjs
 * importing an empty `loopx` package through NODE_PATH (what any import resolved that way costs);
 * for the binary, the binary itself acting as Bun (`BUN_BE_BUN=1 <binary> plain.mjs`). With `--before <dir>` (a checkout with dist/ built, and
 * dist/bin/ for the binary), the same loopx rows of that build are measured in the same rounds.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ensureNodeVersions, nodeVersions } from "../../node-versions.mjs";
import type { Channel } from "../channels.js";
import { type RawCommand, type Timing, loopxRun, medianTiming, perIteration, rawPerIteration, runOk } from "../harness.js";
import { fmt, table } from "../report.js";
import { BASE_ENV, BINARY, BUDGET_MS, BUN, CHANNEL_FILTER, DIST_BIN, MAX_N, MIN_N, NODE, PROJECT, ROUNDS, WORK, flagValue } from "../setup.js";

/** The four scripts, by workflow name in the bench project (setup.ts). */
export const SCRIPT_ROWS = [
  { workflow: "ts", label: "TS" },
  { workflow: "tsi", label: "TS + import" },
  { workflow: "js", label: "JS" },
  { workflow: "jsi", label: "JS + import" },
] as const;
type Workflow = (typeof SCRIPT_ROWS)[number]["workflow"];

type FloorId = "hooksWorker" | "binaryAsBun" | "bunImport";
const FLOOR_TEXT: Record<FloorId, string> = {
  // Node without module.registerHooks (Node 20): any loader there runs module.register's hooks worker.
  hooksWorker: "floor of a module.register loader (plain.mjs + an empty hooks worker)",
  // What the binary adds by itself, before any preload: none expected.
  binaryAsBun: "the binary acting as Bun (BUN_BE_BUN=1 <binary> plain.mjs)",
  // Bun's cost of any bare import resolved through NODE_PATH, as loopx provides "loopx".
  bunImport: "raw bun, plain.mjs importing an empty `loopx` package through NODE_PATH",
};

/** What `plain.mjs` holds: the no-op scripts' code, already JavaScript. */
const PLAIN = "const noop = 0;\nvoid noop;\nexport {};\n";

interface Target {
  label: string;
  kind: "node" | "bun" | "binary";
  /** loopx of this build, and of the --before build when given. */
  loopx: Channel;
  before?: Channel;
  limit: RawCommand & { driver: Channel; label: string };
  /** Other floors measured beside the limit (see FLOOR_TEXT). */
  floors: Array<RawCommand & { driver: Channel; id: FloorId }>;
}

export interface ScriptsRow {
  label: string;
  kind: Target["kind"];
  n: number;
  limitLabel: string;
  limitMs: number;
  limitCpuMs: number;
  /** ms per start of each floor measured for this row. */
  floors: Partial<Record<FloorId, number>>;
  /** ms per iteration by workflow, this build and (when measured) the --before build. */
  after: Record<Workflow, number>;
  before?: Record<Workflow, number>;
  afterCpu: Record<Workflow, number>;
}

function channel(name: Channel["name"], loopx: string[], driver: string[], rawEnv: Record<string, string> = {}): Channel {
  return { name, loopx, driver, rawEnv, rawScript: (path) => [...driver, path], rawLabel: "" };
}

function targets(plain: string, importing: string): Target[] {
  const beforeRoot = flagValue("--before");
  const beforeBin = beforeRoot && join(beforeRoot, "dist", "bin.js");
  if (beforeBin && !existsSync(beforeBin)) throw new Error(`--before ${beforeRoot}: ${beforeBin} does not exist (build it there first)`);
  const cwd = PROJECT;
  const list: Target[] = [];
  const bunImportFloor = { id: "bunImport" as const, cmd: [BUN, importing], env: { ...BASE_ENV, NODE_PATH: join(WORK, "empty-node-path") }, cwd };
  if (CHANNEL_FILTER.has("node")) {
    ensureNodeVersions();
    for (const exe of [NODE, ...(nodeVersions() as { exe: string }[]).map((v) => v.exe)]) {
      const driver = channel("node", [exe], [exe]);
      list.push({
        label: "node",
        kind: "node",
        loopx: channel("node", [exe, DIST_BIN], [exe]),
        before: beforeBin ? channel("node", [exe, beforeBin], [exe]) : undefined,
        limit: { cmd: [exe, plain], env: BASE_ENV, cwd, driver, label: "node plain.mjs" },
        floors: [],
      });
    }
  }
  const bun = channel("bun", [BUN], [BUN]);
  if (CHANNEL_FILTER.has("bun")) {
    list.push({
      label: "bun",
      kind: "bun",
      loopx: channel("bun", [BUN, DIST_BIN], [BUN]),
      before: beforeBin ? channel("bun", [BUN, beforeBin], [BUN]) : undefined,
      limit: { cmd: [BUN, plain], env: BASE_ENV, cwd, driver: bun, label: "bun plain.mjs" },
      floors: [{ ...bunImportFloor, driver: bun }],
    });
  }
  if (CHANNEL_FILTER.has("binary") && existsSync(BINARY)) {
    const beforeBinary = beforeRoot && join(beforeRoot, "dist", "bin", BINARY.slice(BINARY.lastIndexOf("/") + 1));
    list.push({
      label: "binary",
      kind: "binary",
      loopx: channel("binary", [BINARY], [BUN]),
      before: beforeBinary && existsSync(beforeBinary) ? channel("binary", [beforeBinary], [BUN]) : undefined,
      limit: { cmd: [BUN, plain], env: BASE_ENV, cwd, driver: bun, label: "bun plain.mjs" },
      floors: [
        { id: "binaryAsBun", cmd: [BINARY, plain], env: { ...BASE_ENV, BUN_BE_BUN: "1" }, cwd, driver: bun },
        { ...bunImportFloor, driver: bun },
      ],
    });
  }
  return list;
}

export async function measureScripts(): Promise<ScriptsRow[]> {
  const plain = join(WORK, "plain.mjs");
  writeFileSync(plain, PLAIN);
  // The floor of a module.register loader: a hooks module that defines no hook at all.
  writeFileSync(join(WORK, "empty-hooks.mjs"), "");
  const floorRegister = join(WORK, "register-empty-hooks.mjs");
  writeFileSync(floorRegister, `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(join(WORK, "empty-hooks.mjs")).href)});\n`);
  // Bun's floor for a script with an import: the same no-op code importing an empty package named
  // loopx through NODE_PATH (as loopx provides it to scripts under Bun and in the binary).
  const importing = join(WORK, "importing.mjs");
  writeFileSync(importing, `import { input, output } from "loopx";\n${PLAIN}void input;\nvoid output;\n`);
  mkdirSync(join(WORK, "empty-node-path", "loopx"), { recursive: true });
  writeFileSync(join(WORK, "empty-node-path", "loopx", "package.json"), '{ "name": "loopx", "type": "module", "main": "./index.js" }\n');
  writeFileSync(join(WORK, "empty-node-path", "loopx", "index.js"), "export const input = 0, output = 0;\n");
  const list = targets(plain, importing);
  const rows: ScriptsRow[] = [];
  for (const target of list) {
    const exe = target.limit.cmd[0]!;
    const version = (await runOk([exe, "--version"])).stdout.trim();
    if (target.kind === "node") target.label = `node ${version.replace(/^v/, "").split(".")[0]} (${version})`;
    if (target.kind === "bun") target.label = `bun ${version}`;
    process.stderr.write(`  ${target.label}\n`);
    if (target.kind === "node" && !(await hasRegisterHooks(exe))) {
      target.floors.push({ id: "hooksWorker", cmd: [exe, "--import", pathToFileURL(floorRegister).href, plain], env: BASE_ENV, cwd: PROJECT, driver: target.limit.driver });
    }
    const builds = [target.loopx, ...(target.before ? [target.before] : [])];
    // Warm loopx's transform cache, the binary's helper cache and the file cache.
    for (const build of builds) for (const { workflow } of SCRIPT_ROWS) await loopxRun(build, workflow, 1);
    const estimate = await rawPerIteration(target.limit.driver, target.limit, 3, 2);
    const n = Math.max(MIN_N, Math.min(MAX_N, Math.round(BUDGET_MS / estimate.ms)));
    const samples = new Map<string, Timing[]>();
    const push = (key: string, timing: Timing) => (samples.get(key) ?? samples.set(key, []).get(key)!).push(timing);
    for (let round = 0; round < ROUNDS; round++) {
      const steps: Array<() => Promise<unknown>> = [
        async () => push("limit", await rawPerIteration(target.limit.driver, target.limit, n, 1)),
        ...target.floors.map((floor) => async () => push(floor.id, await rawPerIteration(floor.driver, floor, n, 1))),
      ];
      builds.forEach((build, b) => {
        steps.push(async () => push(`${b}:start`, await loopxRun(build, "sh", 0)));
        for (const { workflow } of SCRIPT_ROWS) steps.push(async () => push(`${b}:${workflow}`, await loopxRun(build, workflow, n)));
      });
      // Alternate the order, so drift in the machine's load does not favour one side.
      if (round % 2 === 1) steps.reverse();
      for (const step of steps) await step();
    }
    const perIter = (b: number, workflow: Workflow) => medianTiming(perIteration(samples.get(`${b}:${workflow}`)!, medianTiming(samples.get(`${b}:start`)!), n));
    const byWorkflow = (b: number, pick: (t: Timing) => number) =>
      Object.fromEntries(SCRIPT_ROWS.map(({ workflow }) => [workflow, pick(perIter(b, workflow))])) as Record<Workflow, number>;
    rows.push({
      label: target.label,
      kind: target.kind,
      n,
      limitLabel: target.limit.label,
      limitMs: medianTiming(samples.get("limit")!).ms,
      limitCpuMs: medianTiming(samples.get("limit")!).cpuMs,
      floors: Object.fromEntries(target.floors.map((floor) => [floor.id, medianTiming(samples.get(floor.id)!).ms])),
      after: byWorkflow(0, (t) => t.ms),
      before: target.before ? byWorkflow(1, (t) => t.ms) : undefined,
      afterCpu: byWorkflow(0, (t) => t.cpuMs),
    });
  }
  return rows;
}

async function hasRegisterHooks(exe: string): Promise<boolean> {
  return (await runOk([exe, "-p", 'typeof require("node:module").registerHooks'])).stdout.trim() === "function";
}

/** The targets, per row: [description, met]. */
export function targetsFor(row: ScriptsRow): Array<[string, boolean]> {
  const { after, limitMs } = row;
  const checks: Array<[string, boolean]> = [];
  const worker = row.floors.hooksWorker;
  if (worker !== undefined) {
    // Node without module.registerHooks (Node 20): a script importing "loopx" needs module.register's
    // hooks worker, whose empty floor is already far above `node plain.mjs`. A .js script without
    // the import needs no hooks at all there (hookless-script.ts), so for JS the import costs the
    // worker: only TS compares like with like.
    checks.push(["TS+import <= 1.10 x hooks-worker floor", after.tsi <= 1.1 * worker]);
    checks.push(["JS+import <= 1.10 x hooks-worker floor", after.jsi <= 1.1 * worker]);
    checks.push(["import adds <= 2 ms (TS)", after.tsi - after.ts <= 2]);
    return checks;
  }
  const limitRatio = row.kind === "node" ? 1.2 : 1.1;
  checks.push([`TS+import <= ${limitRatio} x limit`, after.tsi <= limitRatio * limitMs]);
  checks.push([`JS+import <= ${limitRatio} x limit`, after.jsi <= limitRatio * limitMs]);
  checks.push(["import adds <= 2 ms (TS, JS)", after.tsi - after.ts <= 2 && after.jsi - after.js <= 2]);
  return checks;
}

export function printScripts(rows: ScriptsRow[]): void {
  console.log('\n== Scripts people write: loopx run -n N per iteration, with and without `import { output, input } from "loopx"` ==');
  console.log("   (medians of alternating rounds, wall ms; ratio = / the channel's limit; records on, the default)");
  const cell = (ms: number, limit: number) => `${fmt(ms, 1)} (${fmt(ms / limit, 2)}x)`;
  const lines: string[][] = [];
  for (const row of rows) {
    const builds: Array<[string, Record<Workflow, number>]> = row.before ? [["after", row.after], ["before", row.before]] : [["", row.after]];
    for (const [which, times] of builds) {
      lines.push([
        which === "before" ? "" : row.label,
        which,
        which === "before" ? "" : `${fmt(row.limitMs, 1)} ms`,
        ...SCRIPT_ROWS.map(({ workflow }) => cell(times[workflow], row.limitMs)),
        `${fmt(times.tsi - times.ts, 1)} / ${fmt(times.jsi - times.js, 1)}`,
      ]);
    }
  }
  console.log(table(["channel", "build", "plain start", ...SCRIPT_ROWS.map((r) => r.label), "import adds TS / JS"], lines));
  console.log("plain start: `node plain.mjs` on the same Node; raw `bun plain.mjs` for bun and the binary.");
  for (const row of rows) {
    for (const [id, ms] of Object.entries(row.floors) as Array<[FloorId, number]>) {
      const ratio = (ms: number) => `${fmt(ms / row.limitMs, 2)}x the limit`;
      const scripts = id === "binaryAsBun" ? "" : `; TS+import ${fmt(row.after.tsi / ms, 2)}x, JS+import ${fmt(row.after.jsi / ms, 2)}x, TS ${fmt(row.after.ts / ms, 2)}x that floor`;
      console.log(`${row.label}: ${FLOOR_TEXT[id]}: ${fmt(ms, 1)} ms (${ratio(ms)})${scripts}`);
    }
  }
  console.log("\nTargets (this build; CPU = user+sys of every process, per iteration, far less sensitive to load):");
  console.log(
    table(
      ["channel", "", "N", "CPU ms: limit / TS / TS+import / JS / JS+import", "targets"],
      rows.map((row) => [
        row.label,
        "",
        String(row.n),
        [row.limitCpuMs, ...SCRIPT_ROWS.map(({ workflow }) => row.afterCpu[workflow])].map((ms) => fmt(ms, 1)).join(" / "),
        targetsFor(row)
          .map(([what, met]) => `${what}: ${met ? "yes" : "NO"}`)
          .join("; "),
      ]),
    ),
  );
}
