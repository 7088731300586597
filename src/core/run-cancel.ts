import type { RunCancel, RunEnd } from "./run-part.js";

/**
 * The cancellations of one run (a signal, an abort, `return()`, a time limit; see RunSession):
 * the first decides how the run ends; every one forwards its signal to the running script's group
 * (a second Ctrl-C is forwarded too), and the run's end waits for the first such termination.
 */
export class Cancellation {
  private first: RunCancel | undefined;
  /** Resolves on the first cancellation; made only when a part holds a script back. */
  private released: Promise<void> | undefined;
  private onCancelled: (() => void) | undefined;
  private firstTermination: Promise<void> | undefined;

  /** `terminate`: ends the running script's process group (forward, grace, SIGKILL); resolves when gone. */
  constructor(private readonly terminate: (signal: NodeJS.Signals) => Promise<void>) {}

  /** The cancellation that decides how the run ends, if any. */
  get decided(): RunCancel | undefined {
    return this.first;
  }

  /** The termination the first cancellation with a signal began, if any. */
  get termination(): Promise<void> | undefined {
    return this.firstTermination;
  }

  /** A promise that resolves on the first cancellation to come (a held script is released by it). */
  get whenCancelled(): Promise<void> {
    this.released ??= new Promise((resolve) => (this.onCancelled = resolve));
    return this.released;
  }

  /** Resolves when the running script's group is gone. */
  cancel(cancel: RunCancel): Promise<void> {
    this.first ??= cancel;
    this.onCancelled?.();
    const termination = cancel.signal ? this.terminate(cancel.signal) : Promise.resolve();
    this.firstTermination ??= termination;
    return termination;
  }
}

/** How a run ends when a cancellation decided it: as the first cancellation said. */
export function endOfCancel(cancel: RunCancel): RunEnd {
  return {
    reason: cancel.reason,
    exitCode: cancel.exitCode,
    signal: cancel.signal,
    ...(cancel.target !== undefined ? { target: cancel.target } : {}),
    ...(cancel.message !== undefined ? { message: cancel.message } : {}),
    ...(cancel.error !== undefined ? { error: cancel.error } : {}),
  };
}

/** The end the parts are told: with `graceEndsAt` (read when asked) while a termination's grace period runs. */
export function partEndOf(end: RunEnd, graceEndsAt: (() => number | undefined) | undefined): RunEnd {
  return graceEndsAt?.() === undefined ? end : Object.defineProperty({ ...end }, "graceEndsAt", { get: graceEndsAt, enumerable: true });
}
