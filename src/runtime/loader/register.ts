/**
 * Preloaded with `node --import` into every JS/TS script loopx runs under Node (spec §3.3, §6.3).
 * Where Node has module.registerHooks (≥ 22.15 / 23.5), loopx's hooks run in the script's own
 * thread; module.register (deprecated from Node 26, DEP0205) and its hooks worker thread are used
 * only on Node versions without it. Neither path loads tsx or esbuild unless a TypeScript/JSX file
 * misses the transform cache (transform.ts).
 */
import { fs, nodeModule } from "../../os/builtins.js";
import { reportOfError } from "./syntax-report.js";

// A script that does not compile ends with the compiler's report alone (syntax-report.ts), as
// under Bun: a monitor sees the error before Node prints it with the loader's internals.
process.on("uncaughtExceptionMonitor", (error) => {
  const report = reportOfError(error);
  if (report === undefined) return;
  fs.writeSync(2, report);
  process.exit(1);
});
process.setSourceMapsEnabled(true); // stack traces point into the .ts source (inline source maps)
const registerHooks = (nodeModule as { registerHooks?: (hooks: object) => unknown }).registerHooks;
if (typeof registerHooks === "function") {
  registerHooks(await import("./sync-hooks.js"));
} else {
  nodeModule.register("./hooks.js", { parentURL: import.meta.url });
}
