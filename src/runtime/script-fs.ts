/**
 * node:fs for what a script's `import "loopx"` loads (script.ts: output, input, note), taken on a
 * helper's first use rather than when the script imports "loopx": under Bun, loading node:fs costs
 * a script ~2 ms, and `import ... from "node:fs"` costs Node milliseconds more for its ESM facade
 * (builtins.ts, which loads node:fs at once). Only Node < 20.16 / 22.3, without
 * process.getBuiltinModule, imports it up front (output() and note() are synchronous).
 */
import type * as FsModule from "node:fs";

const getBuiltinModule = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
const importedFs: typeof FsModule | undefined = getBuiltinModule ? undefined : await import("node:fs");

export function scriptFs(): typeof FsModule {
  return importedFs ?? (getBuiltinModule!("node:fs") as typeof FsModule);
}
