/**
 * Start-up stays lean (regression guard, not a timing test): the commands that bash scripts call
 * on every iteration (`loopx output`) and the trivial ones (`version`, `env`, help) must not load
 * the heavy dependencies — tar, semver, tsx (and what they pull in: esbuild, minipass, minizlib) —
 * nor the install code or the script loader. The loaded modules are recorded from inside the CLI
 * process: under Node by a preloaded module that registers a `load` hook (ES modules, builtins and
 * the CommonJS entry points imported from ESM) and dumps `require.cache` at exit (CommonJS loaded
 * by `require`); under Bun by a preload that dumps `require.cache`, which there holds every module.
 *
 * The script side too: what a script's `import { output, input } from "loopx"` loads when loopx
 * provides the package — only the script-facing entry (dist/script.js, or its copy in Bun's
 * NODE_PATH package or the binary's helper cache) beside loopx's own preloads, never index.js and
 * the run() machinery behind it — under Node with in-thread hooks (22/24/26) and with the hooks
 * worker (the machine's Node 20), under Bun and in the standalone binary. Recorded from inside the
 * script process: under Node by a module-hooks recorder preloaded through NODE_OPTIONS, under Bun by
 * a module of the workflow that dumps `require.cache` at exit.
 *
 * STARTUP_GUARD_DIST (optional) points at another built dist/ to check, e.g. a scratch copy with a
 * deliberate forbidden import, to see this test fail.
 */
import { readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, ROOT, RUNTIMES, isolatedEnv, makeProject, runCommand, tempDir, type Runtime } from "../../helpers.js";
import { nodeMatrix } from "../../fixtures/node-matrix.js";

const GUARD_BIN = realpathSync(process.env.STARTUP_GUARD_DIST ? join(process.env.STARTUP_GUARD_DIST, "bin.js") : BIN);

