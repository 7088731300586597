import { lazyFs } from "../os/lazy-fs.js";
import type { ProgressSignal } from "../core/stall.js";

/**
 * A script's own progress signal (loopx's own addition): `progress(value)` from "loopx",
 * `loopx progress <value>` from bash. It counts only in a run with the stall sensor
 * (`--stall-after`): that run gives its scripts LOOPX_RUN_PROGRESS, a file in its LOOPX_TMPDIR the
 * signal is appended to (one line, one write) and which loopx reads before the next script.
 * Anywhere else it does nothing: a script may send it whether or not its run listens.
 */

/** The variable a run with the stall sensor gives its scripts. */
export const PROGRESS_PATH_VAR = "LOOPX_RUN_PROGRESS";

/** The progress file's name in the run's LOOPX_TMPDIR: tells the run it belongs to. */
export function progressFileName(run: string): string {
  return `.progress-${run}.jsonl`;
}

/** The signal for `value`, checked: a finite number or a non-empty one-line text; a non-negative finite step. */
export function progressSignal(value: unknown, minStep?: unknown): ProgressSignal {
  if (typeof value === "number" ? !Number.isFinite(value) : typeof value !== "string" || value === "" || /[\r\n]/.test(value)) {
    throw new TypeError(`progress needs a finite number or a one-line text, got ${JSON.stringify(value) ?? String(value)}`);
  }
  if (minStep !== undefined && (typeof minStep !== "number" || !Number.isFinite(minStep) || minStep < 0)) {
    throw new TypeError(`the minimum step must be a non-negative number, got ${JSON.stringify(minStep) ?? String(minStep)}`);
  }
  if (typeof value === "string" && minStep !== undefined) throw new TypeError("a minimum step goes with a number, not a text value");
  return { value: value as number | string, ...(minStep !== undefined ? { minStep } : {}) };
}

/**
 * Tells the run that this script made progress measured as `value` (see core/stall.ts for when it
 * counts). Throws a TypeError for a value it refuses; returns false, doing nothing, outside a run
 * that listens.
 */
export function progress(value: number | string, options: { minStep?: number } = {}, env: Record<string, string | undefined> = process.env): boolean {
  const signal = progressSignal(value, options.minStep);
  const path = env[PROGRESS_PATH_VAR];
  const run = env.LOOPX_RUN_ID;
  // A nested run's script inherits the outer run's variable, never its LOOPX_RUN_ID.
  if (!path || !run || !path.endsWith(`/${progressFileName(run)}`)) return false;
  const n = Number(env.LOOPX_ITERATION);
  const line = `${JSON.stringify({ ...signal, ...(Number.isInteger(n) && n > 0 ? { n } : {}) })}\n`;
  const fs = lazyFs();
  let fd: number;
  try {
    fd = fs.openSync(path, fs.constants.O_WRONLY | fs.constants.O_APPEND);
  } catch {
    return false;
  }
  try {
    fs.writeSync(fd, line);
    return true;
  } catch {
    return false;
  } finally {
    fs.closeSync(fd);
  }
}
