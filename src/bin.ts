#!/usr/bin/env node
// Entry point. Delegation to a project-pinned loopx happens first, before any command parsing
// (spec §3.2); only then is the CLI loaded.
import { delegate, findLocalLoopx } from "./runtime/delegate.js";

const argv = process.argv.slice(2);
const localBin = process.env.LOOPX_DELEGATED === undefined ? findLocalLoopx(process.cwd()) : undefined;
if (localBin !== undefined) {
  process.exitCode = await delegate(localBin, argv);
} else {
  const { runCli } = await import("./cli/main.js");
  await runCli(argv);
}
