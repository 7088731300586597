import { resolve } from "node:path";
import { LoopxError } from "../core/errors.js";
import { startRun, type RunRequest } from "../engine/index.js";
import type { Budget } from "../core/budget.js";

/**
 * `loopx run` after parsing: the engine runs the loop without printing results (spec §7.1); every
 * CLI run is recorded (LOOPX_RECORD=0 turns it off), shows progress on a terminal and is cancelled
 * by SIGINT/SIGTERM (spec §7.3). The outcome's error is the one stderr line; its exit code is ours.
 */
export async function runFromCli(options: { target: string; maxIterations?: number; envFile?: string; log?: string; summary?: boolean; argv?: string[]; onEnd?: string; worktree?: string | true; worktreeCopy?: string[]; features?: { timeout?: number; maxTime?: number } & Budget }): Promise<number> {
  const projectRoot = process.cwd();
  return runToEnd(
    {
      target: options.target,
      maxIterations: options.maxIterations,
      timeout: options.features?.timeout,
      maxTime: options.features?.maxTime,
      worktree: options.worktree,
      worktreeCopy: options.worktreeCopy,
      ...(options.onEnd !== undefined ? { onEnd: options.onEnd } : {}),
      maxCost: options.features?.maxCost,
      countEstimates: options.features?.countEstimates,
      maxTokens: options.features?.maxTokens,
      envFile: options.envFile === undefined ? undefined : resolve(projectRoot, options.envFile),
      projectRoot,
      baseEnv: process.env,
    },
    options.argv,
    options.log === undefined ? undefined : resolve(projectRoot, options.log),
    options.summary,
  );
}

/**
 * `loopx runs resume <id> [-n <count>]`: the run goes on in this terminal, as `loopx run` would
 * have gone on (control/resume.ts decides where, and refuses with one line).
 */
export async function resumeFromCli(prefix: string, maxIterations: number | undefined, argv: string[], budget: Budget = {}): Promise<number> {
  const { prepareResume } = await import("../control/resume.js");
  const prepared = prepareResume(process.env, prefix, { ...(maxIterations === undefined ? {} : { maxIterations }), overrides: budget });
  return runToEnd(prepared.request, argv, prepared.log);
}

async function runToEnd(request: RunRequest, argv: string[] | undefined, log: string | undefined, summary = false): Promise<number> {
  const outcome = await startRun(request, {
    argv,
    record: true,
    progress: true,
    summary,
    signals: true,
    compactHeap: true,
    onEndFromEnv: true,
    ...(log !== undefined ? { log } : {}),
  }).complete();
  const error = outcome.error;
  // An interruption (a signal, `loopx runs stop --now`) ends with its exit code and no error line.
  if (error !== undefined && outcome.reason !== "interrupted") {
    throw error instanceof LoopxError ? error : new LoopxError(error instanceof Error ? error.message : String(error));
  }
  return outcome.exitCode ?? 0;
}
