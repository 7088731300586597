import type { Output } from "./output.js";
import {
  EVENT_VERSION,
  RESULT_EXCERPT_BYTES,
  type IterationOutput,
  type LoopEvent,
  type PartEvent,
  type RecordedOptions,
  type RunEndReason,
  type RunStartEvent,
  type WarningEvent,
} from "./events.js";
import type { WorktreeInfo } from "./worktree-events.js";

/**
 * One run of a loop, from the moment it passes validation to its end, whoever drives it (the CLI or
 * the API). The engine reports iterations to it; the drivers report cancellations (a signal, an
 * abort, `return()`, a time limit) to it. It owns what belongs to the run as a whole: its id, the
 * iteration count, the event stream, and the *parts* — the run features (scratch directory, time
 * limits, stray-process cleanup, records, progress) that are composed per run, never special-cased
 * in the CLI or the engine.
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
  reason: "interrupted" | "hangup" | "quit" | "timed-out" | "aborted" | "returned" | "stopped-on-request" | "budget";
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
  stdin: string | undefined;
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

export interface RunSessionOptions {
  /** The run's id (LOOPX_RUN_ID); see newRunId. */
  id: string;
  /** The process that runs the loop, for `run.start` (records tell a crashed run by it). */
  pid: number;
  /** Terminates the running script's process group: forward, grace, SIGKILL. Resolves when gone. */
  terminate(signal: NodeJS.Signals): Promise<void>;
  /** When the grace period of that termination ends (ms since 1970), if one is running. */
  graceEndsAt?(): number | undefined;
  /** See RunControls.scriptExited. */
  scriptExited?(): boolean;
  warn(message: string): void;
  parts?: RunPart[];
  /** Facts for `run.start` that only the driver knows. */
  argv?: string[];
  runtime: RunStartEvent["runtime"];
  version: string;
  /** The options a resume takes over, for `run.start`. */
  options?: RecordedOptions;
  /** The run's own git worktree (--worktree), for `run.start`. */
  worktree?: WorktreeInfo;
  /**
   * The run goes on (a resume): `run.resume` instead of `run.start`, iterations counted on from
   * `iterations`, and `elapsedMs` of earlier sittings added to `run.end`'s duration.
   */
  resume?: { iterations: number; elapsedMs: number; stdinBytes?: number };
}

/**
 * A short, URL-safe id that sorts by start time: 8 base-36 digits of ms since 1970, then one digit
 * per random byte (the engine gives 7). The time leads, so ids sort by start time (and after every
 * id older loopx versions made, which padded the time to 9 digits with a leading "0"); its 6th digit
 * changes every 1.3 s, its 7th every 36 ms and its 8th every ms, so runs started in the same second
 * differ within 8 characters unless they started in the same millisecond, and a 6-character prefix
 * is unique unless two runs started within about a second of each other. (8 digits last until 2059.)
 */
export function newRunId(now: number, random: Uint8Array): string {
  let suffix = "";
  for (const byte of random) suffix += (byte % 36).toString(36);
  return `${now.toString(36).padStart(8, "0")}${suffix}`;
}

/** The UTF-8 size of `text`, without encoding it (lone surrogates count as U+FFFD, as encoders write them). */
function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code < 0xdc00 && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** `result` cut to its first 4 KiB (on a character boundary), with its full size. */
export function outputForEvent(output: Output): IterationOutput {
  const event: IterationOutput = {};
  if (output.goto !== undefined) event.goto = output.goto;
  if (output.stop !== undefined) event.stop = output.stop;
  if (output.result !== undefined) {
    const bytes = utf8Bytes(output.result);
    let excerpt = output.result;
    if (bytes > RESULT_EXCERPT_BYTES) {
      // Only the head is encoded (each UTF-16 unit is at least one UTF-8 byte): a 300 MB
      // result must not be copied whole to keep its first 4 KiB.
      const head = output.result.slice(0, RESULT_EXCERPT_BYTES);
      excerpt = new TextDecoder().decode(new TextEncoder().encode(head).subarray(0, RESULT_EXCERPT_BYTES));
      if (excerpt.endsWith("\uFFFD")) excerpt = excerpt.slice(0, -1); // a cut multi-byte character
    }
    event.result = excerpt;
    event.resultBytes = bytes;
  }
  return event;
}

export class RunSession implements RunControls {
  readonly id: string;
  private readonly parts: RunPart[];
  /** The parts that may hold back the next script; empty for nearly every run. */
  private readonly gates: RunPart[];
  /** The parts with per-script variables (RunPart.scriptEnv); usually none. */
  private readonly envParts: RunPart[];
  private startedAt = 0;
  private began: RunPart[] = [];
  private started = false;
  private iterationCount = 0;
  private iterationStartedAt = 0;
  private iterationTarget = "";
  private cancelled: RunCancel | undefined;
  /** Resolves on the first cancellation; made only when a part holds a script back. */
  private whenCancelled: Promise<void> | undefined;
  private onCancelled: (() => void) | undefined;
  private termination: Promise<void> | undefined;
  private ending: Promise<RunEnd> | undefined;
  private readonly failedObservers = new Set<RunPart>();
  /** run.end is out: no part adds events any more. */
  private closed = false;
  runEnv: Readonly<Record<string, string | undefined>> = {};

