#!/usr/bin/env node
// Entry point. Delegation to a project-pinned loopx happens first, before any command parsing
// (spec §3.2); only then is the CLI loaded.
import { delegate, findLocalLoopx } from "./runtime/delegate.js";
import { nodeModule } from "./runtime/builtins.js";
import { runtimeName } from "./runtime/platform/runtime.js";
import { loopxDir } from "./runtime/xdg.js";

// Node ≥ 22.1 keeps V8's compiled code of loopx's own modules on disk between runs (a no-op
// elsewhere, and under Bun). NODE_COMPILE_CACHE, if set, wins as Node documents.
if (typeof (nodeModule as { enableCompileCache?: unknown }).enableCompileCache === "function" && runtimeName === "node") {
  try {
    (nodeModule as { enableCompileCache(dir?: string): unknown }).enableCompileCache(`${loopxDir("cache")}/node-compile-cache`);
  } catch {
    // a cache that cannot be enabled only costs speed
  }
}

const argv = process.argv.slice(2);
const localBin = process.env.LOOPX_DELEGATED === undefined ? findLocalLoopx(process.cwd()) : undefined;
if (localBin !== undefined) {
  process.exitCode = await delegate(localBin, argv);
} else if (argv[0] === "output" && (await import("./cli/fast-output.js")).fastOutput(argv.slice(1))) {
  // done: `loopx output` in an everyday form (anything else falls through to the full CLI)
} else if (argv.length === 1 && argv[0] === "version") {
  // The one command line with nothing to parse: answer without loading the CLI (start-up matters
  // for scripts that check the version on every iteration).
  const { VERSION } = await import("./version.js");
  process.stdout.write(`${VERSION}\n`);
} else {
  const { runCli } = await import("./cli/main.js");
  await runCli(argv);
}
