#!/usr/bin/env node
// Entry point. Delegation to a project-pinned loopx happens first, before any command parsing
// (spec §3.2); only then is the CLI loaded.
import { delegate, findLocalLoopx } from "./runtime/delegate.js";
import { GUARDIAN_ARG } from "./runtime/platform/runtime.js";
import { nodeModule } from "./os/builtins.js";
import { runtimeName } from "./runtime/platform/runtime.js";
import { loopxDir } from "./os/xdg.js";

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
// A run's guardian (guardian/part.ts) is this same program with a hidden first argument,
// so that the standalone binary can be one too; it is never delegated and never in help.
const guardian = argv[0] === GUARDIAN_ARG;
const localBin = !guardian && process.env.LOOPX_DELEGATED === undefined ? findLocalLoopx(process.cwd()) : undefined;
if (guardian) {
  process.exitCode = await (await import("./guardian/guardian.js")).guard(argv.slice(1));
} else if (localBin !== undefined) {
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
