import { constants } from "node:os";
import { SIGNAL_REASONS } from "../core/events.js";
import { abortReason } from "../core/errors.js";
import type { RunCancel } from "../core/run-part.js";

/** The signals that end a run: SIGINT/SIGTERM (spec §7.3), and SIGHUP/SIGQUIT handled the same way. */
export type CancellingSignal = keyof typeof SIGNAL_REASONS;
const CANCELLING = Object.keys(SIGNAL_REASONS) as CancellingSignal[];

/** The cancellation a signal asks for: forwarded to the script's group as is, exit 128+N. */
export function cancelFor(signal: CancellingSignal, error?: unknown): RunCancel {
  return {
    reason: SIGNAL_REASONS[signal],
    signal,
    exitCode: 128 + constants.signals[signal],
    message: `interrupted by ${signal}`,
    ...(error !== undefined ? { error } : {}),
  };
}

/** What the CLI's signal handling needs of the run. */
export interface SignalledRun {
  cancel(cancel: RunCancel): Promise<void>;
  /** The running script's target, while a script runs. */
  runningTarget(): string | undefined;
  /** A second Ctrl-C: SIGKILL now to what the grace was waiting for. */
  killNow(): void;
  /** Ctrl-Z and `fg`: stop or continue the running script's group. */
  suspend(stop: boolean): void;
}

/**
 * The `signals` feature (the CLI's). SIGINT, SIGTERM, SIGHUP (a closed terminal) and SIGQUIT
 * (Ctrl-\) cancel the run — forward to the running script's group, grace, SIGKILL, the run's parts
 * end, exit 128+N; the record says interrupted / hangup / quit. A later signal is forwarded too;
 * a second SIGINT ends the grace at once (SIGKILL). On a terminal, the first Ctrl-C that has to
 * wait for a script says so in one line. SIGTSTP (Ctrl-Z) stops the script's group, then loopx;
 * SIGCONT (`fg`) continues the group. The handlers stay for the life of the process, which ends
 * with the run: a signal arriving while loopx exits must not kill it by signal instead of its exit
 * code.
 */
export function cancelOnSignals(run: SignalledRun, graceMs: number): void {
  let interrupts = 0;
  let cancelled = false;
  for (const signal of CANCELLING) {
    process.on(signal, () => {
      if (signal === "SIGINT" && ++interrupts > 1 && cancelled) run.killNow();
      const target = cancelled ? undefined : run.runningTarget();
      cancelled = true;
      void run.cancel(cancelFor(signal));
      if (signal === "SIGINT" && target !== undefined && process.stderr.isTTY) {
        process.stderr.write(`loopx: waiting up to ${Math.round(graceMs / 1000)}s for ${target} to exit; press Ctrl-C again to end it now\n`);
      }
    });
  }
  // Ctrl-Z: the script's group is in a session of its own, so the terminal's SIGTSTP reaches only
  // loopx's group. With a handler, loopx is not stopped by it: it stops itself after the group.
  process.on("SIGTSTP", () => {
    run.suspend(true);
    process.kill(process.pid, "SIGSTOP");
  });
  process.on("SIGCONT", () => run.suspend(false));
}

/**
 * The API's AbortSignal: an abort cancels the run as "aborted" (SIGTERM to the running script's
 * group, the signal's reason as the error), at once if it came before the run was started. Gives
 * back the way to stop listening, for when the run has ended.
 */
export function cancelOnAbort(signal: AbortSignal, cancel: (cancel: RunCancel) => Promise<void>): () => void {
  const onAbort = () => void cancel({ reason: "aborted", signal: "SIGTERM", exitCode: null, error: abortReason(signal) });
  if (signal.aborted) onAbort();
  else signal.addEventListener("abort", onAbort, { once: true });
  return () => signal.removeEventListener("abort", onAbort);
}
