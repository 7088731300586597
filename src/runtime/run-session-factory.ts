import { RunSession, type RunPart } from "../core/run-session.js";
import { VERSION } from "../version.js";
import { runtimeName } from "./platform/runtime.js";
import { warnToStderr } from "./stderr.js";
import type { ScriptSupervisor } from "./supervisor.js";

/** A run session whose cancellations terminate `supervisor`'s running process group. */
export function createRunSession(supervisor: ScriptSupervisor, options: { argv?: string[]; parts?: RunPart[] } = {}): RunSession {
  return new RunSession({
    terminate: (signal) => supervisor.terminate(signal),
    graceEndsAt: () => supervisor.graceEndsAt,
    warn: warnToStderr,
    runtime: runtimeName,
    version: VERSION,
    ...options,
  });
}
