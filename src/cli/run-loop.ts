import { resolve } from "node:path";
import { LoopxError } from "../core/errors.js";
import { startRun } from "../engine/index.js";

/**
 * `loopx run` after parsing: the engine runs the loop without printing results (spec §7.1); every
 * CLI run is recorded (LOOPX_RECORD=0 turns it off), shows progress on a terminal and is cancelled
 * by SIGINT/SIGTERM (spec §7.3). The outcome's error is the one stderr line; its exit code is ours.
 */
export async function runFromCli(options: { target: string; maxIterations?: number; envFile?: string; log?: string; summary?: boolean; argv?: string[]; features?: { timeout?: number; maxTime?: number } }): Promise<number> {
  const projectRoot = process.cwd();
  const outcome = await startRun(
    {
      target: options.target,
      maxIterations: options.maxIterations,
      timeout: options.features?.timeout,
      maxTime: options.features?.maxTime,
      envFile: options.envFile === undefined ? undefined : resolve(projectRoot, options.envFile),
      projectRoot,
      baseEnv: process.env,
    },
    {
      argv: options.argv,
      record: true,
      progress: true,
      summary: options.summary,
      signals: true,
      compactHeap: true,
      ...(options.log !== undefined ? { log: resolve(projectRoot, options.log) } : {}),
    },
  ).complete();
  const error = outcome.error;
  if (error !== undefined) throw error instanceof LoopxError ? error : new LoopxError(error instanceof Error ? error.message : String(error));
  return outcome.exitCode ?? 0;
}
