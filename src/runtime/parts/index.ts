import type { RunPart } from "../../core/run-session.js";

/**
 * The run features a run asks for, from the CLI's options or the API's RunOptions. Both drivers
 * build one and get their parts from `runParts`, so a feature is written once for both.
 */
export interface RunFeatures {
  /** The CLI's arguments after `loopx` (CLI runs only). */
  argv?: string[];
}

/**
 * The parts for one run, in the order they begin (they end in reverse order). A feature nobody
 * asked for adds no part, and so costs nothing.
 */
export function runParts(_features: RunFeatures): RunPart[] {
  const parts: RunPart[] = [];
  return parts;
}
