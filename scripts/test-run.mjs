// `npm test`'s last step: the main suite and the 10,000-iteration soak (vitest.soak.config.ts), at
// the same time. The soak is a ping-pong of one loopx at a time: it waits on its scripts more than
// it computes (about half a core over its 220 s), while the main suite leaves the machine ~18% idle
// between its files (process accounting of a CI run: 2,595 CPU-s in 1,584 s on 2 cores). Run one
// after the other, the soak added its whole time to CI's. Its output is held and printed after the
// main suite's, so each reads as one block; the exit code is non-zero when either run failed.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const vitest = fileURLToPath(new URL("../node_modules/vitest/vitest.mjs", import.meta.url));

/** Starts `vitest run <args>`; resolves with its exit code (1 when it ended by a signal). */
function vitestRun(args, stdio) {
  const child = spawn(process.execPath, [vitest, "run", ...args], { stdio });
  const code = new Promise((resolve) => child.on("close", (status) => resolve(status ?? 1)));
  return { child, code };
}

const soak = vitestRun(["--config", "vitest.soak.config.ts"], ["ignore", "pipe", "pipe"]);
const held = [];
soak.child.stdout.on("data", (chunk) => held.push(chunk));
soak.child.stderr.on("data", (chunk) => held.push(chunk));
const main = vitestRun([], "inherit");

// Ctrl-C or a CI cancel reaches both runs (vitest ends its own workers).
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    for (const { child } of [main, soak]) child.kill(signal);
  });
}

const mainCode = await main.code;
const soakCode = await soak.code;
process.stdout.write(Buffer.concat(held));
process.exit(mainCode === 0 && soakCode === 0 ? 0 : 1);
