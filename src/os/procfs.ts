/**
 * The one reader of other processes: what the machine says about a pid (its group, state, start
 * time, owner, command line, environment). Linux reads /proc; elsewhere (macOS) only what is
 * needed has a fallback — `ps` for the environment scan, `kill(pid, 0)` for "is it alive". Used by
 * process groups (is any of a group still running), strays (who carries a run's id) and run
 * records (is the run's process still the one that wrote it). Synchronous and cheap enough to poll:
 * a scan reads one small file per process.
 */
import { execFileSync } from "node:child_process";
import { fs } from "./builtins.js";

/** A process as /proc/<pid>/stat describes it. */
export interface ProcessEntry {
  pid: number;
  /** Its process group. */
  pgid: number;
  /** One letter: R running, S sleeping, D disk wait, T stopped, Z zombie, X dead, ... */
  state: string;
  /** False for a zombie or a dead process: it runs no code any more (PID 1 may never reap it). */
  live: boolean;
  /** When it started, ms since 1970; undefined where the boot time is unknown. */
  startedAt: number | undefined;
  /** The command name (at most 15 characters; the command line is `processCommand`). */
  name: string;
}

/** A process found by its environment. */
export interface FoundProcess {
  pid: number;
  /** Its command line, arguments separated by spaces. */
  command: string;
}

let bootTimeMs: number | undefined | null;

/** Boot time from /proc/stat (ms since 1970); null where there is no /proc (macOS). */
function bootTime(): number | null {
  if (bootTimeMs === undefined) {
    try {
      const btime = /^btime (\d+)$/m.exec(fs.readFileSync("/proc/stat", "utf8"))?.[1];
      bootTimeMs = btime ? Number(btime) * 1000 : null;
    } catch {
      bootTimeMs = null;
    }
  }
  return bootTimeMs;
}

/** True where processes can be read from /proc (Linux). */
export function hasProcfs(): boolean {
  return process.platform === "linux" && bootTime() !== null;
}

/** Every pid in /proc, in no particular order; empty where there is no /proc. */
export function listPids(): number[] {
  let names: string[];
  try {
    names = fs.readdirSync("/proc");
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const name of names) {
    const first = name.charCodeAt(0);
    if (first >= 48 && first <= 57) pids.push(Number(name));
  }
  return pids;
}

/** What /proc/<pid>/stat says, or undefined if the process is gone (or there is no /proc). */
export function readProcess(pid: number): ProcessEntry | undefined {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1");
  } catch {
    return undefined;
  }
  // The command name sits in parentheses and may itself contain spaces and parentheses. The fields
  // after it: state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime
  // cutime cstime priority nice num_threads itrealvalue starttime (clock ticks after boot).
  const close = stat.lastIndexOf(")");
  const fields = stat.slice(close + 2).split(" ");
  const state = fields[0] ?? "";
  const boot = bootTime();
  const ticks = Number(fields[19]);
  return {
    pid,
    pgid: Number(fields[2]),
    state,
    live: state !== "Z" && state !== "X",
    startedAt: boot === null || !Number.isFinite(ticks) ? undefined : boot + (ticks * 1000) / 100, // USER_HZ is 100 on Linux
    name: stat.slice(stat.indexOf("(") + 1, close),
  };
}

/** The uid owning `pid`, or undefined if it is gone. */
export function processUid(pid: number): number | undefined {
  try {
    return fs.statSync(`/proc/${pid}`).uid;
  } catch {
    return undefined;
  }
}

/** The command line of `pid`, arguments separated by spaces ("" for a kernel thread or zombie). */
export function processCommand(pid: number): string | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0+$/, "").replace(/\0/g, " ");
  } catch {
    return undefined;
  }
}

/**
 * The environment `pid` was started (exec'd) with, NUL-separated `NAME=value` entries; undefined if
 * it cannot be read (another user's process, unless root) or is gone.
 */
