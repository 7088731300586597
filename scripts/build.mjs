// Builds the npm package into dist/: ESM JavaScript and .d.ts from src/ via tsc, the per-iteration
// entry points (bin.js's start path, the Node script loader, the scripts' "loopx") bundled into one file each, plus the NODE_PATH shim, plus dist/workflows.tar.gz (the example workflows as an installable source).
// Builds into a fresh directory and swaps it in, so a test run that is reading dist/ at the same
// moment never sees a half-written tree.
import { chmodSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { writeDashboardAssets } from "./dashboard-assets.mjs";
import { packWorkflows } from "./pack-workflows.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const out = join(root, `dist.build-${process.pid}`);
const dist = join(root, "dist");
/** For bundles holding CommonJS that requires Node's built-ins: gives them a `require`. */
const REQUIRE_BANNER = { js: 'import { createRequire as loopxCreateRequire } from "node:module"; const require = loopxCreateRequire(import.meta.url);' };
/** esbuild options of every bundle this build writes. */
const BUNDLE = { bundle: true, format: "esm", platform: "node", target: "node20.6", external: ["node:*"], legalComments: "none", logLevel: "error" };
/**
 * What `loopx run` loads, relative to dist/ (or the project, for a package): the CLI's entry, the
 * run command, the engine it imports when the run starts and the exit hook's signal-exit. The
 * group takes their static imports too.
 */
const RUN_PATH = ["cli/main.js", "cli/commands/run.js", "engine/index.js", "node_modules/signal-exit/dist/mjs/index.js"];

try {
  // The dashboard's page, as a module of strings tsc compiles like any other.
  writeDashboardAssets();
  execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", join(root, "tsconfig.json"), "--outDir", out], {
    stdio: "inherit",
  });
  bundleEntries(out);
  await bundleCli(out);
  chmodSync(join(out, "bin.js"), 0o755);
  // LOOPX_BIN under Bun (runtime/platform/runtime.ts loopxBin): the same entry, started by Bun.
  writeFileSync(join(out, "bin-bun.js"), `#!/usr/bin/env bun\n// LOOPX_BIN when loopx runs under Bun: bin.js, started by Bun rather than Node.\nimport "./bin.js";\n`, { mode: 0o755 });
  chmodSync(join(out, "bin-bun.js"), 0o755);

  // A two-file `loopx` package for Bun's NODE_PATH (spec §3.3): scripts under Bun resolve
  // `import "loopx"` to it. Its index.js is the script-facing entry (script.ts: output, input, note)
  // itself, bundled and minified for Bun only (lazy-fs.ts: no top-level await; minified as in the
  // binary's helper cache: ~0.4 ms less to parse), so a script's import is one
  // small module — never the whole package that index.js re-exports. Bun needs `main` for NODE_PATH
  // packages.
  const shim = join(out, "node-path", "loopx");
  mkdirSync(shim, { recursive: true });
  const shimPackage = { name: "loopx", private: true, type: "module", main: "./index.js", exports: { ".": "./index.js" } };
  writeFileSync(join(shim, "package.json"), JSON.stringify(shimPackage, null, 2) + "\n");
  esbuild().buildSync({ ...BUNDLE, entryPoints: [join(out, "script.js")], outfile: join(shim, "index.js"), absWorkingDir: out, minify: true, define: { __LOOPX_BUN_BUNDLE__: "true" } });

  // The ralph and converge workflows as a multi-workflow source: `loopx install <url of it>`.
  await packWorkflows(join(out, "workflows.tar.gz"));

  // Keep anything else that lives in dist/ (dist/bin/ standalone binaries) across rebuilds.
  if (existsSync(join(dist, "bin"))) renameSync(join(dist, "bin"), join(out, "bin"));
  const old = join(root, `dist.old-${process.pid}`);
  if (existsSync(dist)) renameSync(dist, old);
  renameSync(out, dist);
  rmSync(old, { recursive: true, force: true });
} catch (error) {
  rmSync(out, { recursive: true, force: true });
  console.error(`build failed: ${error instanceof Error ? error.message.split("\n")[0] : error}`);
  process.exit(1);
}

