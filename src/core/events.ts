
/**
 * The events of one run, in order: `run.start`, then `iteration.start` / `iteration.end` per script
 * execution, then `run.end`. They are the one description of "what happened" that every observer
 * of a run reads: run records, `--log`, terminal progress, and the API's `onEvent` (loopx's own
 * extension of the spec). Types only: importing this module costs nothing.
 */

import type { RunEndReason } from "./run-states.js";
import type { Receipt, RunTotals } from "./receipt-types.js";
import type { WorktreeInfo } from "./worktree-events.js";
import type { SandboxDeniedEvent, SandboxInfo } from "./sandbox-events.js";

export type { SandboxInfo } from "./sandbox-events.js";
import type { RecordedOptions } from "./recorded-options.js";
export type { RecordedOptions } from "./recorded-options.js";
import type { StallEvidence } from "./stall.js";

/** Bumped only when a field changes meaning; readers report records of a newer version. */
export const EVENT_VERSION = 1;

/**
 * How a run ended. `aborted` and `returned` happen only through the API; `stopped-on-request` is
 * `loopx runs stop` (the running script finished, no further one started). `hangup` and `quit` are
 * SIGHUP and SIGQUIT (a closed terminal, Ctrl-\). `killed` and `crashed` are written by the run's
 * guardian when loopx itself died without ending the run: killed by a signal it cannot handle
 * (SIGKILL, an out-of-memory kill; the signal when known), or crashed (a fatal fault, an abort, a
 * host process of `run()` that exited or threw).
 */
export type { RunEndReason };

/** The endings a run gets from the signals that cancel it (the CLI's, a host's of `run()`). */
export const SIGNAL_REASONS = { SIGINT: "interrupted", SIGTERM: "interrupted", SIGHUP: "hangup", SIGQUIT: "quit" } as const satisfies Partial<Record<NodeJS.Signals, RunEndReason>>;

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
  /** The options a resume takes over (absent when none was given). */
  options?: RecordedOptions;
  /** `--worktree` (loopx's own addition): the git worktree the run works in; projectRoot is inside it. */
  worktree?: WorktreeInfo;
  /** `--sandbox` (loopx's own addition): the fence every script of the run ran in. */
  sandbox?: SandboxInfo;
}



/**
 * The run goes on after it ended or died (`loopx runs resume`, RunOptions.resume), in the same
 * record and with the same id: its next script is iteration `iterations + 1`, at `target`.
 */
export interface RunResumeEvent extends EventBase {
  type: "run.resume";
  /** The process that runs the loop from now on. */
  pid: number;
  projectRoot: string;
  /** The target it starts again at, `workflow:script`. */
  target: string;
  /** Iterations done before; the first script of this sitting is iteration `iterations + 1`. */
  iterations: number;
  /** The whole run's -n budget (iterations done included); null when unlimited. */
  maxIterations: number | null;
  /** The bytes the first script gets on stdin (what it got when the run ended), when any. */
  stdinBytes?: number;
  /**
   * The run's recorded options from this sitting on: run.start's with those given at the resume
   * over them (a raised --max-cost), so that every later resume keeps them. Absent when none.
   */
  options?: RecordedOptions;
  argv?: string[];
  version: string;
  runtime: "node" | "bun" | "binary";
  /** `--sandbox`: the fence of this sitting. */
  sandbox?: SandboxInfo;
}

/** `loopx runs pause`: the running script finishes; the next one waits for `run.continue`. */
export interface RunPauseEvent extends EventBase {
  type: "run.pause";
  /** The script running when the pause was asked for, if one was. */
  running?: string;
}

/** `loopx runs continue`: the pause is over. */
export interface RunContinueEvent extends EventBase {
  type: "run.continue";
  /** How long the run was paused, from `run.pause`. */
  pausedMs: number;
}

/** `loopx runs stop`: no further script starts (`now`: the running one is interrupted as by Ctrl-C). */
export interface RunStopEvent extends EventBase {
  type: "run.stop";
  now: boolean;
  running?: string;
}

/**
 * The run's end-of-run hook (`--on-end`, loopx's own addition; src/hooks) has run: just before
 * `run.end`, written by loopx or, when loopx died, by the run's guardian.
 */
