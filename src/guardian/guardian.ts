import { rmSync, writeFileSync } from "node:fs";
import { constants as os } from "node:os";
import { EVENT_VERSION, SIGNAL_REASONS, type RunEndEvent, type RunEndReason } from "../core/events.js";
import { parseRecord } from "../records/parse.js";
import { lastIterationEnd, startEvent } from "../records/run-state.js";
import type { GuardedRun } from "./part.js";
import { endStrays, findStrays } from "../parts/strays.js";
import { removeScratchDir } from "../parts/tmpdir.js";
import { groupAlive, signalGroup, waitForGroupExit } from "../os/process-group.js";
import { exitStatusFromStat, uptimeSeconds } from "../os/procfs.js";
import { closingPath, readRecordEnds } from "../records/store.js";
import { KILL_GRACE_MS } from "../runtime/supervisor.js";
import { livePath, } from "../records/paths.js";
import { appendEnd, appendLine, releaseEndRoom } from "../records/close.js";
import { hookAfterDeath } from "../hooks/dead-run.js";

/**
 * What a run's guardian does once loopx is gone without ending the run (guardian/part.ts starts
 * it): the same ending a Ctrl-C gives — SIGTERM, the 5 s grace, SIGKILL — to every process group
 * led by a process of the run and to every process still carrying LOOPX_RUN_ID, then LOOPX_TMPDIR
 * removed by the rules of the run's own ending, then `run.end` appended to the record. Runs with
 * no terminal and no output: what it could not do is said in the record's `message`.
 */

/** How loopx ended, as far as the guardian can know it. */
interface Ending {
  reason: RunEndReason;
  exitCode: number | null;
  signal?: NodeJS.Signals;
  message: string;
}

/** Signals of a fault or an abort: the process crashed rather than being told to end. */
const CRASH_SIGNALS = new Set(["SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGABRT", "SIGSYS", "SIGTRAP"]);

/** Signal numbers to names, the first name of each number (SIGABRT, not its alias SIGIOT). */
const SIGNAL_NAMES = new Map<number, NodeJS.Signals>();
for (const [name, number] of Object.entries(os.signals)) if (!SIGNAL_NAMES.has(number)) SIGNAL_NAMES.set(number, name as NodeJS.Signals);

/** The ending a signal gives a run: as loopx's own handling names it, or killed / crashed. */
export function reasonForSignal(signal: NodeJS.Signals): RunEndReason {
  if (signal in SIGNAL_REASONS) return SIGNAL_REASONS[signal as keyof typeof SIGNAL_REASONS];
  return CRASH_SIGNALS.has(signal) ? "crashed" : "killed";
}

/** How the dead loopx ended, from the stat line the waiting shell read as soon as the pipe closed. */
function statusFromStat(stat: string): { signal?: NodeJS.Signals; code?: number } | undefined {
  const status = exitStatusFromStat(stat);
  if (status?.signal === undefined) return status?.code === undefined ? undefined : { code: status.code };
  const signal = SIGNAL_NAMES.get(status.signal);
  return signal ? { signal } : undefined;
}

/**
 * How loopx ended: its wait status when the guardian caught it (the kernel's word), else what its
 * exit hook said ("signal SIGHUP", "exit 1"; Bun reports an uncaught exception as exit 0 there).
 */
export function endingOf(said: string, stat: string): Ending {
  const [kind, value] = said.split(" ");
  const named = kind === "signal" ? SIGNAL_NAMES.get(os.signals[value as NodeJS.Signals]) : undefined;
  const seen = statusFromStat(stat) ?? (named ? { signal: named } : kind === "exit" ? { code: Number(value) } : undefined);
  if (seen?.signal !== undefined) {
    const number = os.signals[seen.signal];
    return {
      reason: reasonForSignal(seen.signal),
      exitCode: number === undefined ? null : 128 + number,
      signal: seen.signal,
      message: `loopx ended by ${seen.signal} without ending the run; its guardian ended it`,
    };
  }
  if (seen?.code !== undefined && Number.isInteger(seen.code)) {
    return { reason: "crashed", exitCode: seen.code, message: `the process running the loop exited (code ${seen.code}) without ending the run; its guardian ended it` };
  }
  return {
    reason: "killed",
    exitCode: null,
    message: "loopx was killed (SIGKILL, an out-of-memory kill or a fatal fault: the signal is not known) without ending the run; its guardian ended it",
  };
}

/** The events at the start and the end of the run's record; none if it cannot be read. */
function recordEvents(run: GuardedRun) {
  if (run.records === undefined) return [];
  try {
    return parseRecord(readRecordEnds(run.records, run.run)).events;
  } catch {
    return [];
  }
}

