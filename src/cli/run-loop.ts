import { constants } from "node:os";
import { resolve } from "node:path";
import { LoopxError } from "../core/errors.js";
import { runLoop } from "../core/loop.js";
import { createLoopHost } from "../api/loop-host.js";
import { loopxBin } from "../runtime/detect.js";
import { createHeapKeeper } from "../runtime/heap.js";
import { runParts, type RunFeatures } from "../runtime/parts/index.js";
import { createRunSession } from "../runtime/run-session-factory.js";
import { ScriptSupervisor } from "../runtime/supervisor.js";

/**
 * The CLI's adapter over the loop engine: iterates it without printing results (spec §7.1) and
 * turns SIGINT/SIGTERM into a cancellation of the run — forward to the group, grace, SIGKILL, then
 * the run's parts end, then exit 128+N (spec §7.3).
 */
export async function runFromCli(options: { target: string; maxIterations?: number; envFile?: string; log?: string; summary?: boolean; argv?: string[]; features?: Pick<RunFeatures, "timeout" | "maxTime"> }): Promise<number> {
  const projectRoot = process.cwd();
  const supervisor = new ScriptSupervisor();
  // Every CLI run is recorded (LOOPX_RECORD=0 turns it off) and shows progress on a terminal.
  const features: RunFeatures = {
    ...options.features,
    argv: options.argv,
    record: true,
    progress: true,
    summary: options.summary,
    ...(options.log !== undefined ? { log: resolve(projectRoot, options.log) } : {}),
  };
  const session = createRunSession(supervisor, { argv: options.argv, parts: runParts(features) });

  const onSignal = (signal: NodeJS.Signals) => {
    void session.cancel({ reason: "interrupted", signal, exitCode: 128 + constants.signals[signal], message: `interrupted by ${signal}` });
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);

  let failure: unknown;
  try {
    const loop = runLoop(
      {
        target: options.target,
        maxIterations: options.maxIterations,
        envFile: options.envFile === undefined ? undefined : resolve(projectRoot, options.envFile),
        projectRoot,
        baseEnv: process.env,
        loopxBin: loopxBin(),
      },
      createLoopHost(supervisor),
      session,
    );
    const keepHeapCompact = createHeapKeeper();
    for await (const _output of loop) {
      // The CLI never prints results; scripts' stderr has already streamed through.
      keepHeapCompact();
    }
  } catch (error) {
    failure = error;
  }
  // The session knows how the run ended: a script killed by our own forwarded signal is an
  // interruption (128+N), not a failure. Before validation passed there is no session run.
  const end = session.cancellation
    ? await session.end({ reason: "failed", exitCode: 1, error: failure })
    : failure === undefined
      ? { exitCode: 0, error: undefined }
      : { exitCode: 1, error: failure };
  if (end.error !== undefined) {
    if (end.error instanceof LoopxError) throw end.error;
    throw new LoopxError(end.error instanceof Error ? end.error.message : String(end.error));
  }
  return end.exitCode ?? 0;
}
