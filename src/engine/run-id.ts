import { newRunId } from "../core/run-id.js";
import { randomBytes } from "../os/random.js";

/**
 * A run id: start time, then 7 random base-36 digits (core/run-id.ts newRunId). Here, not in core,
 * because it reads the clock and the random source, which core (pure) only takes as arguments.
 */
export function createRunId(now: number = Date.now()): string {
  return newRunId(now, randomBytes(7));
}
