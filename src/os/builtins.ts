/**
 * Node built-ins for code on the per-iteration paths (the script loader, `loopx output`,
 * delegation checks), without their ESM facades where Node allows it. `import ... from
 * "node:fs"` in an ES module makes Node build the module's ESM namespace, which reads every
 * export, lazy getters included: `fs.promises` alone pulls in streams, readline and fs/promises,
 * ~10 ms of compiling Node internals in every script process or `loopx output`. process.getBuiltinModule (Node
 * ≥ 20.16 / 22.3) hands over the plain objects; older Nodes get the ESM import.
 */
import type * as FsModule from "node:fs";
import type * as ModuleModule from "node:module";

const getBuiltinModule = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;

export const fs: typeof FsModule = (getBuiltinModule?.("node:fs") as typeof FsModule | undefined) ?? (await import("node:fs"));
export const nodeModule: typeof ModuleModule =
  (getBuiltinModule?.("node:module") as typeof ModuleModule | undefined) ?? (await import("node:module"));

let osModule: typeof import("node:os") | undefined;
/** node:os, loaded on first use. */
export function os(): typeof import("node:os") {
  osModule ??= nodeModule.createRequire(import.meta.url)("node:os") as typeof import("node:os");
  return osModule;
}

let cryptoModule: typeof import("node:crypto") | undefined;
/**
 * node:crypto, loaded on first use: under Node it is ~20 internal modules to compile, which a run
 * without --stall-after, --worktree or --sandbox never needs.
 */
export function nodeCrypto(): typeof import("node:crypto") {
  cryptoModule ??= nodeModule.createRequire(import.meta.url)("node:crypto") as typeof import("node:crypto");
  return cryptoModule;
}
