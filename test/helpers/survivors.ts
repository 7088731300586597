/** What outlives loopx: live processes (/proc, or ps on macOS), their memory, leftover run directories, and a script that resists ending. */
import { spawnSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { sh } from "./project.js";

/** True while process `pid` exists and is not a zombie (PID 1 here may never reap orphans). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  if (process.platform !== "linux") {
    // No /proc (macOS): ps prints the state, "Z" for a zombie, nothing once the pid is gone.
    const state = spawnSync("ps", ["-o", "stat=", "-p", String(pid)], { encoding: "utf8" }).stdout.trim();
    return state !== "" && !state.startsWith("Z");
  }
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const state = status.match(/^State:\s+(\S)/m)?.[1];
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

/**
 * The fields of /proc/<pid>/stat after the process name (state, ppid, pgrp, …; Linux only). The
 * name is in parentheses and may hold spaces and parentheses itself: the fields start after the last ")".
 */
export function procStatFields(pid: number | "self"): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** Live (non-zombie) processes whose environment holds the variable `name=value`. */
export function carriersOf(name: string, value: string): number[] {
  const needle = `\0${name}=${value}\0`;
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let environ: string;
    try {
      environ = `\0${readFileSync(`/proc/${entry}/environ`, "latin1")}`;
    } catch {
      continue;
    }
    if (environ.includes(needle) && processAlive(Number(entry))) found.push(Number(entry));
  }
  return found;
}

/** The run directories (LOOPX_TMPDIR) loopx created, and left, in `tmp`. */
export function leftovers(tmp: string): string[] {
  return readdirSync(tmp).filter((name) => /^loopx-[A-Za-z0-9]{6}$/.test(name));
}

/** A memory figure of a live process, in kB, from /proc/<pid>/status (Linux only). */
export function procMemoryKb(pid: number, field: "VmHWM" | "VmRSS"): number {
  const match = readFileSync(`/proc/${pid}/status`, "utf8").match(new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m"));
  if (!match) throw new Error(`no ${field} for ${pid}`);
  return Number(match[1]);
}

/**
 * Live (non-zombie) processes whose environment holds HARDENING_TAG=<tag>: a test puts a unique tag
 * in loopx's environment, and every descendant inherits it, known to the test or not.
 */
export function taggedSurvivors(tag: string): number[] {
  return carriersOf("HARDENING_TAG", tag);
}

/**
 * A script for "nothing outlives loopx" tests: it ignores SIGINT/SIGTERM/SIGQUIT, traces SIGHUP
 * (`got` in `trace`, and goes on), starts a `setsid` child and a double-forked daemon (both
 * carrying LOOPX_RUN_ID), then writes tmpdir.txt, parent.pid (loopx, or the host of run()) and
 * run.id, and loops for ever.
 */
export const STUBBORN_SCRIPT = sh(`cd "$LOOPX_PROJECT_ROOT"
trap 'echo "got $1" >> trace' HUP
trap '' INT TERM QUIT
setsid bash -c 'echo $$ > setsid.pid; exec sleep 1000' &
( setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > daemon.pid )
while [ ! -s setsid.pid ] || [ ! -s daemon.pid ]; do sleep 0.02; done
echo "$LOOPX_TMPDIR" > tmpdir.txt
echo $PPID > parent.pid
echo "$LOOPX_RUN_ID" > run.id
while :; do sleep 0.1; done`);
