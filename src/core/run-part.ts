import type { LoopEvent, PartEvent, RunEndReason } from "./events.js";
import type { ScriptInput } from "./stdout-text.js";

/**
 * The contract between a run and its *parts* — the run features (scratch directory, time limits,
 * stray-process cleanup, records, progress) that are composed per run, never special-cased in the
 * CLI or the engine. Apart from RunSession (run-session.ts) so that a part depends on this contract
 * only, not on how the session keeps it.
 */

/** How a run ended, as the session knows it once every part has been told. */
export interface RunEnd {
  reason: RunEndReason;
  /** The CLI's exit code for this ending; null for API-only endings (aborted, returned). */
  exitCode: number | null;
  /** The target that said stop, or whose script failed / timed out. */
  target?: string;
  /** The one-line reason loopx reports (failed, timed-out, interrupted). */
  message?: string;
  signal?: NodeJS.Signals;
  /** The error the run ends with, when there is one (rethrown by the driver). */
  error?: unknown;
  /**
   * For parts: when the grace period of the cancellation's termination ends (ms since 1970), if a
   * script's group was being terminated. Parts that end processes too share it (a Ctrl-C still
   * ends the run within one grace period). Read it when needed: a second Ctrl-C moves it to now.
   */
  readonly graceEndsAt?: number;
}

/** A cancellation requested from outside the engine. The first one decides how the run ends. */
export interface RunCancel {
  reason: "interrupted" | "hangup" | "quit" | "timed-out" | "aborted" | "returned" | "stopped-on-request" | "budget" | "stalled";
  /**
   * Sent to the running script's process group (grace, then SIGKILL, as on Ctrl-C); none for a
   * cancellation between two scripts (a stop on request), which leaves nothing to end.
   */
  signal?: NodeJS.Signals;
  exitCode: number | null;
  target?: string;
  message?: string;
  /** What the API rejects with (AbortError, TimeoutError, ...). */
  error?: unknown;
}

/** What a part can do to its run. */
export interface RunControls {
  readonly id: string;
  /** Ends the run from outside the engine (a time limit, say); see RunSession.cancel. */
  cancel(cancel: RunCancel): Promise<void>;
  /** One `loopx: warning:` line. */
  warn(message: string): void;
  /**
   * True when no script runs, or the running script's own process has already exited and loopx is
   * only reading what it left (a time limit found expired late — loopx was stopped — must not call
   * such a script killed: its result is read first). False where this cannot be known.
   */
  scriptExited(): boolean;
  /**
   * Adds an event of the part's own (a pause, a stop request) to the run's events: while the run
   * goes, and from a part's `end` (before `run.end`).
   */
  emit(event: PartEvent): void;
  /**
   * The environment every script of the run inherits (the caller's, the env files, RunOptions.env),
   * before the parts' and loopx's own variables; known once the run has begun.
   */
  readonly runEnv: Readonly<Record<string, string | undefined>>;
  /** The iterations counted so far (a resumed run's earlier ones included) and the run's duration. */
  progress(): { iterations: number; durationMs: number };
}

/** What a part's `beforeScript` is told of the script about to start. */
export interface NextScript {
  target: string;
  /** The iteration number it will have (LOOPX_ITERATION). */
  n: number;
  /** What it gets on stdin (the previous script's goto result), if anything. */
  stdin: ScriptInput | undefined;
}

/**
 * A run feature. Every hook is optional; a part that is not used is not in the list at all (no cost
 * for anyone who does not use it).
 */
export interface RunPart {
  /**
   * After validation, just before the first script starts. May return variables for every script of
   * the run (they override the user's layers; loopx's core variables still win). Throwing fails the
   * run before any script runs; the parts already begun are ended.
   */
  begin?(controls: RunControls): void | Record<string, string> | Promise<void | Record<string, string>>;
  /** Every event of the run, synchronously, in order. Must not throw (a throw is warned once). */
  onEvent?(event: LoopEvent): void;
  /**
   * Before each script starts (goto hops included), with its target: a part may
   * delay it (a pause: return a promise) or cancel the run through `controls` (a stop requested
   * from elsewhere); after a cancellation no further script starts, and a cancellation releases a
   * held script at once. The seam for steering a run from another process; a part that returns
   * nothing costs no await, and a run without such a part never calls anything here.
   */
  beforeScript?(next: NextScript, controls: RunControls): void | Promise<void>;
  /**
   * Variables for one script execution (iteration `n`), asked right after its `iteration.start`:
   * each is set, or removed when undefined; loopx's own LOOPX_* variables are never touched. Only
   * the parts that have it are asked: a run without such a part does nothing more per script.
   */
  scriptEnv?(n: number): Record<string, string | undefined>;
  /**
   * Once, when the run ends (every way it can end), after the running script's process group is
   * gone and before `run.end` is emitted. Errors become one warning; they never change the ending.
   */
  end?(end: RunEnd): void | Promise<void>;
  /**
   * After `run.end` is emitted: what the part still waits for before the ending is final (a helper
   * process it started going away, so that nothing of the run outlives its end). The part bounds
   * the wait itself; errors are ignored.
   */
  settle?(): Promise<void>;
}
