import { setTimeout as sleep } from "node:timers/promises";
import { groupHasLiveProcess } from "./procfs.js";

/** Sends `signal` to every process in group `pgid`; false if the group no longer exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * True while any process of group `pgid` is still running. Zombies do not count: in a sandbox
 * whose PID 1 never reaps orphans, a dead grandchild can linger as a zombie forever.
 */
export function groupAlive(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false;
  return groupHasLiveProcess(pgid) ?? true;
}

/** Resolves once group `pgid` has no live process, polling; false if `timeoutMs` passed first. */
export async function waitForGroupExit(pgid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (groupAlive(pgid)) {
    if (Date.now() >= deadline) return false;
    await sleep(25);
  }
  return true;
}
