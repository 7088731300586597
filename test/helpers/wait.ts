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
 * The pid a script wrote to `path` (`echo $$ > b.pid`), once the file holds a whole one: a file
 * that exists may still be empty (the shell creates it before it writes), and Number("") is 0,
 * which `process.kill(-0)` takes for the test's own process group.
 */
export async function waitForPid(path: string, timeoutMs = 10_000): Promise<number> {
  let pid = 0;
  const whole = () => {
    const text = existsSync(path) ? readFileSync(path, "utf8") : "";
    pid = /^\d+\n?$/.test(text) ? Number(text) : 0;
    return pid > 1;
  };
  if (!(await waitFor(whole, timeoutMs))) throw new Error(`timed out waiting for a pid in ${path}`);
  return pid;
}

/**
 * The line a script wrote to `path` (`echo "$LOOPX_RUN_ID" > run.id`), once it is whole: the shell
 * creates the file before it writes, so a file that exists may still be empty.
 */
export async function waitForLine(path: string, timeoutMs = 10_000): Promise<string> {
  let line = "";
  const whole = () => {
    const text = existsSync(path) ? readFileSync(path, "utf8") : "";
    line = text.trim();
    return text.endsWith("\n") && line !== "";
  };
  if (!(await waitFor(whole, timeoutMs))) throw new Error(`timed out waiting for a line in ${path}`);
  return line;
}
