import { setTimeout as sleep } from "node:timers/promises";
import type { RunControls, RunEnd, RunPart } from "../core/run-part.js";
import { processesWithVariable } from "../os/procfs.js";
import { KILL_GRACE_MS } from "../runtime/supervisor.js";

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

/** The live processes of this user that carry LOOPX_RUN_ID=<runId>, loopx itself excepted. */
export function findStrays(runId: string): Stray[] {
  return processesWithVariable(`LOOPX_RUN_ID=${runId}`).map(({ pid, command }) => ({ pid, command: shorten(command) }));
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // Already gone.
  }
}


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
