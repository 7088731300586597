/**
 * Start-up stays lean (regression guard, not a timing test): the commands that bash scripts call
 * on every iteration (`loopx output`) and the trivial ones (`version`, `env`, help) must not load
 * the heavy dependencies — tar, semver, tsx (and what they pull in: esbuild, minipass, minizlib) —
 * nor the install code or the script loader. The loaded modules are recorded from inside the CLI
 * process: under Node by a preloaded module that registers a `load` hook (ES modules, builtins and
 * the CommonJS entry points imported from ESM) and dumps `require.cache` at exit (CommonJS loaded
 * by `require`); under Bun by a preload that dumps `require.cache`, which there holds every module.
 *
 * STARTUP_GUARD_DIST (optional) points at another built dist/ to check, e.g. a scratch copy with a
 * deliberate forbidden import, to see this test fail.
 */
import { readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, ROOT, RUNTIMES, isolatedEnv, makeProject, runCommand, tempDir, type Runtime } from "./helpers.js";

const GUARD_BIN = realpathSync(process.env.STARTUP_GUARD_DIST ? join(process.env.STARTUP_GUARD_DIST, "bin.js") : BIN);

/** What must never be loaded by the lean commands. */
const FORBIDDEN = [
  /\/node_modules\/(?:tar|semver|tsx|esbuild|minipass|minizlib|@esbuild)\//,
  /\/dist\/install\//,
  /\/dist\/runtime\/loader\//,
];

const COMMANDS: Array<{ name: string; args: string[] }> = [
  { name: "version", args: ["version"] },
  { name: "output --result", args: ["output", "--result", "x"] },
  { name: "output --goto --stop", args: ["output", "--goto", "w:next", "--stop"] },
  { name: "env list", args: ["env", "list"] },
  { name: "env set", args: ["env", "set", "KEY", "value"] },
  { name: "-h", args: ["-h"] },
  { name: "run -h", args: ["run", "-h"] },
];

let recorderDir: string;
let nodeRecorder: string;
let bunRecorder: string;
/** Directories this file creates, removed at the end. */
const scratch: string[] = [];

afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

beforeAll(() => {
  recorderDir = tempDir("loopx-startup-guard-");
  scratch.push(recorderDir);
  // Runs on Node's module-hooks thread: every module the CLI loads passes through `load`.
  writeFileSync(
    join(recorderDir, "hooks.mjs"),
    `import { appendFileSync } from "node:fs";
export async function load(url, context, nextLoad) {
  if (process.env.STARTUP_GUARD_LOG) appendFileSync(process.env.STARTUP_GUARD_LOG, url + "\\n");
  return nextLoad(url, context);
}
`,
  );
  nodeRecorder = join(recorderDir, "node-recorder.mjs");
  writeFileSync(
    nodeRecorder,
    `import { appendFileSync } from "node:fs";
import { createRequire, register } from "node:module";
register(${JSON.stringify(pathToFileURL(join(recorderDir, "hooks.mjs")).href)});
const require = createRequire(import.meta.url);
process.on("exit", () => {
  const cjs = Object.keys(require.cache);
  if (cjs.length) appendFileSync(process.env.STARTUP_GUARD_LOG, cjs.join("\\n") + "\\n");
});
`,
  );
  bunRecorder = join(recorderDir, "bun-recorder.mjs");
  writeFileSync(
    bunRecorder,
    `import { appendFileSync } from "node:fs";
process.on("exit", () => {
  appendFileSync(process.env.STARTUP_GUARD_LOG, Object.keys(require.cache).join("\\n") + "\\n");
});
`,
  );
});

let logCounter = 0;

/** Runs `entry ...args` under `runtime` with the recorder preloaded; returns the loaded module paths. */
async function loadedModules(runtime: Runtime, entry: string, args: string[], cwd: string): Promise<{ modules: string[]; code: number | null; stderr: string }> {
  const log = join(recorderDir, `loaded-${runtime.name}-${++logCounter}.txt`);
  writeFileSync(log, "");
  const preload = runtime.name === "node" ? ["--import", pathToFileURL(nodeRecorder).href] : ["--preload", bunRecorder];
  const result = await runCommand(runtime.exe, [...preload, entry, ...args], { cwd, env: isolatedEnv({ STARTUP_GUARD_LOG: log }) });
  const modules = readFileSync(log, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((entry) => (entry.startsWith("file://") ? new URL(entry).pathname : entry));
  return { modules: [...new Set(modules)], code: result.code, stderr: result.stderr };
}

function forbiddenIn(modules: string[]): string[] {
  return modules.filter((path) => FORBIDDEN.some((pattern) => pattern.test(path)));
}

describe.each(RUNTIMES)("start-up imports stay lean ($name)", (runtime) => {
  let cwd: string;
  beforeAll(() => {
    // A project without package.json (no delegation) and with one workflow, for `run -h`.
    cwd = makeProject({ ".loopx/w/index.sh": "#!/bin/bash\n" });
    scratch.push(cwd);
  });

  it.each(COMMANDS)("loopx $name loads no tar, semver, tsx, install code or loader", async ({ args }) => {
    const { modules, code, stderr } = await loadedModules(runtime, GUARD_BIN, args, cwd);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    // The recorder saw the CLI's entry module, so an empty list cannot pass by accident.
    expect(modules).toContain(GUARD_BIN);
    expect(forbiddenIn(modules)).toEqual([]);
  });

  it.each([["--stop"], ["--result", "x", "--goto", "w:next"], ["--result=x", "--stop"]])(
    "loopx output %s (a bash script's per-iteration call) loads neither clipanion nor the CLI module",
    async (...args) => {
      const { modules, code, stderr } = await loadedModules(runtime, GUARD_BIN, ["output", ...args], cwd);
      expect(stderr).toBe("");
      expect(code).toBe(0);
      expect(modules).toContain(GUARD_BIN);
      expect(modules.filter((path) => /\/node_modules\/clipanion\/|\/dist\/cli\/main\.js$/.test(path))).toEqual([]);
    },
  );

  it("the recorder sees a forbidden import when there is one (control)", async () => {
    // version-requirement.js imports semver (CommonJS): the guard must notice it.
    const entry = join(ROOT, "dist", "core", "version-requirement.js");
    const { modules, code } = await loadedModules(runtime, entry, [], cwd);
    expect(code).toBe(0);
    expect(forbiddenIn(modules).some((path) => path.includes("/node_modules/semver/"))).toBe(true);
  });
});

describe("start-up imports: the Node script preload is recorded too (control)", () => {
  it("sees the loader's modules when the script loader is loaded", async () => {
    const dir = tempDir();
    scratch.push(dir);
    const entry = join(ROOT, "dist", "runtime", "loader", "register.js");
    const { modules } = await loadedModules(RUNTIMES[0]!, entry, [], dir);
    // The loader's entry is one bundled file (scripts/build.mjs): it must be seen.
    expect(forbiddenIn(modules).some((path) => path.endsWith("/dist/runtime/loader/register.js"))).toBe(true);
  });
});
