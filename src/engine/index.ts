import type { Output } from "../core/output.js";
import type { RunCancel, RunEnd } from "../core/run-part.js";
import { KILL_GRACE_MS } from "../runtime/supervisor.js";
import { abortSignalOf, type RunRequest } from "./plan.js";
import { cancelOnHostSignals } from "./host-signals.js";
import { RunSetup } from "./run-setup.js";
import { cancelOnAbort, cancelOnSignals } from "./signals.js";

/**
 * The engine: the one place a run is started, for the CLI (`loopx run`) and the API (`run()`, `runPromise()`) alike. It checks the options,
 * builds the supervisor, the session, the run's parts and the host, and turns every ending — stop, `-n`, a failure, a signal, an abort,
 * `return()`, a time limit, a part's cancellation — into one outcome value.
 */

export type { RunRequest } from "./plan.js";

/**
 * How a run ended. `exitCode` is the CLI's (null for the API-only endings, aborted and returned); `error`, when there is one, is what
 * the API rejects with (a LoopxError for failures, the TimeoutError of a time limit, the abort reason). A run that failed validation
 * never began (no events, no parts) and ends as "failed" with the validation error.
 */
export type RunOutcome = Omit<RunEnd, "graceEndsAt">;

/**
 * A started run, driven by its consumer: each `next()` runs scripts until the next output (spec §9.1 — nothing runs ahead of the
 * consumer). Errors come from `next()` (never from `startRun`); `outcome` resolves once the run has ended, every part included.
 */
export interface RunHandle extends AsyncIterableIterator<Output, void, undefined> {
  next(): Promise<IteratorResult<Output, void>>;
  /**
   * The consumer leaves: a script running now is terminated (SIGTERM, grace, SIGKILL) and the run ends as "returned"; at a yield
   * the loop's own ending stands (a consumer leaving after the stop output ends a "stopped" run).
   */
  return(): Promise<IteratorResult<Output, void>>;
  /** Ends the run from outside the loop: the first cancellation decides the outcome; each call forwards its signal to the running script's group. Resolves when the group is gone. */
  cancel(cancel: RunCancel): Promise<void>;
  /** Drives the run to its end without looking at its outputs (the CLI's way) and gives its outcome. */
  complete(): Promise<RunOutcome>;
  readonly outcome: Promise<RunOutcome>;
}

const DONE: IteratorResult<Output, void> = { done: true, value: undefined };

/** Starts a run. Never throws: a bad request surfaces from the first `next()` and in `outcome`. */
export function startRun(request: RunRequest): RunHandle {
  return new EngineRun(request);
}

/**
 * Where the consumer is with the run, one value rather than a flag per question: no `next()` yet;
 * started, with no `next()` driving the loop (between outputs, or making the run ready); a `next()`
 * driving the loop (a script may be running or about to start); done with it (`return()`, an error
 * was given, or the loop ended). "finished" is final: nothing leaves it.
 */
type Phase = "unstarted" | "idle" | "driving" | "finished";

/** The consumer's side of a run; what the run is made of is its RunSetup (run-setup.ts). */
class EngineRun implements RunHandle {
  readonly outcome: Promise<RunOutcome>;
  private resolveOutcome!: (outcome: RunOutcome) => void;
  private concluding: Promise<RunOutcome> | undefined;
  private phase: Phase = "unstarted";
  private readonly setup: RunSetup;
  /** Stops hearing the API's abort signal, once the run has ended. */
  private releaseAbort: (() => void) | undefined;
  /** Stops hearing the host's signals (hostSignals), once the run has ended. */
  private releaseHostSignals: (() => void) | undefined;

  constructor(request: RunRequest) {
    this.outcome = new Promise((resolve) => (this.resolveOutcome = resolve));
    // The abort signal first: an abort wins over a bad request (the API's caller gave up anyway).
    const signal = abortSignalOf(request.options?.signal);
    const setup = (this.setup = new RunSetup(request));
    if (request.signals) {
      const supervisor = setup.supervisor;
      cancelOnSignals(
        {
          cancel: (cancel) => this.cancel(cancel),
          runningTarget: () => (supervisor.running ? setup.target : undefined),
          killNow: () => supervisor.killNow(),
          suspend: (stop) => supervisor.suspend(stop),
        },
        KILL_GRACE_MS,
      );
    }
    if (signal) this.releaseAbort = cancelOnAbort(signal, (cancel) => this.cancel(cancel));
  }

