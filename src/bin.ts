#!/usr/bin/env node
// Entry point. Delegation to a project-pinned loopx happens first, before any command parsing
// (spec §3.2); only then is the CLI loaded.
import { delegate, findLocalLoopx } from "./runtime/delegate.js";

const argv = process.argv.slice(2);
const localBin = process.env.LOOPX_DELEGATED === undefined ? findLocalLoopx(process.cwd()) : undefined;
if (localBin !== undefined) {
  process.exitCode = await delegate(localBin, argv);
} else if (argv.length === 1 && argv[0] === "version") {
  // The one command line with nothing to parse: answer without loading the CLI (start-up matters
  // for scripts that check the version on every iteration).
  const { VERSION } = await import("./version.js");
  process.stdout.write(`${VERSION}\n`);
} else {
  const { runCli } = await import("./cli/main.js");
  await runCli(argv);
}