export function processEnvironment(pid: number): Buffer | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/environ`);
  } catch {
    return undefined;
  }
}

/**
 * True while any live (non-zombie) process of group `pgid` exists; undefined where this cannot be
 * read (no /proc): the caller falls back on kill(-pgid, 0).
 */
export function groupHasLiveProcess(pgid: number): boolean | undefined {
  if (process.platform !== "linux") return undefined;
  const pids = listPids();
  if (pids.length === 0) return undefined;
  for (const pid of pids) {
    const entry = readProcess(pid);
    if (entry?.pgid === pgid && entry.live) return true;
  }
  return false;
}

/**
 * True while `pid` is running: it exists, is no zombie, and (where start times are known) started
 * no later than `startedBy` (ms since 1970) — a reused pid belongs to a process started after.
 * Without /proc: kill(pid, 0), where EPERM (another user's process) means it exists.
 */
export function processRunning(pid: number, startedBy?: number): boolean {
  const entry = readProcess(pid);
  if (entry === undefined) {
    if (hasProcfs()) return false;
    try {
      process.kill(pid, 0);
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "EPERM";
    }
  }
  if (!entry.live) return false;
  return startedBy === undefined || entry.startedAt === undefined || entry.startedAt <= startedBy;
}

function hasEntry(environ: Buffer, entry: Buffer): boolean {
  for (let at = environ.indexOf(entry); at !== -1; at = environ.indexOf(entry, at + 1)) {
    const end = at + entry.length;
    if ((at === 0 || environ[at - 1] === 0) && (end === environ.length || environ[end] === 0)) return true;
  }
  return false;
}

/**
 * Linux: every /proc/<pid>/environ that can be read (other users' cannot, unless root; those are
 * then skipped by uid), zombies skipped (their environ is empty; PID 1 may never reap them).
 */
function findOnLinux(variable: string, uid: number | undefined): FoundProcess[] {
  const entry = Buffer.from(variable);
  const found: FoundProcess[] = [];
  for (const pid of listPids()) {
    if (pid === process.pid) continue;
    const environ = processEnvironment(pid);
    if (environ === undefined || !hasEntry(environ, entry)) continue;
    if (uid !== undefined && processUid(pid) !== uid) continue;
    const stat = readProcess(pid);
    if (!stat?.live) continue;
    const command = processCommand(pid);
    if (command === undefined) continue; // gone meanwhile
    found.push({ pid, command: command || stat.name });
  }
  return found;
}

/**
 * macOS, best effort: `ps -E` shows the environment of this user's processes after their command
 * line, so a command line that itself contains the text can be mistaken for one carrying it, and
 * the command shown is the whole line.
 */
function findWithPs(variable: string, uid: number | undefined): FoundProcess[] {
  let listing: string;
  try {
    listing = execFileSync("ps", ["-E", "-ww", "-U", String(uid ?? ""), "-o", "pid=,stat=,command="], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      maxBuffer: 256 * 1024 * 1024,
    });
  } catch {
    return [];
  }
  const entry = ` ${variable}`;
  const found: FoundProcess[] = [];
  for (const line of listing.split("\n")) {
    const match = /^\s*(\d+)\s+(\S+)\s+(.*)$/.exec(line);
    if (!match) continue;
    const pid = Number(match[1]);
    const rest = match[3]!;
    if (pid === process.pid || match[2]!.startsWith("Z")) continue;
    const at = rest.indexOf(entry);
    if (at === -1 || (rest.length > at + entry.length && rest[at + entry.length] !== " ")) continue;
    found.push({ pid, command: rest.slice(0, at) });
  }
  return found;
}

/**
 * The live processes of this user whose environment holds exactly `NAME=value` (`variable`), this
 * process excepted. Linux: /proc; macOS: `ps -E`; elsewhere none.
 */
export function processesWithVariable(variable: string): FoundProcess[] {
  const uid = process.getuid?.();
  if (process.platform === "linux") return findOnLinux(variable, uid);
  if (process.platform === "darwin") return findWithPs(variable, uid);
  return [];
}

/** A path that opens (anew) what this process's descriptor `fd` refers to (Linux). */
export function ownDescriptorPath(fd: number): string {
  return `/proc/self/fd/${fd}`;
}

/**
 * A shell fragment, for a watcher whose parent has just died: reads the parent's stat line into
 * `$stat` (it may still hold the dead process's wait status, until the parent is reaped) and the
 * seconds since boot into `$up` (when that was). Both stay empty where there is no /proc.
 */
export const SHELL_READ_DEAD_PARENT = `stat= up=
{ read -r stat < "/proc/$PPID/stat"; read -r up _ < /proc/uptime; } 2>/dev/null`;

/**
 * The wait status in a stat line (field 52, `exit_code`): set once the process is exiting, so a
 * status of 0 counts only for a zombie (or dead) process. The signal number that ended it, or the
 * exit code it gave; undefined when the line tells neither.
 */
export function exitStatusFromStat(stat: string): { signal?: number; code?: number } | undefined {
  const close = stat.lastIndexOf(")");
  if (close < 0) return undefined;
  const fields = stat.slice(close + 2).split(" ");
  const state = fields[0];
  const status = Number(fields[49]);
  if (!Number.isInteger(status) || (status === 0 && state !== "Z" && state !== "X")) return undefined;
  return (status & 0x7f) !== 0 ? { signal: status & 0x7f } : { code: (status >> 8) & 0xff };
}

/** Seconds since boot, or undefined where there is no /proc (macOS). */
export function uptimeSeconds(): number | undefined {
  try {
    const seconds = Number(fs.readFileSync("/proc/uptime", "latin1").split(" ")[0]);
    return Number.isFinite(seconds) ? seconds : undefined;
  } catch {
    return undefined;
  }
}