/**
 * Ends every group led by a process of the run (the script's, and those of `setsid` children)
 * and every process carrying the run's id: SIGTERM now, SIGKILL once `deadline` passes. A group is
 * only signalled while its leader carries the run's id, so a group id reused since is never hit.
 */
async function endRunProcesses(runId: string, deadline: number): Promise<void> {
  const leaders = findStrays(runId)
    .map((stray) => stray.pid)
    .filter((pid) => signalGroup(pid, 0));
  for (const pgid of leaders) signalGroup(pgid, "SIGTERM");
  await endStrays(runId, deadline);
  for (const pgid of leaders) {
    if (!groupAlive(pgid)) continue;
    if (!(await waitForGroupExit(pgid, Math.max(0, deadline - Date.now())))) signalGroup(pgid, "SIGKILL");
  }
}

/** When loopx's pipe closed: `uptime` (seconds since boot, as the waiting shell read it then), else now. */
function endedAtFrom(uptime: string): number {
  const then = Number(uptime);
  const now = uptimeSeconds();
  if (!uptime || !Number.isFinite(then) || now === undefined) return Date.now();
  return Date.now() - Math.max(0, Math.round((now - then) * 1000));
}

/**
 * The guardian's work; `args`: the JSON of the run, what loopx said, its stat line, the uptime it
 * died at, "1" if loopx had started the run's end-of-run hook, and the last iteration loopx told
 * it of (a run without a record).
 */
export async function guard(args: string[]): Promise<number> {
  const endedAt = endedAtFrom(args[3] ?? "");
  let run: GuardedRun;
  try {
    run = JSON.parse(args[0] ?? "") as GuardedRun;
    if (typeof run.run !== "string") return 2;
  } catch {
    return 2;
  }
  const events = recordEvents(run);
  // loopx died after closing the record itself: its ending did the work (but for the reserve, maybe).
  if (events[events.length - 1]?.type === "run.end") {
    if (run.records !== undefined) releaseEndRoom(run.records, run.run);
    return 0;
  }
  // While this guardian closes the run, its record is not pruned (see pruneRecords).
  const closing = run.records === undefined || events.length === 0 ? undefined : closingPath(run.records, run.run);
  if (closing !== undefined) {
    try {
      writeFileSync(closing, String(process.pid), { mode: 0o600 });
    } catch {
      // The directory is gone: nothing to keep.
    }
  }
  const ending = endingOf(args[1] ?? "", args[2] ?? "");
  await endRunProcesses(run.run, endedAt + KILL_GRACE_MS);
  const problems: string[] = [];
  if (run.scratch) {
    const { path, dev, ino, birth } = run.scratch;
    removeScratchDir({ path, dev: BigInt(dev), ino: BigInt(ino), birth: BigInt(birth) }, (problem) => problems.push(problem));
  }
  const left = findStrays(run.run);
  if (left.length > 0) problems.push(`could not end ${left.length} process(es) of the run: ${left.map((stray) => stray.pid).join(", ")}`);
  const start = startEvent(events);
  // The record's highest iteration; with no record, the last one loopx told the guardian of.
  const told = Number(args[5]);
  const iterations = events.reduce((max, event) => (event.type === "iteration.start" || event.type === "iteration.end" ? Math.max(max, event.n) : max), Number.isSafeInteger(told) && told > 0 ? told : 0);
  const end: RunEndEvent = {
    v: EVENT_VERSION,
    type: "run.end",
    time: new Date(endedAt).toISOString(),
    run: run.run,
    reason: ending.reason,
    exitCode: ending.exitCode,
    iterations,
    durationMs: Math.max(0, endedAt - (start ? Date.parse(start.time) : run.startedAt)),
    message: [ending.message, ...problems].join("; "),
    ...(ending.signal !== undefined ? { signal: ending.signal } : {}),
  };
  const hook = await hookAfterDeath(run, events, end, args[4] === "1");
  const hookLine = hook ? `${JSON.stringify(hook)}\n` : "";
  if (run.records !== undefined) appendEnd(run.records, run.run, end, hookLine, lastIterationEnd(events)?.n ?? 0);
  if (run.log !== undefined) appendLine(run.log, `${hookLine}${JSON.stringify(end)}\n`);
  // The run is closed: its lifeline (records/lifeline.ts) has nothing more to tell.
  if (run.records !== undefined) rmSync(livePath(run.records, run.run), { force: true });
  if (closing !== undefined) rmSync(closing, { force: true });
  return 0;
}
