import { describeEnding } from "../records/wording.js";
import { lastIterationEnd, lastSitting, startEvent } from "../records/run-state.js";
import type { IterationEndEvent, IterationStartEvent, RecordEvent, RecordedOptions, RunEndEvent, RunStartEvent } from "../core/events.js";
import { formatTarget, gotoTargetOf, parseTarget, workflowOf } from "../core/target.js";

/**
 * Where a run that ended or died goes on (loopx's own addition: `loopx runs resume`,
 * RunOptions.resume), decided from its record alone. The script that was running when the run
 * ended — or failed, or timed out — runs again under its own iteration number with the input it
 * got; if the last script had completed, the loop goes on as it would have (its goto's target with
 * its result, or back to the starting target). Pure: the caller reads the record and the kept
 * input and says whether the run's process is alive.
 */

export interface ResumePoint {
  runId: string;
  start: RunStartEvent;
  /** The script that runs first. */
  target: string;
  /** Its iteration number (LOOPX_ITERATION); iterations before it are done. */
  n: number;
  /** The size of what it gets on stdin, when it gets anything. */
  stdinBytes?: number;
  /** What it gets on stdin, when the record holds all of it (a result up to 4 KiB); else it is in the kept input. */
  stdin?: string;
  /** The whole run's budget from now on (iterations done included); undefined: unlimited. */
  maxIterations: number | undefined;
  /** How long the run was going, every sitting together. */
  elapsedMs: number;
  options: RecordedOptions;
  /** How it ended, in words ("interrupted by SIGINT", "crashed"). */
  ended: string;
}

export type ResumeDecision = { ok: true; point: ResumePoint } | { ok: false; message: string };

/** Endings after which there is nothing to resume (a new -n makes a `limit` run go on). The dashboard's Resume button follows them. */
export const FINISHED_REASONS: readonly string[] = ["stopped", "stopped-on-request"];
const FINISHED = new Set<string>(FINISHED_REASONS);

/**
 * `alive` tells whether the process of the run's last sitting still runs; `newBudget` is a new
 * -n (more iterations from here), if one was given.
 */
export function decideResume(runId: string, events: RecordEvent[], alive: (sitting: { pid: number; time: string }) => boolean, newBudget?: number): ResumeDecision {
  const start = startEvent(events);
  const sitting = lastSitting(events);
  if (!start || !sitting) return { ok: false, message: `run ${runId} has no run.start in its record: it cannot be resumed` };
  const last = events[events.length - 1]!;
  const end = last.type === "run.end" ? last : undefined;
  if (!end && alive(sitting)) return { ok: false, message: `run ${runId} is still running (pid ${sitting.pid}): nothing to resume` };
  const lastEnd = lastIterationEnd(events);
  if (end && FINISHED.has(end.reason)) {
    return { ok: false, message: `run ${runId} was ${describeEnding(end, sitting.maxIterations, lastEnd)}: nothing to resume` };
  }

  const next = resumeTarget(runId, events, start, lastEnd);
  if (!next.ok) return next;
  const { target, n } = next;
  const input = inputOf(events, n);

  const budget = sitting.maxIterations ?? undefined;
  const maxIterations = newBudget !== undefined ? n - 1 + newBudget : budget;
  if (maxIterations !== undefined && maxIterations < n) {
    const used = end?.reason === "limit" ? `reached -n ${budget}` : `has used its -n budget (${budget})`;
    return {
      ok: false,
      message: newBudget === 0 ? `run ${runId}: -n 0 leaves nothing to resume` : `run ${runId} ${used}: nothing to resume (give -n <count> for more iterations)`,
    };
  }
  return {
    ok: true,
    point: {
      runId,
      start,
      target,
      n,
      ...input,
      maxIterations,
      elapsedMs: elapsed(events),
      // The last sitting's options (a budget raised at a resume holds for every later one); run.start's for a record of an older loopx.
      options: ("options" in sitting ? sitting.options : undefined) ?? start.options ?? {},
      ended: end ? describeEnding(end, sitting.maxIterations, lastEnd) : `crashed (process ${sitting.pid} is gone without run.end)`,
    },
  };
}

/**
 * The script that runs first and its iteration number: the last script that started runs again
 * unless it completed; then the loop goes on as it would have.
 */
function resumeTarget(runId: string, events: RecordEvent[], start: RunStartEvent, lastEnd: IterationEndEvent | undefined): { ok: true; target: string; n: number } | { ok: false; message: string } {
  // The last script that started, and whether it completed.
  let started: IterationStartEvent | undefined;
  for (let i = events.length - 1; i >= 0 && !started; i--) if (events[i]!.type === "iteration.start") started = events[i] as IterationStartEvent;
  const completed = started && lastEnd?.n === started.n && lastEnd.output !== undefined && lastEnd.error === undefined ? lastEnd : undefined;

  let target: string;
  let n: number;
  if (!started) {
    // No script ever started: the run starts over.
    target = start.target;
    n = 1;
  } else if (completed) {
    if (completed.output!.stop === true) return { ok: false, message: `run ${runId} was stopped by ${completed.target}: nothing to resume` };
    n = completed.n + 1;
    const goto = completed.output!.goto;
    if (goto === undefined) target = start.target;
    else {
      const parsed = parseTarget(goto);
      if (!parsed.ok) return { ok: false, message: `run ${runId} cannot be resumed: its last goto is invalid (${parsed.error})` };
      target = formatTarget(gotoTargetOf(parsed.target, workflowOf(completed.target)));
    }
  } else {
    // It was running (or failed): it runs again, with what it got.
    target = started.target;
    n = started.n;
  }
  return { ok: true, target, n };
}

/**
 * What iteration `n` gets on stdin: the result of iteration n-1 when that one went on by goto (a
 * resume gives a script what it got before, so this holds across sittings) — its size, and the
 * text itself when the record holds all of it.
 */
function inputOf(events: RecordEvent[], n: number): { stdinBytes?: number; stdin?: string } {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!;
    if (event.type !== "iteration.end" || event.n !== n - 1 || event.output === undefined || event.error !== undefined) continue;
    const { goto, result, resultBytes } = event.output;
    if (goto === undefined || result === undefined) return {};
    const bytes = resultBytes ?? 0;
    return new TextEncoder().encode(result).length === bytes ? { stdinBytes: bytes, stdin: result } : { stdinBytes: bytes };
  }
  return {};
}

/** How long the run was going: `run.end` durations count every sitting before; a sitting without one ends at its last event. */
function elapsed(events: RecordEvent[]): number {
  let total = 0;
  let before = 0;
  let sittingStart: number | undefined;
  for (const event of events) {
    if (event.type === "run.start" || event.type === "run.resume") {
      before = total;
      sittingStart = Date.parse(event.time);
    } else if (event.type === "run.end") {
      total = (event as RunEndEvent).durationMs;
      sittingStart = undefined;
    }
  }
  if (sittingStart !== undefined) total = before + Math.max(0, Date.parse(events[events.length - 1]!.time) - sittingStart);
  return total;
}
