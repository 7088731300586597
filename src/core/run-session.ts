import type { LoopEvent, PartEvent, WarningEvent } from "./events.js";
import type { Output } from "./output.js";
import { endEvent, eventBase, outputForEvent, type RunFacts, type RunStart, startEvent } from "./run-events.js";
import type { NextScript, RunCancel, RunControls, RunEnd, RunPart } from "./run-part.js";
import type { ScriptInput } from "./stdout-text.js";

/**
 * One run of a loop, from the moment it passes validation to its end, whoever drives it (the CLI or
 * the API). The engine reports iterations to it; the drivers report cancellations (a signal, an
 * abort, `return()`, a time limit) to it. It owns what belongs to the run as a whole: its id, the
 * iteration count, the event stream, and the *parts* (their contract: run-part.ts; the events it
 * makes: run-events.ts; its id: run-id.ts).
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

/** How a run ends when a cancellation decided it: as the first cancellation said. */
function endOfCancel(cancel: RunCancel): RunEnd {
  return {
    reason: cancel.reason,
    exitCode: cancel.exitCode,
    signal: cancel.signal,
    ...(cancel.target !== undefined ? { target: cancel.target } : {}),
    ...(cancel.message !== undefined ? { message: cancel.message } : {}),
    ...(cancel.error !== undefined ? { error: cancel.error } : {}),
  };
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
  beforeScript(next: { target: string; stdin: ScriptInput | undefined }): void | Promise<void> {
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
    return eventBase(type, this.id);
  }

  /**
   * Validation passed: emits `run.start`, begins every part, and returns the variables the parts
   * give every script. Throws (and the run fails) if a part cannot begin.
   */
  async begin(start: RunStart): Promise<Record<string, string>> {
    this.started = true;
    this.startedAt = Date.now();
    if (start.env) this.runEnv = start.env;
    this.emit(startEvent(this.id, this.options, start));
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
    const end: RunEnd = this.cancelled ? endOfCancel(this.cancelled) : seen;
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
      this.emit(endEvent(this.id, end, this.progress()));
    }
    const settling = this.began.filter((part) => part.settle).map((part) => part.settle!().catch(() => undefined));
    if (settling.length > 0) await Promise.all(settling);
    return end;
  }
}
