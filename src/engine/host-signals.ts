import { cancelFor, type CancellingSignal } from "./signals.js";
import type { RunCancel } from "../core/run-part.js";

/**
 * The `hostSignals` feature (the API's): while a `run()` / `runPromise()` is going, SIGINT,
 * SIGTERM and SIGHUP to the host process end that run's scripts — forwarded to the script's group
 * at once, as an abort would — without changing what the host does with the signal:
 *
 * - a host with a handler of its own keeps it: the handler runs, the host goes on, and the run
 *   ends (the loop rejects with an AbortError naming the signal);
 * - a host without one still dies by the signal: once the run's scripts have been sent it, the
 *   listeners here step aside and the signal is raised again, so the runtime's default (and any
 *   `signal-exit` hooks, the run's guardian's among them) apply as if loopx were not listening.
 *   The guardian then finishes the run's ending (grace, SIGKILL, LOOPX_TMPDIR, record).
 *
 * One listener per signal for all active runs of the process, so that runs never count each other
 * as "the host's own handler". Listeners of `signal-exit` (one per loaded copy; it re-raises when
 * alone, as this does) are not the host's own handlers either.
 */

const HOST_SIGNALS: CancellingSignal[] = ["SIGINT", "SIGTERM", "SIGHUP"];

type Cancel = (cancel: RunCancel) => unknown;
const active = new Set<Cancel>();

/** Listeners that `signal-exit` (v4 and v3, sharing their counts across copies) has on each signal. */
function signalExitListeners(): number {
  const v4 = (globalThis as Record<symbol, { count?: unknown } | undefined>)[Symbol.for("signal-exit emitter")]?.count;
  const v3 = (process as unknown as { __signal_exit_emitter__?: { count?: unknown } }).__signal_exit_emitter__?.count;
  return (typeof v4 === "number" ? v4 : 0) + (typeof v3 === "number" ? v3 : 0);
}

function abortError(signal: CancellingSignal): Error {
  return new DOMException(`the run was interrupted by ${signal} to this process`, "AbortError");
}

const listeners = new Map<CancellingSignal, () => void>(
  HOST_SIGNALS.map((signal) => [
    signal,
    () => {
      for (const cancel of active) cancel(cancelFor(signal, abortError(signal)));
      const others = process.listeners(signal).filter((listener) => listener !== listeners.get(signal)).length;
      if (others > signalExitListeners()) return; // the host handles it
      // The host would have died by this signal: let it, as if loopx had never listened.
      active.clear();
      detach();
      process.kill(process.pid, signal);
    },
  ]),
);

function attach(): void {
  for (const [signal, listener] of listeners) process.on(signal, listener);
}

function detach(): void {
  for (const [signal, listener] of listeners) process.removeListener(signal, listener);
}

/** Makes `cancel` hear the host's signals until the returned function is called. */
export function cancelOnHostSignals(cancel: Cancel): () => void {
  if (active.size === 0) attach();
  active.add(cancel);
  return () => {
    if (active.delete(cancel) && active.size === 0) detach();
  };
}
