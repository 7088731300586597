/**
 * One set of process listeners for loopx's last-moment hooks, however many runs a process has
 * (a host with 20 concurrent `run()`s adds one "exit" listener, not 20: no
 * MaxListenersExceededWarning in the host's stderr). Attached while at least one hook is
 * registered, detached with the last, so that a host without runs keeps its signals as they were.
 *
 * Each hook hears both the runtime's "exit" event and `signal-exit` (loaded lazily; under Bun it
 * does not see every exit, under Node it sees signals that "exit" does not): it must be idempotent.
 */

/** How the process is ending: its exit code, or the signal killing it (signal-exit). */
export type ExitHook = (code: number | null, signal: NodeJS.Signals | null) => void;

const hooks = new Set<ExitHook>();
let removeSignalExit: (() => void) | undefined;
/** Bumped on each attach/detach, so that a signal-exit import landing late knows whether it is still wanted. */
let generation = 0;

function callAll(code: number | null, signal: NodeJS.Signals | null): void {
  for (const hook of hooks) {
    try {
      hook(code, signal);
    } catch {
      // A hook must not keep the others from running at the last moment.
    }
  }
}

const onExitEvent = (code: number) => callAll(code, null);

function attach(): void {
  const mine = ++generation;
  process.on("exit", onExitEvent);
  void import("signal-exit").then(({ onExit }) => {
    if (mine !== generation) return;
    removeSignalExit = onExit((code, signal) => callAll(code ?? null, signal as NodeJS.Signals | null));
  });
}

function detach(): void {
  generation++;
  process.removeListener("exit", onExitEvent);
  removeSignalExit?.();
  removeSignalExit = undefined;
}

/** Calls `hook` when this process ends, until the returned function is called. */
export function onProcessEnd(hook: ExitHook): () => void {
  if (hooks.size === 0) attach();
  hooks.add(hook);
  return () => {
    if (hooks.delete(hook) && hooks.size === 0) detach();
  };
}