/**
 * The entry points paid for on every iteration, each rewritten in place as one bundle of what it
 * imports, because every extra ES module costs resolving, reading, compiling and linking:
 * - runtime/loader/register.js, preloaded into every JS/TS script process under Node (and
 *   hooks.js, loaded by its hooks thread on Node without module.registerHooks): five modules each
 *   as tsc emits them, ~2-3 ms of CPU per script process on Node 22-26;
 * - runtime/loader/bun-preload.js, preloaded under Bun into scripts that may use CommonJS;
 * - script.js, what a script's `import ... from "loopx"` loads when loopx provides it (Node's
 *   hooks resolve it; Bun's NODE_PATH package is a copy of it): three modules as tsc emits them;
 * - bin.js up to the CLI: delegation and the fast `loopx output` path (`$LOOPX_BIN output` once per
 *   iteration from bash scripts), eight modules, ~1.5-2 ms per call. The full CLI (cli/main.js)
 *   and version.js stay separate modules, loaded only when needed; what bin.js bundles (delegation,
 *   output serialization) shares no state with them.
 * Same paths, so import.meta.url-relative paths (package.json, index.js, hooks.js, cli/main.js)
 * still hold. Built-ins stay outside, and so does esbuild (loaded only on a transform-cache miss,
 * through createRequire). The esbuild is tsx's own, as in transform.ts.
 */
function bundleEntries(out) {
  const entries = [
    { file: "runtime/loader/register.js", external: [] },
    { file: "runtime/loader/hooks.js", external: [] },
    { file: "script.js", external: [] },
    { file: "runtime/loader/bun-preload.js", external: [] },
    { file: "bin.js", external: ["./cli/main.js", "./version.js", "./guardian/guardian.js"] },
  ];
  for (const { file, external } of entries) {
    esbuild().buildSync({ ...BUNDLE, entryPoints: [join(out, file)], outfile: join(out, file), allowOverwrite: true, absWorkingDir: out, external: ["node:*", ...external], define: distUp(file) });
  }
  bundleTelemetrySdk(out);
}

/** runtime/platform/runtime.ts's way up to dist/ from a bundle written at `file` (relative to dist/). */
function distUp(file) {
  const depth = file.split("/").length - 1;
  return { __LOOPX_DIST_UP__: JSON.stringify(depth === 0 ? "./" : "../".repeat(depth)) };
}

/**
 * cli/main.js, the full CLI that bin.js loads for every command but the fast ones, rewritten in
 * place as a bundle split at its dynamic imports: a command's code (and tar, semver, tsx's caller,
 * the dashboard, …) stays a chunk loaded only by the command that needs it.
 *
 * Rolldown rather than esbuild, for its chunk groups: esbuild splits shared code by the set of
 * entries that use it, which made `loopx run` resolve, read and link 45 files; resolving that many
 * made Node compile its own ESM loader functions with TurboFan, and the compiler's code paged in
 * held ~4 MB of an idle run's memory. RUN_PATH's group puts what a run loads (from the CLI's entry,
 * the run command and the engine, with their static imports) into one chunk: a run loads a handful
 * of files (test/e2e/cli/startup-imports.test.ts holds the count).
 *
 * Every output file sits in dist/cli/, at one depth, so the modules that find package files from
 * import.meta.url still do (runtime.ts through distUp; the others are at cli/'s depth already, or
 * stay external). Not minified: the `// <module>` line before each module's code says what a chunk
 * holds (the start-up guard reads them); other comments are dropped.
 */
