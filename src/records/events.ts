/**
 * The events of one run, in order: `run.start`, then `iteration.start` / `iteration.end` per script
 * execution, then `run.end`. They are the one description of "what happened" that every observer
 * of a run reads: run records, `--log`, terminal progress, and the API's `onEvent` (loopx's own
 * extension of the spec). Types only: importing this module costs nothing.
 */

/** Bumped only when a field changes meaning; readers report records of a newer version. */
export const EVENT_VERSION = 1;

/** How a run ended. `aborted` and `returned` happen only through the API. */
export type RunEndReason = "stopped" | "limit" | "failed" | "interrupted" | "timed-out" | "aborted" | "returned";

interface EventBase {
  v: 1;
  /** ISO 8601 time the event happened. */
  time: string;
  /** The run's id (LOOPX_RUN_ID). */
  run: string;
}

export interface RunStartEvent extends EventBase {
  type: "run.start";
  pid: number;
  projectRoot: string;
  /** The starting target, `workflow:script`. */
  target: string;
  /** The CLI's arguments after `loopx`; absent for API runs. */
  argv?: string[];
  version: string;
  runtime: "node" | "bun" | "binary";
  /** `-n` / maxIterations; null when unlimited. */
  maxIterations: number | null;
}

export interface IterationStartEvent extends EventBase {
  type: "iteration.start";
  /** 1-based, counted exactly as `-n` counts (goto hops included); equals LOOPX_ITERATION. */
  n: number;
  target: string;
}

/** The parsed structured output of a successful script, with `result` cut to its first 4 KiB. */
export interface IterationOutput {
  goto?: string;
  stop?: boolean;
  result?: string;
  /** Full length of `result` in UTF-8 bytes, when `result` is present. */
  resultBytes?: number;
}

export interface IterationEndEvent extends EventBase {
  type: "iteration.end";
  n: number;
  target: string;
  durationMs: number;
  /** The script's exit code; null when it was killed by a signal or could not start. */
  exitCode: number | null;
  signal: string | null;
  stdoutBytes: number;
  /** Present when the script exited 0 and its stdout was parsed. */
  output?: IterationOutput;
  /** Why the script failed, in the words of the error loopx reports. */
  error?: string;
  /**
   * A failed script's last stderr lines (at most STDERR_TAIL_LINES, STDERR_TAIL_BYTES), where
   * loopx can see them without changing what the script sees: its stderr is a pipe loopx relays,
   * or a file. Never on a terminal. Written by the script: untrusted text.
   */
  stderr?: string;
}

export interface RunEndEvent extends EventBase {
  type: "run.end";
  reason: RunEndReason;
  /** The CLI's exit code for this ending (null for API-only endings: aborted, returned). */
  exitCode: number | null;
  iterations: number;
  durationMs: number;
  /** The target that said stop, or whose script failed. */
  target?: string;
  /** For failed / timed-out / interrupted runs: the one-line reason loopx reports. */
  message?: string;
  signal?: string;
}

export type LoopEvent = RunStartEvent | IterationStartEvent | IterationEndEvent | RunEndEvent;

/**
 * A line a script added to its run's record (`loopx note`, `note()`; see
 * records/note.ts). Only in records: written by the script, never emitted by the engine.
 */
export interface NoteEvent extends EventBase {
  type: "note";
  /** The iteration (LOOPX_ITERATION) of the script that wrote it. */
  n?: number;
  /** The workflow of that script (LOOPX_WORKFLOW). */
  workflow?: string;
  /** One line. */
  text: string;
  /** Whatever the script attached, as JSON (at most 4 KiB). */
  data?: Record<string, unknown>;
}

/**
 * Where a record's size cap (LOOPX_RECORD_MAX_BYTES) dropped the events of some iterations: the
 * first and the last iterations stay in full, this line counts what is missing between them. Only
 * in records, written by loopx's record writer.
 */
export interface GapEvent extends EventBase {
  type: "gap";
  /** The last iteration kept before the gap. */
  after: number;
  /** Iterations whose events were dropped. */
  iterations: number;
  /** Bytes of record dropped. */
  bytes: number;
}

/** What a run record holds: the run's events, its scripts' notes, and gaps of a capped record. */
export type RecordEvent = LoopEvent | NoteEvent | GapEvent;

/** What a record keeps of a failed script's stderr: its last lines, within this many bytes. */
export const STDERR_TAIL_LINES = 20;
export const STDERR_TAIL_BYTES = 4096;

/** Bytes of `result` kept in an event; the rest is counted in `resultBytes`. */
export const RESULT_EXCERPT_BYTES = 4096;