  constructor(private readonly options: RunSessionOptions) {
    this.id = options.id;
    this.parts = options.parts ?? [];
    this.gates = this.parts.filter((part) => part.beforeScript !== undefined);
    this.envParts = this.parts.filter((part) => part.scriptEnv !== undefined);
    this.iterationCount = options.resume?.iterations ?? 0;
  }

  /** The cancellation that decides how this run ends, if any. */
  get cancellation(): RunCancel | undefined {
    return this.cancelled;
  }

  /**
   * The script of iteration `n` gets the parts' own variables (RunPart.scriptEnv) in `env`: set, or
   * removed when undefined; LOOPX_* stay loopx's. Returns `env`; costs nothing without such parts.
   */
  scriptEnv(env: Record<string, string | undefined>, n: number): Record<string, string | undefined> {
    for (const part of this.envParts) {
      for (const [name, value] of Object.entries(part.scriptEnv!(n))) {
        if (name.startsWith("LOOPX_")) continue;
        if (value === undefined) delete env[name];
        else env[name] = value;
      }
    }
    return env;
  }

  /** True when a part may hold back scripts (see RunPart.beforeScript); the loop asks before each. */
  get gated(): boolean {
    return this.gates.length > 0;
  }

  /**
   * Asks every part's `beforeScript` before the next script (`target`) starts; returns a promise
   * only when one of them holds it back (the loop awaits nothing otherwise). A cancellation
   * releases a held script. Only called when `gated`: a run without such a part pays nothing.
   */
  beforeScript(next: { target: string; stdin: string | undefined }): void | Promise<void> {
    const script: NextScript = { target: next.target, n: this.iterationCount + 1, stdin: next.stdin };
    for (let i = 0; i < this.gates.length; i++) {
      const held = this.gates[i]!.beforeScript!(script, this);
      if (held) return this.hold(held, script, i + 1);
    }
  }

  private async hold(held: Promise<void>, script: NextScript, from: number): Promise<void> {
    this.whenCancelled ??= new Promise((resolve) => (this.onCancelled = resolve));
    if (this.cancelled) return;
    await Promise.race([held, this.whenCancelled]);
    for (let i = from; i < this.gates.length && !this.cancelled; i++) {
      const more = this.gates[i]!.beforeScript!(script, this);
      if (more) await Promise.race([more, this.whenCancelled]);
    }
  }

  warn(message: string): void {
    this.options.warn(message);
  }

  scriptExited(): boolean {
    return this.options.scriptExited?.() ?? false;
  }

