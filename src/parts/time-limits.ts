import { formatDuration } from "../core/duration.js";
import { TimeoutError } from "../core/errors.js";
import type { RunControls, RunPart } from "../core/run-session.js";

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

/**
 * `--timeout` / RunOptions.timeout (each script execution) and `--max-time` / RunOptions.maxTime
 * (the whole run, from its first script). On expiry the run is cancelled as on a signal — SIGTERM
 * to the running group, grace, SIGKILL, strays — with reason "timed-out", exit code 124 and a
 * TimeoutError naming the script and the limit. A cancelled run starts no further script, so a
 * run limit expiring between two scripts ends the run there.
 */
export function timeLimits(limits: { timeout?: number; maxTime?: number }): RunPart {
  let controls: RunControls | undefined;
  let target: string | undefined;
  let running = false;
  let scriptTimer: { clear(): void } | undefined;
  let runTimer: { clear(): void } | undefined;

  const expire = (message: string) => {
    void controls?.cancel({
      reason: "timed-out",
      signal: "SIGTERM",
      exitCode: 124,
      ...(target !== undefined ? { target } : {}),
      message,
      error: new TimeoutError(message),
    });
  };

  return {
    begin(runControls) {
      controls = runControls;
      const maxTime = limits.maxTime;
      if (maxTime !== undefined) {
        runTimer = startTimer(maxTime, () => {
          const limit = formatDuration(maxTime);
          expire(running ? `script ${target} timed out: the run's time limit of ${limit} was reached` : `the run's time limit of ${limit} was reached${target === undefined ? "" : ` after script ${target}`}`);
        });
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
        target = event.target;
        running = true;
        if (timeout !== undefined) {
          const label = event.target;
          scriptTimer = startTimer(timeout, () => expire(`script ${label} timed out after ${formatDuration(timeout)}`));
        }
      } else if (event.type === "iteration.end") {
        running = false;
        scriptTimer?.clear();
        scriptTimer = undefined;
      }
    },
    end() {
      scriptTimer?.clear();
      runTimer?.clear();
    },
  };
}
