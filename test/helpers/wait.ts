/** Waiting in tests: a sleep, polling a predicate, waiting for a file. */
import { existsSync, readFileSync } from "node:fs";

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

/**
 * What `read` makes of the text a script wrote to `path`, once it makes something of it (not
 * undefined): the shell creates the file before it writes, so a file that exists may still be empty.
 */
async function waitForContent<T>(path: string, read: (text: string) => T | undefined, what: string, timeoutMs: number): Promise<T> {
  let value: T | undefined;
  const made = () => (value = read(existsSync(path) ? readFileSync(path, "utf8") : "")) !== undefined;
  if (!(await waitFor(made, timeoutMs))) throw new Error(`timed out waiting for ${what} in ${path}`);
  return value!;
}

/**
 * The pid a script wrote to `path` (`echo $$ > b.pid`), once the file holds a whole one: Number("")
 * is 0, which `process.kill(-0)` takes for the test's own process group.
 */
export function waitForPid(path: string, timeoutMs = 10_000): Promise<number> {
  return waitForContent(path, (text) => (/^\d+\n?$/.test(text) && Number(text) > 1 ? Number(text) : undefined), "a pid", timeoutMs);
}

/** The line a script wrote to `path` (`echo "$LOOPX_RUN_ID" > run.id`), once it is whole. */
export function waitForLine(path: string, timeoutMs = 10_000): Promise<string> {
  return waitForContent(path, (text) => (text.endsWith("\n") && text.trim() !== "" ? text.trim() : undefined), "a line", timeoutMs);
}
