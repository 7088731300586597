/**
 * The platform this process runs on, chosen once (runtime.ts says which): everything that differs
 * between Node, Bun and a standalone binary — starting a script, the JS/TS launcher, heap upkeep —
 * is behind this one object, so no other module asks which runtime it is.
 */
import type { ScriptProcess, SpawnSpec, Watcher } from "../spawn.js";
import { bunPlatform } from "./bun.js";
import { nodePlatform } from "./node.js";
import { runtimeName } from "./runtime.js";
import { standalonePlatform } from "./standalone.js";
import type { JsLauncher, Platform } from "./types.js";

export { distPath, loopxBin, runtimeName } from "./runtime.js";
export type { JsLauncher } from "./types.js";

const platform: Platform = runtimeName === "node" ? nodePlatform : runtimeName === "bun" ? bunPlatform : standalonePlatform;

/** Starts a script as the leader of a new process group (stdout captured, stderr inherited). */
export function spawnScript(spec: SpawnSpec): ScriptProcess {
  return platform.spawnScript(spec);
}

/** See Platform.spawnWatcher: for the run's guardian. */
export function spawnWatcher(command: string, args: string[], env: Record<string, string | undefined>, onError: (error: Error) => void): Watcher {
  return platform.spawnWatcher(command, args, env, onError);
}

let launcher: JsLauncher | undefined;

/** How JS/TS scripts start here (spec §6.3, §3.3); made once, on first use. */
export function jsLauncher(): JsLauncher {
  launcher ??= platform.jsLauncher();
  return launcher;
}

/** See Platform.createHeapKeeper: for the CLI's loop only. */
export function createHeapKeeper(): () => void {
  return platform.createHeapKeeper();
}