  emit(event: PartEvent): void;
  emit(event: LoopEvent): void;
  emit(given: LoopEvent | PartEvent): void {
    // A part's own event counts only while the run is going or its parts end (not before
    // run.start, nor once run.end is out).
    if (!("v" in given) && (!this.started || this.closed)) return;
    const event = ("v" in given ? given : { ...this.base(given.type), ...given }) as LoopEvent;
    for (const part of this.parts) {
      if (!part.onEvent) continue;
      try {
        part.onEvent(event);
      } catch (error) {
        if (!this.failedObservers.has(part)) {
          this.failedObservers.add(part);
          this.warn(`an event observer failed and will not be warned about again: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
    }
  }

  private base<T extends LoopEvent["type"]>(type: T) {
    return { v: EVENT_VERSION as 1, type, time: new Date().toISOString(), run: this.id };
  }

  /**
   * Validation passed: emits `run.start`, begins every part, and returns the variables the parts
   * give every script. Throws (and the run fails) if a part cannot begin.
   */
  async begin(start: { projectRoot: string; target: string; maxIterations: number | undefined; env?: Record<string, string | undefined> }): Promise<Record<string, string>> {
    this.started = true;
    this.startedAt = Date.now();
    if (start.env) this.runEnv = start.env;
    const resume = this.options.resume;
    if (resume) {
      this.emit({
        ...this.base("run.resume"),
        pid: this.options.pid,
        projectRoot: start.projectRoot,
        target: start.target,
        iterations: resume.iterations,
        maxIterations: start.maxIterations ?? null,
        ...(resume.stdinBytes !== undefined ? { stdinBytes: resume.stdinBytes } : {}),
        ...(this.options.argv ? { argv: this.options.argv } : {}),
        version: this.options.version,
        runtime: this.options.runtime,
      });
    } else this.emit({
      ...this.base("run.start"),
      pid: this.options.pid,
      projectRoot: start.projectRoot,
      target: start.target,
      ...(this.options.argv ? { argv: this.options.argv } : {}),
      version: this.options.version,
      runtime: this.options.runtime,
      maxIterations: start.maxIterations ?? null,
      ...(this.options.options && Object.keys(this.options.options).length > 0 ? { options: this.options.options } : {}),
      ...(this.options.worktree ? { worktree: this.options.worktree } : {}),
    });
    const vars: Record<string, string> = {};
    for (const part of this.parts) {
      if (this.cancelled) break;
      this.began.push(part);
      const partVars = await part.begin?.(this);
      if (partVars) Object.assign(vars, partVars);
    }
    return vars;
  }

  progress(): { iterations: number; durationMs: number } {
    return { iterations: this.iterationCount, durationMs: Date.now() - this.startedAt + (this.options.resume?.elapsedMs ?? 0) };
  }

  /** A script is about to start; returns its 1-based iteration number (LOOPX_ITERATION). */
  iterationStart(target: string): number {
    const n = ++this.iterationCount;
    this.iterationStartedAt = Date.now();
    this.iterationTarget = target;
    this.emit({ ...this.base("iteration.start"), n, target });
    return n;
  }

  /** The script of iteration `n` has ended (successfully with `output`, or with `error`). */
  iterationEnd(result: { exitCode: number | null; signal: string | null; stdoutBytes: number; output?: Output; error?: string; stderr?: string }): void {
    this.emit({
      ...this.base("iteration.end"),
      n: this.iterationCount,
      target: this.iterationTarget,
      durationMs: Date.now() - this.iterationStartedAt,
      exitCode: result.exitCode,
      signal: result.signal,
      stdoutBytes: result.stdoutBytes,
      ...(result.output ? { output: outputForEvent(result.output) } : {}),
      ...(result.error !== undefined ? { error: result.error } : {}),
      ...(result.stderr ? { stderr: result.stderr } : {}),
    });
  }

  /** loopx's own warning about the latest iteration's script: a `warning` event (parts/warnings.ts shows it). */
  iterationWarning(kind: WarningEvent["kind"], message: string): void {
    this.emit({ ...this.base("warning"), kind, n: this.iterationCount, target: this.iterationTarget, message });
  }

  /**
   * Ends the run from outside the engine: the first cancellation decides the ending; every call
   * forwards its signal to the running script's group (a second Ctrl-C is forwarded too) and shares
   * the first call's grace period. Resolves when the group is gone.
   */
  cancel(cancel: RunCancel): Promise<void> {
    this.cancelled ??= cancel;
    this.onCancelled?.();
    const termination = cancel.signal ? this.options.terminate(cancel.signal) : Promise.resolve();
    this.termination ??= termination;
    return termination;
  }

  /**
   * Ends the run once, however many callers ask (the engine's `finally`, a signal handler, the API
   * generator): a cancellation wins over what the engine saw (a script killed by the forwarded
   * signal is an interruption, not a failure). Waits for the running group to be gone, then ends
   * every part that began, then emits `run.end`. Never rejects.
   */
  end(seen: RunEnd): Promise<RunEnd> {
    this.ending ??= this.finish(seen);
    return this.ending;
  }

  private async finish(seen: RunEnd): Promise<RunEnd> {
    const cancel = this.cancelled;
    const end: RunEnd = cancel
      ? {
          reason: cancel.reason,
          exitCode: cancel.exitCode,
          signal: cancel.signal,
          ...(cancel.target !== undefined ? { target: cancel.target } : {}),
          ...(cancel.message !== undefined ? { message: cancel.message } : {}),
          ...(cancel.error !== undefined ? { error: cancel.error } : {}),
        }
      : seen;
    if (this.termination) await this.termination;
    const graceEndsAt = this.options.graceEndsAt;
    const partEnd: RunEnd = graceEndsAt?.() === undefined ? end : Object.defineProperty({ ...end }, "graceEndsAt", { get: graceEndsAt, enumerable: true });
    for (const part of this.began.reverse()) {
      try {
        await part.end?.(partEnd);
      } catch (error) {
        this.warn(error instanceof Error ? error.message : String(error));
      }
    }
    if (this.started) {
      this.closed = true;
      this.emit({
        ...this.base("run.end"),
        reason: end.reason,
        exitCode: end.exitCode,
        iterations: this.iterationCount,
        durationMs: this.progress().durationMs,
        ...(end.target !== undefined ? { target: end.target } : {}),
        ...(end.message !== undefined ? { message: end.message } : {}),
        ...(end.signal !== undefined ? { signal: end.signal } : {}),
      });
    }
    const settling = this.began.filter((part) => part.settle).map((part) => part.settle!().catch(() => undefined));
    if (settling.length > 0) await Promise.all(settling);
    return end;
  }
}