  cancel(cancel: RunCancel): Promise<void> {
    return this.setup.cancel(cancel);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private get finished(): boolean {
    return this.phase === "finished";
  }

  /** Moves to `phase` unless the consumer is already done with the run. */
  private enter(phase: Exclude<Phase, "finished">): void {
    if (this.phase !== "finished") this.phase = phase;
  }

  /**
   * Once the loop is over (or never started): the setup says how the run ended — a cancellation
   * wins over what the loop saw — after the running group is gone and every part has ended.
   * `seen` is the loop's own ending, for runs that never began.
   */
  private conclude(seen: RunEnd): Promise<RunOutcome> {
    this.concluding ??= (async () => {
      const end = await this.setup.end(seen);
      this.releaseAbort?.();
      this.releaseHostSignals?.();
      const { graceEndsAt: _, ...outcome } = end;
      this.resolveOutcome(outcome);
      return outcome;
    })();
    return this.concluding;
  }

  /** The loop threw (or was never started, or was aborted): end it and give the outcome's error, if any. */
  private async fail(error: unknown): Promise<IteratorResult<Output, void>> {
    this.phase = "finished";
    await this.setup.loop?.return().catch(() => undefined);
    const outcome = await this.conclude({ reason: "failed", exitCode: 1, message: error instanceof Error ? error.message : String(error), error });
    if (outcome.error !== undefined) throw outcome.error;
    return DONE;
  }

  /** The consumer's own cancellation (an abort) ends the run at once: no further output is given. */
  private get aborted(): boolean {
    return this.setup.cancellation?.reason === "aborted";
  }

  async next(): Promise<IteratorResult<Output, void>> {
    if (this.finished) return DONE;
    const setup = this.setup;
    // Cancelled before the first script was asked for: the loop never starts (nothing is validated).
    if (this.phase === "unstarted" && setup.cancellation) return this.fail(setup.cancellation.error);
    if (this.phase === "unstarted") this.phase = "idle";
    if (setup.awaitsWorktree) {
      await setup.makeWorktree();
      if (setup.earlyCancel) return this.fail(setup.earlyCancel.error);
    }
    if (this.aborted) return this.fail(setup.cancellation!.error);
    const loop = setup.loop;
    if (!loop) return this.fail(setup.error);
    if (setup.fence) await setup.fence.prepare(setup.projectRoot, setup.supervisor);
    if (setup.plan?.hostSignals && !this.releaseHostSignals) this.releaseHostSignals = cancelOnHostSignals((cancel) => this.cancel(cancel));
    this.enter("driving");
    let outcome: RunOutcome | undefined;
    try {
      const result = await loop.next();
      if (this.aborted) return this.fail(setup.cancellation!.error);
      if (this.finished) return DONE;
      if (!result.done) return result;
      this.phase = "finished";
      // The loop's `finally` has ended a run that began; one that did not (-n 0) completed it.
      outcome = await this.conclude({ reason: "limit", exitCode: 0 });
    } catch (error) {
      if (this.finished && !this.aborted) return DONE;
      return this.fail(error);
    } finally {
      this.enter("idle");
    }
    // A cancellation that stopped the loop before a script started (a time limit between two
    // scripts, a stop --now) ends it with its error, as one during a script does.
    if (outcome.error !== undefined) throw outcome.error;
    return DONE;
  }

  async return(): Promise<IteratorResult<Output, void>> {
    if (!this.finished) {
      const driving = this.phase === "driving";
      this.phase = "finished";
      // Mid-iteration the running script is terminated; at a yield the loop's `finally` decides.
      const pending = driving ? this.cancel({ reason: "returned", signal: "SIGTERM", exitCode: null }) : undefined;
      await this.setup.loop?.return().catch(() => undefined);
      await pending;
      await this.conclude({ reason: "returned", exitCode: null });
    }
    return DONE;
  }

  async throw(error: unknown): Promise<IteratorResult<Output, void>> {
    await this.return();
    throw error;
  }

  async complete(): Promise<RunOutcome> {
    try {
      while (!(await this.next()).done);
    } catch {
      // The outcome holds the error.
    }
    return this.outcome;
  }
}
