import type { ScriptProcess, SpawnSpec } from "../spawn.js";

type Env = Record<string, string | undefined>;

/** How JS/TS scripts start in this runtime (spec §6.3, §3.3). */
export interface JsLauncher {
  command: string;
  args(scriptPath: string): string[];
  /** Variables the runtime needs on top of the script environment (NODE_PATH, BUN_BE_BUN). */
  extraEnv(env: Env): Env;
}

/** What differs between Node, Bun and the standalone binary; one implementation per runtime. */
export interface Platform {
  /**
   * Starts a script as the leader of a new process group with stdout captured and stderr inherited
   * (streamed live, unbuffered).
   */
  spawnScript(spec: SpawnSpec): ScriptProcess;
  /** The launcher for JS/TS scripts; made on first use (the binary's materializes its helper cache). */
  jsLauncher(): JsLauncher;
  /**
   * Keeps a long CLI loop's resident memory flat: call the returned function once per iteration.
   * Only for the CLI process: a library must not retune its host.
   */
  createHeapKeeper(): () => void;
}
