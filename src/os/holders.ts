import { fstatSync, readdirSync, statSync } from "node:fs";
import { listPids, processCommand, readProcess, type FoundProcess } from "./procfs.js";

/**
 * The live processes (this one excepted) that have open what this process's descriptor `fd` is
 * (a pipe: the processes that keep a script's stdout open). Linux only: every readable
 * /proc/<pid>/fd entry is stat'ed, so it is for a rare, one-time question, never per iteration.
 * Empty elsewhere or when nothing can be read.
 */
export function processesHolding(fd: number, limit = 5): FoundProcess[] {
  if (process.platform !== "linux") return [];
  let target;
  try {
    target = fstatSync(fd);
  } catch {
    return [];
  }
  const found: FoundProcess[] = [];
  for (const pid of listPids()) {
    if (pid === process.pid || found.length >= limit) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // another user's process, or gone
    }
    const holds = fds.some((entry) => {
      try {
        const stat = statSync(`/proc/${pid}/fd/${entry}`);
        return stat.ino === target.ino && stat.dev === target.dev;
      } catch {
        return false;
      }
    });
    if (!holds) continue;
    const entry = readProcess(pid);
    if (!entry?.live) continue;
    found.push({ pid, command: processCommand(pid) || entry.name });
  }
  return found;
}
