import {
  EVENT_VERSION,
  RESULT_EXCERPT_BYTES,
  type IterationOutput,
  type LoopEvent,
  type RecordedOptions,
  type RunStartEvent,
} from "./events.js";
import { deferredResult, type Output } from "./output.js";
import { utf8Bytes } from "./stdout-text.js";
import type { RunEnd } from "./run-part.js";
import type { WorktreeInfo } from "./worktree-events.js";

/**
 * The events a run session makes of its own facts (run.start / run.resume, an iteration's output,
 * run.end), kept apart from RunSession so that the session holds only the run's state and the
 * parts' orchestration, and the exact shape (and key order) of each event has one home.
 */

/** What the driver tells a session about the run, for its `run.start` / `run.resume` and durations. */
export interface RunFacts {
  /** The process that runs the loop, for `run.start` (records tell a crashed run by it). */
  pid: number;
  /** Facts for `run.start` that only the driver knows. */
  argv?: string[];
  runtime: RunStartEvent["runtime"];
  version: string;
  /** The options a later resume takes over, for `run.start` and `run.resume`. */
  options?: RecordedOptions;
  /** The run's own git worktree (--worktree), for `run.start`. */
  worktree?: WorktreeInfo;
  /**
   * The run goes on (a resume): `run.resume` instead of `run.start`, iterations counted on from
   * `iterations`, and `elapsedMs` of earlier sittings added to `run.end`'s duration.
   */
  resume?: { iterations: number; elapsedMs: number; stdinBytes?: number };
}

/** What `RunSession.begin` is told of the run that starts. */
export interface RunStart {
  projectRoot: string;
  target: string;
  maxIterations: number | undefined;
  env?: Record<string, string | undefined>;
}

/** The fields every event starts with. */
export function eventBase<T extends LoopEvent["type"]>(type: T, run: string) {
  return { v: EVENT_VERSION as 1, type, time: new Date().toISOString(), run };
}

/** The run's first event: `run.resume` when it goes on from earlier sittings, else `run.start`. */
export function startEvent(run: string, facts: RunFacts, start: RunStart): LoopEvent {
  const resume = facts.resume;
  if (resume) {
    return {
      ...eventBase("run.resume", run),
      pid: facts.pid,
      projectRoot: start.projectRoot,
      target: start.target,
      iterations: resume.iterations,
      maxIterations: start.maxIterations ?? null,
      ...(resume.stdinBytes !== undefined ? { stdinBytes: resume.stdinBytes } : {}),
      ...(facts.options && Object.keys(facts.options).length > 0 ? { options: facts.options } : {}),
      ...(facts.argv ? { argv: facts.argv } : {}),
      version: facts.version,
      runtime: facts.runtime,
    };
  }
  return {
    ...eventBase("run.start", run),
    pid: facts.pid,
    projectRoot: start.projectRoot,
    target: start.target,
    ...(facts.argv ? { argv: facts.argv } : {}),
    version: facts.version,
    runtime: facts.runtime,
    maxIterations: start.maxIterations ?? null,
    ...(facts.options && Object.keys(facts.options).length > 0 ? { options: facts.options } : {}),
    ...(facts.worktree ? { worktree: facts.worktree } : {}),
  };
}

/** The run's last event, from how it ended. */
export function endEvent(run: string, end: RunEnd, progress: { iterations: number; durationMs: number }): LoopEvent {
  return {
    ...eventBase("run.end", run),
    reason: end.reason,
    exitCode: end.exitCode,
    iterations: progress.iterations,
    durationMs: progress.durationMs,
    ...(end.target !== undefined ? { target: end.target } : {}),
    ...(end.message !== undefined ? { message: end.message } : {}),
    ...(end.signal !== undefined ? { signal: end.signal } : {}),
  };
}

/** `result` cut to its first 4 KiB (on a character boundary), with its full size. */
export function outputForEvent(output: Output): IterationOutput {
  const event: IterationOutput = {};
  if (output.goto !== undefined) event.goto = output.goto;
  if (output.stop !== undefined) event.stop = output.stop;
  // A raw result decoded only when read (core/output.ts) is measured from its stdout, never read here.
  const stdout = deferredResult(output);
  if (stdout !== undefined) return withExcerpt(event, stdout.utf8Length(), stdout.prefix(RESULT_EXCERPT_BYTES));
  if (output.result !== undefined) return withExcerpt(event, utf8Bytes(output.result), output.result.slice(0, RESULT_EXCERPT_BYTES));
  return event;
}

/** `event` with the result's excerpt from `head` (its first 4096 UTF-16 units) and its UTF-8 size. */
function withExcerpt(event: IterationOutput, bytes: number, head: string): IterationOutput {
  let excerpt = head;
  if (bytes > RESULT_EXCERPT_BYTES) {
    // Only the head is encoded (each UTF-16 unit is at least one UTF-8 byte): a 300 MB
    // result must not be copied whole to keep its first 4 KiB.
    excerpt = new TextDecoder().decode(new TextEncoder().encode(head).subarray(0, RESULT_EXCERPT_BYTES));
    if (excerpt.endsWith("\uFFFD")) excerpt = excerpt.slice(0, -1); // a cut multi-byte character
  }
  event.result = excerpt;
  event.resultBytes = bytes;
  return event;
}
