import { RunSession } from "../core/run-session.js";
import { warnToStderr } from "../os/stderr.js";
import { createHeapKeeper, runtimeName } from "../runtime/platform/index.js";
import type { ScriptSupervisor } from "../runtime/supervisor.js";
import { VERSION } from "../version.js";
import type { RunWorktree } from "../worktree/part.js";
import { recordedOptions } from "./options.js";
import { runParts } from "./parts.js";
import type { RunPlan } from "./plan.js";
import type { EngineSandbox } from "./sandbox.js";

/** What of the run the session is given besides its plan. */
export interface SessionContext {
  id: string;
  supervisor: ScriptSupervisor;
  /** --sandbox, proved before the session begins: its run.start names it. */
  fence: EngineSandbox | undefined;
  /** Told each script's target as it starts (the CLI's Ctrl-C line names it). */
  onTarget: (target: string) => void;
}

/** The session of a planned run, with its parts: the built-in and the options' ones, then the driver's. */
export function createSession(plan: RunPlan, worktree: RunWorktree | undefined, run: SessionContext): RunSession {
  const parts = runParts(plan, worktree);
  const { fence, supervisor } = run;
  if (fence) parts.unshift(fence);
  if (plan.compactHeap) {
    const keepHeapCompact = createHeapKeeper();
    parts.push({ onEvent: (event) => event.type === "iteration.end" && keepHeapCompact() });
  }
  if (plan.signals) parts.push({ onEvent: (event) => event.type === "iteration.start" && run.onTarget(event.target) });
  parts.push(...plan.parts);
  const resume = plan.resume;
  return new RunSession({
    get sandbox() { return fence?.info; },
    id: run.id,
    pid: process.pid,
    terminate: (signal) => supervisor.terminate(signal),
    graceEndsAt: () => supervisor.graceEndsAt,
    scriptExited: () => supervisor.scriptExited,
    warn: warnToStderr,
    runtime: runtimeName,
    version: VERSION,
    parts,
    ...(plan.argv ? { argv: plan.argv } : {}),
    options: recordedOptions(plan.options),
    ...(worktree && !resume ? { worktree: worktree.info } : {}),
    ...(resume
      ? { resume: { iterations: resume.iterations, elapsedMs: resume.elapsedMs, ...(resume.stdin !== undefined ? { stdinBytes: Buffer.byteLength(resume.stdin) } : {}) } }
      : {}),
  });
}
