import type { IterationEndEvent, RecordEvent, RunEndEvent, RunResumeEvent, RunStartEvent } from "../core/events.js";
import type { RunState } from "../core/run-states.js";
import type { RunTotals } from "../core/receipts.js";
import type { SandboxInfo } from "../core/sandbox-events.js";
import { describeEnding } from "./wording.js";

/**
 * What a run record says about its run (pure): where it sits now, its state and its summary (one
 * row of `loopx runs`). Whether its process is alive is asked of the caller (src/records/store.ts).
 */


/** One row of `loopx runs`. */
export interface RunSummary {
  id: string;
  state: RunState;
  /** ISO 8601 time of `run.start`. */
  start: string;
  /**
   * From run.start to run.end; of a running run, to now; of a run whose process is gone without a
   * run.end, to the last sign of life seen (its last event, or the record's time, which loopx
   * touches once a second while it runs): a lower bound, marked by `durationAtLeast`.
   */
  durationMs: number;
  /** `durationMs` is a lower bound: the run crashed without a run.end, some time after it. */
  durationAtLeast?: true;
  iterations: number;
  target: string;
  project: string;
  pid: number;
  maxIterations: number | null;
  runtime: string;
  version: string;
  /** The CLI's exit code, once ended. */
  exitCode?: number | null;
  /** The ending in words ("stopped by ralph:check"), once ended. */
  ending?: string;
  message?: string;
  /** What its receipts added up to (when it had any): from run.end, or the whole record (runs.ts). */
  totals?: RunTotals;
  /**
   * false: a going run its record does not show (a full disk kept even its run.start out), listed
   * from what its control channel says (control/live.ts). Absent for every recorded run.
   */
  recorded?: false;
  /** --worktree: the run's branch and the worktree it works in (`project` is the tree it was started from). */
  worktree?: { branch: string; path: string };
  /** --sandbox: the fence of its latest sitting (src/sandbox/). */
  sandbox?: SandboxInfo;
}

/**
 * The project a run belongs to: where it was started. A --worktree run works in its worktree, at
 * the same place below the worktree's top as the project is below its repository's.
 */
export function projectOf(start: RunStartEvent): string {
  const worktree = start.worktree;
  if (!worktree || !start.projectRoot.startsWith(worktree.path)) return start.projectRoot;
  return `${worktree.repo}${start.projectRoot.slice(worktree.path.length)}`;
}

export function startEvent(events: RecordEvent[]): RunStartEvent | undefined {
  const first = events[0];
  return first?.type === "run.start" ? first : undefined;
}

/** The process running the loop now and since when: `run.start`'s, or the last `run.resume`'s. */
export function lastSitting(events: RecordEvent[]): RunStartEvent | RunResumeEvent | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!;
    if (event.type === "run.resume" || event.type === "run.start") return event;
  }
  return undefined;
}

/** The steering state of a run that is going: paused, stopping, or (undefined) running. */
function steering(events: RecordEvent[]): "paused" | "stopping" | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const type = events[i]!.type;
    if (type === "run.stop") return "stopping";
    if (type === "run.pause") return "paused";
    if (type === "run.continue" || type === "run.resume" || type === "run.start") return undefined;
  }
  return undefined;
}

export function lastIterationEnd(events: RecordEvent[]): IterationEndEvent | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!;
    if (event.type === "iteration.end") return event;
  }
  return undefined;
}

/**
 * What a record says about its run (`events`: all of them, or its first and last ones). `alive` tells whether the run's process still exists (asked
 * only for records without `run.end`); `now` is used for the duration of a running run; `touched`
 * (asked only of a crashed run) says when its record was last written or touched (ms since 1970).
 */
export function summarizeRun(
  id: string,
  events: RecordEvent[],
  alive: (sitting: Pick<RunStartEvent, "pid" | "time">) => boolean,
  now: number,
  touched?: () => number | undefined,
): RunSummary | undefined {
  const start = startEvent(events);
  if (!start) return undefined;
  const sitting = lastSitting(events)!;
  const end = events[events.length - 1]?.type === "run.end" ? (events[events.length - 1] as RunEndEvent) : undefined;
  const startMs = Date.parse(start.time);
  const summary: RunSummary = {
    id,
    state: "running",
    start: start.time,
    durationMs: 0,
    // The highest iteration seen: `events` may be a record's first line and its last lines only.
    iterations: events.reduce((max, event) => (event.type === "iteration.start" || event.type === "iteration.end" ? Math.max(max, event.n) : max), 0),
    target: start.target,
    project: projectOf(start),
    pid: sitting.pid,
    maxIterations: sitting.maxIterations,
    runtime: start.runtime,
    version: start.version,
    ...(start.worktree ? { worktree: { branch: start.worktree.branch, path: start.worktree.path } } : {}),
    ...(sitting.sandbox ? { sandbox: sitting.sandbox } : {}),
  };
  if (end) {
    summary.state = end.reason;
    summary.durationMs = end.durationMs;
    summary.iterations = end.iterations;
    summary.exitCode = end.exitCode;
    summary.ending = describeEnding(end, start.maxIterations, lastIterationEnd(events));
    if (end.message !== undefined) summary.message = end.message;
    if (end.receipts) summary.totals = end.receipts;
  } else if (alive(sitting)) {
    summary.state = steering(events) ?? "running";
    summary.durationMs = Math.max(0, now - startMs);
  } else {
    summary.state = "crashed";
    // It lived at least until its last event, and until loopx last touched its record (never later than now).
    const seen = Math.max(Date.parse(events[events.length - 1]!.time), Math.min(now, touched?.() ?? 0));
    summary.durationMs = Math.max(0, seen - startMs);
    summary.durationAtLeast = true;
    summary.ending = `crashed: process ${sitting.pid} is gone without run.end`;
  }
  return summary;
}
