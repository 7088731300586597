import type { LoopHost } from "../core/loop.js";
import { runScript } from "../runtime/script-runner.js";
import type { ScriptSupervisor } from "../runtime/supervisor.js";

/** Writes one warning line to stderr; loopx itself never writes to stdout during a loop. */
export function warnToStderr(message: string): void {
  process.stderr.write(`loopx: warning: ${message}\n`);
}

/** The engine's host for real runs: scripts go through the supervisor, warnings to stderr. */
export function createLoopHost(supervisor: ScriptSupervisor): LoopHost {
  return {
    runScript: ({ script, workflow, label, env, stdin }) => runScript(supervisor, script, label, workflow.dir, env, stdin),
    warn: warnToStderr,
  };
}
