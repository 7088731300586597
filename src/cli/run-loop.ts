import { constants } from "node:os";
import { resolve } from "node:path";
import { LoopxError } from "../core/errors.js";
import { runLoop } from "../core/loop.js";
import { createLoopHost } from "../api/loop-host.js";
import { loopxBin } from "../runtime/detect.js";
import { createHeapKeeper } from "../runtime/heap.js";
import { ScriptSupervisor } from "../runtime/supervisor.js";

/**
 * The CLI's adapter over the loop engine: iterates it without printing results (spec §7.1) and
 * turns SIGINT/SIGTERM into forward-to-group, grace, SIGKILL, exit 128+N (spec §7.3).
 */
export async function runFromCli(options: { target: string; maxIterations?: number; envFile?: string }): Promise<number> {
  const projectRoot = process.cwd();
  const supervisor = new ScriptSupervisor();

  const onSignal = (signal: NodeJS.Signals) => {
    const code = 128 + constants.signals[signal];
    if (!supervisor.busy && !supervisor.stopped) process.exit(code); // between iterations: at once
    void supervisor.terminate(signal).then(() => process.exit(code));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);

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
    );
    const keepHeapCompact = createHeapKeeper();
    for await (const _output of loop) {
      // The CLI never prints results; scripts' stderr has already streamed through.
      keepHeapCompact();
    }
    return 0;
  } catch (error) {
    // A script killed by our own forwarded signal: the signal handler decides the exit code.
    if (supervisor.stopped) await new Promise(() => {});
    if (error instanceof LoopxError) throw error;
    throw new LoopxError(error instanceof Error ? error.message : String(error));
  }
}
