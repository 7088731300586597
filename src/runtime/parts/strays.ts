import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import type { RunControls, RunEnd, RunPart } from "../../core/run-session.js";
import { KILL_GRACE_MS } from "../supervisor.js";

/** A live process of this user carrying a run's LOOPX_RUN_ID in its environment. */
export interface Stray {
  pid: number;
  command: string;
}

/** Endings after which whatever the run left behind is ended; after the others it is reported. */
const ABNORMAL: ReadonlySet<RunEnd["reason"]> = new Set(["interrupted", "hangup", "quit", "timed-out", "aborted", "returned", "failed"]);
const POLL_MS = 50;
/** Strays get at least this long between SIGTERM and SIGKILL, even when the shared grace is spent. */
const MIN_GRACE_MS = 250;
const COMMAND_CHARS = 80;

function shorten(command: string): string {
  return command.length > COMMAND_CHARS ? `${command.slice(0, COMMAND_CHARS - 1)}…` : command;
}

function hasVariable(environ: Buffer, entry: Buffer): boolean {
  for (let at = environ.indexOf(entry); at !== -1; at = environ.indexOf(entry, at + 1)) {
    const end = at + entry.length;
    if ((at === 0 || environ[at - 1] === 0) && (end === environ.length || environ[end] === 0)) return true;
  }
  return false;
}

/**
 * Linux: every /proc/<pid>/environ that can be read (other users' cannot, unless root; those are
 * then skipped by uid), zombies skipped (their environ is empty; PID 1 may never reap them).
 * /proc/<pid>/environ is the environment the process was started (exec'd) with.
 */
function findOnLinux(runId: string): Stray[] {
  const entry = Buffer.from(`LOOPX_RUN_ID=${runId}`);
  const uid = process.getuid?.();
  const found: Stray[] = [];
  for (const name of readdirSync("/proc")) {
    const first = name.charCodeAt(0);
    if (first < 48 || first > 57) continue;
    const pid = Number(name);
    if (pid === process.pid) continue;
    let environ: Buffer;
    try {
      environ = readFileSync(`/proc/${name}/environ`);
    } catch {
      continue;
    }
    if (!hasVariable(environ, entry)) continue;
    try {
      if (uid !== undefined && statSync(`/proc/${name}`).uid !== uid) continue;
      const stat = readFileSync(`/proc/${name}/stat`, "latin1");
      const state = stat[stat.lastIndexOf(")") + 2];
      if (state === "Z" || state === "X") continue;
      const command = readFileSync(`/proc/${name}/cmdline`, "utf8").replace(/\0+$/, "").replace(/\0/g, " ");
      found.push({ pid, command: shorten(command || stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"))) });
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

/**
 * macOS, best effort: `ps -E` shows the environment of this user's processes after their command
 * line, so a command line that itself contains the text can be mistaken for one carrying it, and
 * the command shown is the whole line.
 */
function findWithPs(runId: string): Stray[] {
  let listing: string;
  try {
    listing = execFileSync("ps", ["-E", "-ww", "-U", String(process.getuid?.() ?? ""), "-o", "pid=,stat=,command="], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      maxBuffer: 256 * 1024 * 1024,
    });
  } catch {
    return [];
  }
  const entry = ` LOOPX_RUN_ID=${runId}`;
  const found: Stray[] = [];
  for (const line of listing.split("\n")) {
    const match = /^\s*(\d+)\s+(\S+)\s+(.*)$/.exec(line);
    if (!match) continue;
    const pid = Number(match[1]);
    const rest = match[3]!;
    if (pid === process.pid || match[2]!.startsWith("Z")) continue;
    const at = rest.indexOf(entry);
    if (at === -1 || (rest.length > at + entry.length && rest[at + entry.length] !== " ")) continue;
    found.push({ pid, command: shorten(rest.slice(0, at)) });
  }
  return found;
}

/** The live processes of this user that carry LOOPX_RUN_ID=<runId>, loopx itself excepted. */
export function findStrays(runId: string): Stray[] {
  if (process.platform === "linux") return findOnLinux(runId);
  if (process.platform === "darwin") return findWithPs(runId);
  return [];
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // Already gone.
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Ends every process carrying `runId`: SIGTERM, then (processes it finds later included) SIGKILL
 * once `deadline` passes. Each round scans again, so a pid is only signalled while it still
 * carries the run's id. Returns the processes that could not be ended.
 */
export async function endStrays(runId: string, deadlineAt: number | (() => number)): Promise<Stray[]> {
  const deadline = typeof deadlineAt === "number" ? () => deadlineAt : deadlineAt;
  const termed = new Set<number>();
  let found = findStrays(runId);
  while (found.length > 0 && Date.now() < deadline()) {
    for (const stray of found) {
      if (!termed.has(stray.pid)) {
        termed.add(stray.pid);
        signal(stray.pid, "SIGTERM");
      }
    }
    await sleep(Math.min(POLL_MS, Math.max(0, deadline() - Date.now())));
    found = findStrays(runId);
  }
  for (let round = 0; found.length > 0 && round < 20; round++) {
    for (const stray of found) signal(stray.pid, "SIGKILL");
    await sleep(POLL_MS);
    found = findStrays(runId);
  }
  return found;
}

function describeStrays(strays: Stray[]): string {
  return strays.map((stray) => `${stray.pid} (${stray.command})`).join(", ");
}

/**
 * No stray process after an abnormal ending (loopx's own addition). A process that left the
 * script's group (setsid, a detached child, a daemon) still carries the run's LOOPX_RUN_ID; when
 * the run ends by a signal, an abort, `return()`, a time limit or a failing script, such processes
 * are ended with SIGTERM → the remaining grace period of the group's termination → SIGKILL. After
 * a normal end (stop, -n reached) they may be daemons started on purpose: one warning names them
 * and they keep running. Costs nothing per iteration: the scan runs once, when the run ends.
 */
export function strays(options: { graceMs?: number } = {}): RunPart {
  let controls: RunControls | undefined;
  return {
    begin(runControls) {
      controls = runControls;
    },
    async end(end) {
      if (!controls) return;
      const runId = controls.id;
      if (!ABNORMAL.has(end.reason)) {
        const left = findStrays(runId);
        if (left.length > 0) {
          const count = left.length === 1 ? "1 process" : `${left.length} processes`;
          controls.warn(
            `${count} started by this run ${left.length === 1 ? "is" : "are"} still running: ${describeStrays(left)} (start daemons with env -u LOOPX_RUN_ID to silence this)`,
          );
        }
        return;
      }
      const now = Date.now();
      // Read again each round: a second Ctrl-C ends the grace at once.
      const deadline = () => Math.max(end.graceEndsAt ?? now + (options.graceMs ?? KILL_GRACE_MS), now + MIN_GRACE_MS);
      const survivors = await endStrays(runId, deadline);
      if (survivors.length > 0) controls.warn(`could not end ${survivors.length} process(es) started by this run: ${describeStrays(survivors)}`);
    },
  };
}
