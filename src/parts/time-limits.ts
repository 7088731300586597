import { formatDuration } from "../core/duration.js";
import { TimeoutError } from "../core/errors.js";
import type { RunControls, RunPart } from "../core/run-part.js";

/** setTimeout takes at most 2^31-1 ms (~24.8 days); longer limits re-arm. Unref'd: a limit never keeps a process alive. */
function startTimer(ms: number, onExpiry: () => void): { clear(): void } {
  const MAX = 2 ** 31 - 1;
  const deadline = Date.now() + ms;
  let timer: ReturnType<typeof setTimeout>;
  const arm = () => {
    const left = deadline - Date.now();
    timer = setTimeout(left > MAX ? arm : onExpiry, Math.min(Math.max(left, 0), MAX));
    timer.unref?.();
  };
  arm();
  return { clear: () => clearTimeout(timer) };
}

/** How long a script whose own process exited may keep its stdout open after a late limit. */
const LATE_GRACE_MS = 2000;

/** What a limit's expiry needs to know of the run: its controls and the script running now. */
interface LimitState {
  controls: RunControls | undefined;
  target: string | undefined;
  running: boolean;
}

/**
 * How a reached limit ends the run, apart from the timers because of one rule it must keep: a
 * limit found expired when the running script's own process has already exited (loopx was
 * stopped, SIGSTOP, and continued after the deadline) means the script finished in time, so its
 * result is read first and the run limit applies after it (no further script starts). Only if its
 * stdout stays open past LATE_GRACE_MS (a process it left behind) is it ended as usual.
 */
function limitExpiry(state: LimitState) {
  const expireNow = (message: string) => {
    const target = state.target;
    void state.controls?.cancel({
      reason: "timed-out",
      signal: "SIGTERM",
      exitCode: 124,
      ...(target !== undefined ? { target } : {}),
      message,
      error: new TimeoutError(message),
    });
  };
  let late: { message: () => string; fallback: ReturnType<typeof setTimeout> } | undefined;
  return {
    expire(message: () => string, afterScript: boolean) {
      if (!state.running || !state.controls?.scriptExited()) return expireNow(message());
      if (late) return;
      const fallback = setTimeout(() => {
        late = undefined;
        expireNow(message());
      }, LATE_GRACE_MS);
      fallback.unref?.();
      late = { message: afterScript ? message : () => "", fallback };
    },
    /** The running script ended: a limit held back for it applies now (or not at all). */
    settleLate() {
      if (!late) return;
      clearTimeout(late.fallback);
      const message = late.message();
      late = undefined;
      if (message) expireNow(message); // the run's limit: after this script; a script's own limit: it finished in time
    },
    clear() {
      if (late) clearTimeout(late.fallback);
    },
  };
}

/**
 * `--timeout` / RunOptions.timeout (each script execution) and `--max-time` / RunOptions.maxTime
 * (the whole run, from its first script). On expiry the run is cancelled as on a signal — SIGTERM
 * to the running group, grace, SIGKILL, strays — with reason "timed-out", exit code 124 and a
 * TimeoutError naming the script and the limit. A cancelled run starts no further script, so a
 * run limit expiring between two scripts ends the run there.
 */
export function timeLimits(limits: { timeout?: number; maxTime?: number }): RunPart {
  const state: LimitState = { controls: undefined, target: undefined, running: false };
  const { expire, settleLate, clear } = limitExpiry(state);
  let scriptTimer: { clear(): void } | undefined;
  let runTimer: { clear(): void } | undefined;

  let deadline: number | undefined;
  const runExpired = () => {
    const limit = formatDuration(limits.maxTime!);
    // The words are made when the run ends, from the script running (or last run) by then.
    const message = () => {
      const target = state.target;
      return state.running ? `script ${target} timed out: the run's time limit of ${limit} was reached` : `the run's time limit of ${limit} was reached${target === undefined ? "" : ` after script ${target}`}`;
    };
    expire(message, true);
  };

  const part: RunPart = {
    begin(runControls) {
      state.controls = runControls;
      const maxTime = limits.maxTime;
      if (maxTime !== undefined) {
        deadline = Date.now() + maxTime;
        runTimer = startTimer(maxTime, runExpired);
      }
      // The limits, for scripts: a SIGTERM that comes when one is reached is the time limit.
      const vars: Record<string, string> = {};
      if (limits.timeout !== undefined) vars.LOOPX_SCRIPT_TIMEOUT_MS = String(limits.timeout);
      if (maxTime !== undefined) vars.LOOPX_RUN_DEADLINE = String(Date.now() + maxTime);
      return vars;
    },
    onEvent(event) {
      const timeout = limits.timeout;
      if (event.type === "iteration.start") {
        state.target = event.target;
        state.running = true;
        if (timeout !== undefined) {
          const label = event.target;
          scriptTimer = startTimer(timeout, () => expire(() => `script ${label} timed out after ${formatDuration(timeout)}`, false));
        }
      } else if (event.type === "iteration.end") {
        state.running = false;
        scriptTimer?.clear();
        scriptTimer = undefined;
        settleLate();
      }
    },
    end() {
      clear();
      scriptTimer?.clear();
      runTimer?.clear();
    },
  };
  // With --max-time, before each script: a deadline already past whose timer has not fired yet
  // (loopx was stopped; the runtime ran the ended script's I/O first) starts no further script.
  if (limits.maxTime !== undefined) part.beforeScript = () => void (deadline !== undefined && Date.now() >= deadline && runExpired());
  return part;
}
