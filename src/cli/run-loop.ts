import { LoopxError } from "../core/errors.js";
import { startRun, type RunRequest } from "../engine/index.js";
import type { RunOptionValues } from "../engine/options.js";

/**
 * `loopx run` after parsing: the engine runs the loop without printing results (spec §7.1); every
 * CLI run is recorded (LOOPX_RECORD=0 turns it off), shows progress on a terminal and is cancelled
 * by SIGINT/SIGTERM (spec §7.3). The outcome's error is the one stderr line; its exit code is ours.
 */
export async function runFromCli(request: { target: string; options: RunOptionValues; argv: string[] }): Promise<number> {
  return runToEnd({ target: request.target, options: { ...request.options, record: true }, argv: request.argv });
}

/**
 * `loopx runs resume <id> [-n <count>] [budgets]`: the run goes on in this terminal, as `loopx run` would
 * have gone on (the engine asks control/resume.ts where, which refuses with one line).
 */
export async function resumeFromCli(id: string, options: RunOptionValues, argv: string[]): Promise<number> {
  return runToEnd({ options, resume: { id }, argv });
}

async function runToEnd(request: Pick<RunRequest, "target" | "options" | "resume" | "argv">): Promise<number> {
  const outcome = await startRun({
    ...request,
    projectRoot: process.cwd(),
    baseEnv: process.env,
    progress: true,
    signals: true,
    compactHeap: true,
  }).complete();
  const error = outcome.error;
  // An interruption (a signal, `loopx runs stop --now`) ends with its exit code and no error line.
  if (error !== undefined && outcome.reason !== "interrupted") {
    throw error instanceof LoopxError ? error : new LoopxError(error instanceof Error ? error.message : String(error));
  }
  return outcome.exitCode ?? 0;
}
