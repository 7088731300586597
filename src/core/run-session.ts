import type { LoopEvent, PartEvent, WarningEvent } from "./events.js";
import { Iterations, type ScriptResult } from "./iterations.js";
import { endEvent, eventBase, type RunFacts, type RunStart, startEvent } from "./run-events.js";
import { PartEvents } from "./part-events.js";
import { Cancellation, endOfCancel, partEndOf } from "./run-cancel.js";
import type { RunCancel, RunControls, RunEnd, RunPart } from "./run-part.js";
import { ScriptParts } from "./script-parts.js";
import type { ScriptInput } from "./stdout-text.js";

/**
 * One run of a loop, from the moment it passes validation to its end, whoever drives it (the CLI or
 * the API). The engine reports iterations to it; the drivers report cancellations (a signal, an
 * abort, `return()`, a time limit) to it. It owns what belongs to the run as a whole: its id, the
 * iteration count, the event stream, and the *parts* (their contract: run-part.ts; the events it
 * makes: run-events.ts; its id: run-id.ts). Its helpers: the cancellations (run-cancel.ts), the
 * parts' events (part-events.ts), the parts that act on each script (script-parts.ts), and the
 * iterations (iterations.ts).
 */

export interface RunSessionOptions extends RunFacts {
  /** The run's id (LOOPX_RUN_ID); see newRunId. */
  id: string;
  /** Terminates the running script's process group: forward, grace, SIGKILL. Resolves when gone. */
  terminate(signal: NodeJS.Signals): Promise<void>;
  /** When the grace period of that termination ends (ms since 1970), if one is running. */
  graceEndsAt?(): number | undefined;
  /** See RunControls.scriptExited. */
  scriptExited?(): boolean;
  warn(message: string): void;
  parts?: RunPart[];
}

/**
 * Where a run is: validated but not begun (`ready`), going (`running`: from run.start, its parts'
 * events count), or `closed` (run.end is out: no part adds events any more).
 */
type RunPhase = "ready" | "running" | "closed";

export class RunSession implements RunControls {
  readonly id: string;
  private readonly parts: RunPart[];
  private readonly events: PartEvents;
  private readonly cancels: Cancellation;
  private readonly scripts: ScriptParts;
  private phase: RunPhase = "ready";
  private startedAt = 0;
  private began: RunPart[] = [];
  private readonly iterations: Iterations;
  private ending: Promise<RunEnd> | undefined;
  runEnv: Readonly<Record<string, string | undefined>> = {};

  constructor(private readonly options: RunSessionOptions) {
    this.id = options.id;
    this.parts = options.parts ?? [];
    this.events = new PartEvents(this.parts, (message) => this.warn(message));
    this.cancels = new Cancellation((signal) => options.terminate(signal));
    this.scripts = new ScriptParts(this.parts, this.cancels);
    this.iterations = new Iterations(options.id, options.resume?.iterations ?? 0);
  }

  /** The cancellation that decides how this run ends, if any. */
  get cancellation(): RunCancel | undefined {
    return this.cancels.decided;
  }

  /**
   * The script of iteration `n` gets the parts' own variables (RunPart.scriptEnv) in `env`: set, or
   * removed when undefined; LOOPX_* stay loopx's. Returns `env`; costs nothing without such parts.
   */
  scriptEnv(env: Record<string, string | undefined>, n: number): Record<string, string | undefined> {
    return this.scripts.scriptEnv(env, n);
  }

  /** True when a part may hold back scripts (see RunPart.beforeScript); the loop asks before each. */
  get gated(): boolean {
    return this.scripts.gated;
  }

  /**
   * Asks every part's `beforeScript` before the next script (`target`) starts; returns a promise
   * only when one of them holds it back (the loop awaits nothing otherwise). A cancellation
   * releases a held script. Only called when `gated`: a run without such a part pays nothing.
   */
  beforeScript(next: { target: string; stdin: ScriptInput | undefined }): void | Promise<void> {
    return this.scripts.beforeScript({ target: next.target, n: this.iterations.count + 1, stdin: next.stdin }, this);
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
    if (!("v" in given) && this.phase !== "running") return;
    this.events.deliver(("v" in given ? given : { ...eventBase(given.type, this.id), ...given }) as LoopEvent);
  }

  /**
   * Validation passed: emits `run.start`, begins every part, and returns the variables the parts
   * give every script. Throws (and the run fails) if a part cannot begin.
   */
  async begin(start: RunStart): Promise<Record<string, string>> {
    if (this.phase === "ready") this.phase = "running";
    this.startedAt = Date.now();
    if (start.env) this.runEnv = start.env;
    this.emit(startEvent(this.id, this.options, start));
    const vars: Record<string, string> = {};
    for (const part of this.parts) {
      if (this.cancels.decided) break;
      this.began.push(part);
      const partVars = await part.begin?.(this);
      if (partVars) Object.assign(vars, partVars);
    }
    return vars;
  }

  progress(): { iterations: number; durationMs: number } {
    return { iterations: this.iterations.count, durationMs: Date.now() - this.startedAt + (this.options.resume?.elapsedMs ?? 0) };
  }

  /** A script is about to start; returns its 1-based iteration number (LOOPX_ITERATION). */
  iterationStart(target: string): number {
    const event = this.iterations.start(target);
    this.emit(event);
    return event.n;
  }

  /** The script of iteration `n` has ended (successfully with `output`, or with `error`). */
  iterationEnd(result: ScriptResult): void {
    this.emit(this.iterations.end(result));
  }

  /** loopx's own warning about the latest iteration's script: a `warning` event (parts/warnings.ts shows it). */
  iterationWarning(kind: WarningEvent["kind"], message: string): void {
    this.emit(this.iterations.warning(kind, message));
  }

  /**
   * Ends the run from outside the engine: the first cancellation decides the ending; every call
   * forwards its signal to the running script's group (a second Ctrl-C is forwarded too) and shares
   * the first call's grace period. Resolves when the group is gone.
   */
  cancel(cancel: RunCancel): Promise<void> {
    return this.cancels.cancel(cancel);
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
    const end: RunEnd = this.cancels.decided ? endOfCancel(this.cancels.decided) : seen;
    const termination = this.cancels.termination;
    if (termination) await termination;
    const partEnd = partEndOf(end, this.options.graceEndsAt);
    for (const part of this.began.reverse()) {
      try {
        await part.end?.(partEnd);
      } catch (error) {
        this.warn(error instanceof Error ? error.message : String(error));
      }
    }
    if (this.phase !== "ready") {
      this.phase = "closed";
      this.emit(endEvent(this.id, end, this.progress()));
    }
    const settling = this.began.filter((part) => part.settle).map((part) => part.settle!().catch(() => undefined));
    if (settling.length > 0) await Promise.all(settling);
    return end;
  }
}