async function bundleCli(out) {
  const { rolldown } = await import("rolldown");
  // Left as modules of their own: other entries of bin.js, and the SDK bundled on its own.
  const external = new Set(["version.js", "guardian/guardian.js", "telemetry/sdk.js"].map((file) => join(out, file)));
  const runPath = new Set(RUN_PATH.map((file) => (file.startsWith("node_modules/") ? join(root, file) : join(out, file))));
  const warnings = [];
  const bundle = await rolldown({
    input: join(out, "cli", "main.js"),
    cwd: out,
    platform: "node",
    // clipanion's package names its CommonJS build only ("main"), which a bundle keeps whole and
    // runs at start: its Cli and help machinery, and through them Node's tty, net and stream
    // modules (~20% of `loopx run`'s start-up under Bun). loopx uses Command and Option alone (its
    // grammar parses, cli/grammar.ts), so the bundle takes the package's ES build, which it can
    // tree-shake ("sideEffects": false).
    resolve: { alias: { clipanion: join(root, "node_modules", "clipanion", "lib", "advanced", "index.mjs") } },
    external: (id, importer) => id.startsWith("node:") || id === "esbuild" || (importer !== undefined && /^\.\.?\//.test(id) && external.has(resolve(dirname(importer), id))),
    transform: { target: "node20.6", define: distUp("cli/main.js") },
    // A warning fails the build (an import it could not resolve would fail at run time), but for
    // the run command's dynamic import that `runs` also imports statically: it is in the group anyway.
    onLog: (level, log) => {
      if (level === "warn" && log.code !== "INEFFECTIVE_DYNAMIC_IMPORT") warnings.push(log.message.replace(/\x1b\[[0-9;]*m/g, "").split("\n")[0]);
    },
  });
  await bundle.write({
    dir: join(out, "cli"),
    format: "es",
    entryFileNames: "[name].js",
    chunkFileNames: "[name]-[hash].js",
    comments: false,
    codeSplitting: { groups: [{ name: "run", test: (id) => runPath.has(id) }] },
  });
  await bundle.close();
  // Rolldown reads the modules as it writes: the warnings are known only now (dist/ is not swapped in).
  if (warnings.length > 0) throw new Error(`rolldown: ${warnings[0]}`);
}

/**
 * telemetry/sdk.js with the OpenTelemetry SDK and its OTLP exporters (protobuf and JSON) inside it,
 * minified: one module loaded only by a run with telemetry on (telemetry/part.ts imports it
 * lazily), so the npm package depends on no @opentelemetry/* package (60 MB installed, most of it
 * sources and three builds of each package the bundle does not need). The SDK's CommonJS modules
 * require Node's built-ins: the banner gives them a `require`. A bundle that holds two copies of one
 * package fails the build (the install would carry the same code twice).
 */
function bundleTelemetrySdk(out) {
  const file = join(out, "telemetry/sdk.js");
  const result = esbuild().buildSync({ ...BUNDLE, entryPoints: [file], outfile: file, allowOverwrite: true, absWorkingDir: out, nodePaths: [join(root, "node_modules")], external: ["node:*", "./settings.js", "./metrics.js"], minify: true, banner: REQUIRE_BANNER, metafile: true });
  const copies = new Map();
  for (const input of Object.keys(result.metafile.inputs)) {
    const match = /^(.*node_modules\/((?:@[^/]+\/)?[^/]+))\//.exec(input);
    if (!match) continue;
    const dirs = copies.get(match[2]) ?? new Set();
    copies.set(match[2], dirs.add(match[1]));
  }
  const doubled = [...copies].filter(([, dirs]) => dirs.size > 1).map(([name]) => name);
  if (doubled.length) throw new Error(`telemetry/sdk.js would bundle two copies of ${doubled.join(", ")}: align their versions in package.json`);
}

/** The esbuild tsx itself depends on, as in transform.ts. */
function esbuild() {
  const require = createRequire(import.meta.url);
  return createRequire(require.resolve("tsx/package.json"))("esbuild");
}
