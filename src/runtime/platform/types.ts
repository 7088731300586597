import type { ScriptProcess, SpawnSpec, Watcher } from "../spawn.js";
import type { Env } from "../../core/env.js";


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
  /**
   * Starts `command args` as the leader of a new session (no terminal), in `/`, stdout and stderr
   * on /dev/null, stdin a pipe whose write end only this process holds (close-on-exec: no script
   * inherits it), so that its end of file tells the child that loopx is gone. Neither the child nor
   * the pipe keeps this process alive. For the run's guardian.
   */
  spawnWatcher(command: string, args: string[], env: Env, onError: (error: Error) => void): Watcher;
  /** The launcher for JS/TS scripts; made on first use (the binary's materializes its helper cache). */
  jsLauncher(): JsLauncher;
  /**
   * Keeps a long CLI loop's resident memory flat: call the returned function once per iteration.
   * Only for the CLI process: a library must not retune its host.
   */
  createHeapKeeper(): () => void;
}
