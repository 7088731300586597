/** Waiting in tests: a sleep, polling a predicate, waiting for a file. */
import { existsSync } from "node:fs";

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `predicate` until it is true or `timeoutMs` passes; returns its last value. */
export async function waitFor(predicate: () => boolean, timeoutMs: number, intervalMs = 25): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) return false;
    await sleep(intervalMs);
  }
  return true;
}

/** Waits for `path` to exist (a script's "ready" marker); throws if it never does. */
export async function waitForFile(path: string, timeoutMs = 10_000): Promise<void> {
  if (!(await waitFor(() => existsSync(path), timeoutMs))) throw new Error(`timed out waiting for ${path}`);
}
