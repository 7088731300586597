import { constants } from "node:os";
import type { RunCancel } from "../core/run-session.js";

/** The signals that cancel a run of the CLI (spec §7.3). */
const CANCELLING: NodeJS.Signals[] = ["SIGINT", "SIGTERM"];

/**
 * The `signals` feature (the CLI's): SIGINT/SIGTERM to loopx cancel the run — forward to the
 * running script's group, grace, SIGKILL, the run's parts end, exit 128+N. A second signal is
 * forwarded too. The handlers stay for the life of the process, which ends with the run: a signal
 * arriving while loopx exits must not kill it by signal instead of its exit code.
 */
export function cancelOnSignals(cancel: (cancel: RunCancel) => unknown): void {
  for (const signal of CANCELLING) {
    process.on(signal, () => {
      void cancel({ reason: "interrupted", signal, exitCode: 128 + constants.signals[signal], message: `interrupted by ${signal}` });
    });
  }
}