export interface RunHookEvent extends EventBase {
  type: "run.hook";
  hook: "on-end";
  /** Who ran it: loopx, or the guardian after loopx died. */
  by: "loopx" | "guardian";
  /** Its exit code; null when it was killed by a signal or could not start. */
  exitCode: number | null;
  signal: string | null;
  /** True when it was ended at its time limit. */
  timedOut: boolean;
  durationMs: number;
  /** What it wrote (stdout and stderr, interleaved), its first 4 KiB. */
  output: string;
  outputBytes: number;
  /** Why it could not start, or how it failed, in one line. */
  error?: string;
}


/**
 * A run started without --worktree where another live run of the same workflow works in the same
 * tree (loopx's own addition): it was warned, once, at its start.
 */
interface TreeSharedEvent extends EventBase {
  type: "tree.shared";
  /** The other run's id. */
  other: string;
  workflow: string;
  /** The other run's process. */
  pid: number;
}

/** The stall sensor (`--stall-after`; core/stall.ts) ended the run: just before `run.end` (reason `stalled`), with the evidence. */
interface RunStallEvent extends EventBase, StallEvidence {
  type: "run.stall";
}

/** The events a part may add to its run (see RunControls.emit): the fields the session fills in left out. */
export type PartEvent = DistributiveOmit<RunPauseEvent | RunContinueEvent | RunStopEvent | RunHookEvent | TreeSharedEvent | SandboxDeniedEvent | RunStallEvent, keyof EventBase>;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

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
  /**
   * In records: what the run's receipts added up to, every sitting included, when it had any
   * (`loopx runs` reads it instead of the whole record). Absent from a run.end its guardian wrote.
   */
  receipts?: RunTotals;
  /** Iterations of the whole run (those before a resume included). */
  iterations: number;
  /** Time the run was going, every sitting included (the time between a death and a resume left out). */
  durationMs: number;
  /** The target that said stop, or whose script failed. */
  target?: string;
  /** For failed / timed-out / interrupted runs: the one-line reason loopx reports. */
  message?: string;
  signal?: string;
}

/**
 * loopx's own warning about one iteration's script (loopx's own addition): a near-miss structured
 * output (`output`, once per script per run; LOOPX_WARN_OUTPUT=0 turns it off), a failed bash
 * script saved with CRLF line endings (`crlf`), a process that keeps a finished script's stdout
 * open (`stdout-held`). Also one `loopx: warning:` line on stderr (parts/warnings.ts).
 */
export interface WarningEvent extends EventBase {
  type: "warning";
  kind: "output" | "crlf" | "stdout-held";
  /** The iteration it is about. */
  n: number;
  target: string;
  /** One line; holds text of the script's (shown escaped). */
  message: string;
}

export type LoopEvent = RunStartEvent | RunResumeEvent | IterationStartEvent | IterationEndEvent | RunPauseEvent | RunContinueEvent | RunStopEvent | WarningEvent | RunHookEvent | TreeSharedEvent | SandboxDeniedEvent | RunStallEvent | RunEndEvent;

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
 * What a script's work used (`loopx receipt`, `receipt()`; see receipts/receipt.ts): a delta — each
 * receipt adds to the totals, never replaces them. Only in records: written by the script.
 */
export interface ReceiptEvent extends EventBase, Receipt {
  type: "receipt";
  /** The iteration (LOOPX_ITERATION) of the script that sent it. */
  n?: number;
  /** The workflow of that script (LOOPX_WORKFLOW). */
  workflow?: string;
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
  /** What the dropped receipts added up to (so the run's totals stay whole), when there were any. */
  receipts?: RunTotals;
  /** "disk": not the size cap — a full disk lost them (written once the record can be again). */
  reason?: "disk";
}

/** What a run record holds: the run's events, its scripts' notes, and gaps of a capped record. */
export type RecordEvent = LoopEvent | NoteEvent | ReceiptEvent | GapEvent;

/** What a record keeps of a failed script's stderr: its last lines, within this many bytes. */
export const STDERR_TAIL_LINES = 20;
export const STDERR_TAIL_BYTES = 4096;

/** Bytes of `result` kept in an event; the rest is counted in `resultBytes`. */
export const RESULT_EXCERPT_BYTES = 4096;
