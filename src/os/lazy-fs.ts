/**
 * node:fs taken on first use, for what a script's `import "loopx"` loads (script.ts: output,
 * input, note) and so loads when the script imports "loopx": under Bun, loading node:fs costs a
 * script ~2 ms, and `import ... from "node:fs"` costs Node milliseconds more for its ESM facade
 * (builtins.ts, which loads node:fs at once). Node ≥ 20.16 / 22.3 and Bun hand it over through
 * process.getBuiltinModule (older Bun: import.meta.require); only older Node imports it up front,
 * by a top-level await (output() and note() are synchronous).
 */
import type * as FsModule from "node:fs";

/**
 * `true` (a build-time define) in the Bun-only bundles of script.ts — Bun's NODE_PATH package and
 * the binary's helper cache — whose minifier then drops the top-level await below: its mere
 * presence makes the module async, which costs a Bun script ~1 ms.
 */
declare const __LOOPX_BUN_BUNDLE__: boolean | undefined;

type Require = (id: string) => unknown;
const getBuiltinModule = (process as { getBuiltinModule?: Require }).getBuiltinModule ?? (import.meta as { require?: Require }).require;
const importedFs: typeof FsModule | undefined =
  typeof __LOOPX_BUN_BUNDLE__ === "undefined" && !getBuiltinModule ? await import("node:fs") : undefined;

export function lazyFs(): typeof FsModule {
  return importedFs ?? (getBuiltinModule!("node:fs") as typeof FsModule);
}
