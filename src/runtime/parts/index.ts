import type { RunPart } from "../../core/run-session.js";
import { strays } from "./strays.js";
import { timeLimits } from "./time-limits.js";

/**
 * The run features a run asks for, from the CLI's options or the API's RunOptions. Both drivers
 * build one and get their parts from `runParts`, so a feature is written once for both.
 */
export interface RunFeatures {
  /** The CLI's arguments after `loopx` (CLI runs only). */
  argv?: string[];
  /** Limit for each script execution, in ms (`--timeout`, RunOptions.timeout). */
  timeout?: number;
  /** Limit for the whole run, in ms (`--max-time`, RunOptions.maxTime). */
  maxTime?: number;
}

/**
 * The parts for one run, in the order they begin (they end in reverse order). A feature nobody
 * asked for adds no part, and so costs nothing.
 */
export function runParts(features: RunFeatures): RunPart[] {
  const parts: RunPart[] = [];
  if (features.timeout !== undefined || features.maxTime !== undefined) {
    parts.push(timeLimits({ timeout: features.timeout, maxTime: features.maxTime }));
  }
  // Every run: it scans once, when the run ends, and never per iteration.
  parts.push(strays());
  return parts;
}