/** What must never be loaded by the lean commands. */
const FORBIDDEN = [
  /\/node_modules\/(?:tar|semver|tsx|esbuild|minipass|minizlib|@esbuild|@opentelemetry)\//,
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
async function loadedModules(runtime: Runtime, entry: string, args: string[], cwd: string, extraEnv: Record<string, string> = {}): Promise<{ modules: string[]; files: string[]; code: number | null; stderr: string }> {
  const log = join(recorderDir, `loaded-${runtime.name}-${++logCounter}.txt`);
  writeFileSync(log, "");
  const preload = runtime.name === "node" ? ["--import", pathToFileURL(nodeRecorder).href] : ["--preload", bunRecorder];
  const result = await runCommand(runtime.exe, [...preload, entry, ...args], { cwd, env: isolatedEnv({ STARTUP_GUARD_LOG: log, ...extraEnv }) });
  const modules = readFileSync(log, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((entry) => (entry.startsWith("file://") ? new URL(entry).pathname : entry));
  return { modules: [...new Set(modules.flatMap(withBundledModules))], files: [...new Set(modules)], code: result.code, stderr: result.stderr };
}

/**
 * A file of the CLI's bundle (dist/cli/, scripts/build.mjs bundleCli) stands for the modules it
 * holds: esbuild writes a `// <path>` line (relative to dist/) before each module's code, so the
 * guard sees `dist/install/…` or `node_modules/tar/…` inside a chunk as if it had been loaded alone.
 */
function withBundledModules(path: string): string[] {
  const dist = dirname(GUARD_BIN);
  if (!path.startsWith(`${dist}/cli/`) || !path.endsWith(".js")) return [path];
  const held = [...readFileSync(path, "utf8").matchAll(/^\/\/ ((?:\.\.\/)*[\w@./-]+\.(?:js|cjs|mjs|json))$/gm)].map((match) => resolve(dist, match[1]!));
  return [path, ...held];
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

  it("a run with telemetry off loads nothing of OpenTelemetry; with LOOPX_OTEL=1 it does (control)", async () => {
    const otel = (path: string) => /\/node_modules\/@opentelemetry\/|\/dist\/telemetry\/(?:sdk|run-trace|metrics)\.js$/.test(path);
    const off = await loadedModules(runtime, GUARD_BIN, ["run", "-n", "1", "w"], cwd);
    expect(off.code, off.stderr).toBe(0);
    expect(off.modules).toContain(GUARD_BIN);
    expect(off.modules.filter(otel)).toEqual([]);
    const on = await loadedModules(runtime, GUARD_BIN, ["run", "-n", "1", "w"], cwd, { LOOPX_OTEL: "1", OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_TRACES_EXPORTER: "none", OTEL_METRICS_EXPORTER: "none" });
    expect(on.code, on.stderr).toBe(0);
    expect(on.modules.filter(otel).length).toBeGreaterThan(0);
  });

  it("a recorded run of a bash script with progress on loads no dashboard, install, tar, semver, tsx or OpenTelemetry code (what it would hold while idle)", async () => {
    // semver: only for a workflow that declares a loopx version (the CLI bundle's chunk semver-*.js).
    const heavy = /\/dist\/(?:dashboard|install)\/|\/dist\/telemetry\/sdk\.js$|\/dist\/cli\/semver-[^/]*\.js$|\/node_modules\/(?:tar|semver|tsx|esbuild|@esbuild|@opentelemetry|minipass|minizlib)\//;
    const { modules, code, stderr } = await loadedModules(runtime, GUARD_BIN, ["run", "-n", "1", "w"], cwd, { LOOPX_PROGRESS: "1" });
    expect(code, stderr).toBe(0);
    expect(modules).toContain(GUARD_BIN);
    expect(modules.some((path) => path.endsWith("/dist/core/loop.js"))).toBe(true); // the run itself was seen
    expect(modules.filter((path) => heavy.test(path))).toEqual([]);
  });

  it("a run loads the CLI's code from a handful of files, not one per shared piece (scripts/build.mjs RUN_PATH)", async () => {
    // 45 files under esbuild's splitting: resolving that many made Node optimize its own loader
    // with TurboFan, ~4 MB of an idle run's memory. The `// <module>` lines say what each file holds.
    const { files, code, stderr } = await loadedModules(runtime, GUARD_BIN, ["run", "-n", "1", "w"], cwd, { LOOPX_PROGRESS: "1" });
    expect(code, stderr).toBe(0);
    const cliFiles = files.filter((path) => path.startsWith(`${dirname(GUARD_BIN)}/cli/`));
    expect(cliFiles.length).toBeGreaterThan(0);
    expect(cliFiles.length, cliFiles.join("\n")).toBeLessThanOrEqual(6);
  });

  it("the recorder sees a forbidden import when there is one (control)", async () => {
    // semver.js imports semver (CommonJS): the guard must notice it.
    const entry = join(ROOT, "dist", "core", "semver.js");
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

const GUARD_DIST = dirname(GUARD_BIN);
const BINARY = join(GUARD_DIST, "bin", `loopx-${process.platform}-${process.arch === "arm64" ? "arm64" : "x64"}`);

/** In a script process (LOOPX_WORKFLOW set) under Node: records every module loaded, in-thread where Node can. */
function nodeScriptRecorder(): string {
  const path = join(recorderDir, "node-script-recorder.mjs");
  writeFileSync(
    path,
    `import { appendFileSync } from "node:fs";
import * as nodeModule from "node:module";
const log = process.env.LOOPX_WORKFLOW ? process.env.STARTUP_GUARD_LOG : undefined;
if (log) {
  if (typeof nodeModule.registerHooks === "function") {
    nodeModule.registerHooks({ load(url, context, nextLoad) { appendFileSync(log, url + "\\n"); return nextLoad(url, context); } });
  } else {
    nodeModule.register(${JSON.stringify(pathToFileURL(join(recorderDir, "hooks.mjs")).href)});
  }
  const require = nodeModule.createRequire(import.meta.url);
  process.on("exit", () => appendFileSync(log, Object.keys(require.cache).join("\\n") + "\\n"));
}
`,
  );
  return path;
}

/** Under Bun (and the binary acting as Bun), where require.cache holds every module: dumped at exit. */
const BUN_SCRIPT_RECORDER = `import { appendFileSync } from "node:fs";
if (typeof Bun !== "undefined" && process.env.STARTUP_GUARD_LOG) {
  process.on("exit", () => appendFileSync(process.env.STARTUP_GUARD_LOG, Object.keys(require.cache).join("\\n") + "\\n"));
}
`;

/** The README's kind of script: imports both helpers and calls them. */
const SCRIPT_BODY = 'import "./record.js";\nimport { input, output } from "loopx";\nconst got = await input();\noutput({ result: "ok" + got });\n';

interface ScriptChannel {
  name: string;
  run(args: string[], cwd: string, env: Record<string, string>): ReturnType<typeof runCommand>;
  env(log: string): Record<string, string>;
}

const nodeChannel = (runtime: Runtime): ScriptChannel => ({
  name: runtime.label ?? "node",
  run: (args, cwd, env) => runCommand(runtime.exe, [GUARD_BIN, ...args], { cwd, env }),
  env: (log) => ({ NODE_OPTIONS: `--import=${pathToFileURL(nodeScriptRecorder()).href}`, STARTUP_GUARD_LOG: log }),
});

const SCRIPT_CHANNELS: ScriptChannel[] = [
  ...nodeMatrix().map(nodeChannel),
  { name: "bun", run: (args, cwd, env) => runCommand(RUNTIMES[1]!.exe, [GUARD_BIN, ...args], { cwd, env }), env: (log) => ({ STARTUP_GUARD_LOG: log }) },
  { name: "binary", run: (args, cwd, env) => runCommand(BINARY, args, { cwd, env }), env: (log) => ({ STARTUP_GUARD_LOG: log }) },
];

describe.each(SCRIPT_CHANNELS)("a script's import of \"loopx\" loads only the script-facing entry ($name)", (channel) => {
  it.each([".ts", ".js"])("a %s script importing and calling output and input loads no index.js, run() code or dependency", async (ext) => {
    const cwd = makeProject({ [`.loopx/w/index${ext}`]: SCRIPT_BODY, ".loopx/w/record.js": BUN_SCRIPT_RECORDER });
    scratch.push(cwd);
    const log = join(recorderDir, `script-${channel.name}-${++logCounter}.txt`);
    const env = isolatedEnv({ XDG_CACHE_HOME: join(cwd, "cache") });
    // A first run fills loopx's caches (the TS transform, the binary's helper package); the second is recorded.
    expect((await channel.run(["run", "-n", "1", "w"], cwd, env)).code).toBe(0);
    writeFileSync(log, "");
    const result = await channel.run(["run", "-n", "1", "w"], cwd, { ...env, ...channel.env(log) });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const modules = [...new Set(readFileSync(log, "utf8").split("\n").filter(Boolean).map((entry) => (entry.startsWith("file://") ? new URL(entry).pathname : entry)))];
    // The recorder saw the script's own modules, so an empty list cannot pass by accident.
    expect(modules).toContain(join(cwd, ".loopx", "w", "record.js"));
    expect(modules.filter((path) => path.includes("/node_modules/"))).toEqual([]);
    if (channel.name === "binary") {
      const [entry] = readdirSync(join(cwd, "cache", "loopx")).filter((name) => !name.startsWith("transform"));
      const helpers = join(cwd, "cache", "loopx", entry!);
      expect(modules.filter((path) => path.startsWith(helpers)).sort()).toEqual([join(helpers, "env-preload.js"), join(helpers, "node-path", "loopx", "index.js")]);
    } else {
      const own = modules.filter((path) => path.startsWith(GUARD_DIST + "/")).map((path) => path.slice(GUARD_DIST.length + 1));
      const entry = channel.name === "bun" ? "node-path/loopx/index.js" : "script.js";
      // Besides the entry: only Node's loader preload (register.js, and hooks.js in Node 20's hooks
      // worker); under Bun nothing else at all.
      expect(own.filter((path) => path !== entry && !/^runtime\/loader\/(?:register|hooks)\.js$/.test(path))).toEqual([]);
      expect(own).toContain(entry);
    }
  });
});
