import { abortReason } from "../core/errors.js";
import { runLoop } from "../core/loop.js";
import type { Output } from "../core/output.js";
import type { RunCancel, RunEnd } from "../core/run-part.js";
import { RunSession } from "../core/run-session.js";
import { createHeapKeeper, runtimeName } from "../runtime/platform/index.js";
import { runParts } from "./parts.js";
import { warnToStderr } from "../os/stderr.js";
import { KILL_GRACE_MS, ScriptSupervisor } from "../runtime/supervisor.js";
import { VERSION } from "../version.js";
import { createLoopHost } from "./host.js";
import { recordedOptions } from "./options.js";
import { createRunId } from "./run-id.js";
import { abortSignalOf, loopOptions, planRun, type RunPlan, type RunRequest } from "./plan.js";
import { worktreeStart } from "./worktree.js";
import type { RunWorktree } from "../worktree/part.js";
import { cancelOnHostSignals } from "./host-signals.js";
import { cancelOnSignals } from "./signals.js";
import { EngineSandbox } from "./sandbox.js";

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

class EngineRun implements RunHandle {
  readonly outcome: Promise<RunOutcome>;
  private resolveOutcome!: (outcome: RunOutcome) => void;
  private concluding: Promise<RunOutcome> | undefined;
  private readonly supervisor = new ScriptSupervisor();
  private session: RunSession | undefined;
  private loop: AsyncGenerator<Output, void, undefined> | undefined;
  private setupError: unknown;
  /** A cancellation before the session existed (the request was invalid). */
  private earlyCancel: RunCancel | undefined;
  private started = false;
  /** The consumer is done with the run: `return()`, or an error was given. */
  private finished = false;
  /** True while a `next()` is driving the loop (a script may be running or about to start). */
  private driving = false;
  private readonly onAbort: (() => void) | undefined;
  private readonly abortSignal: AbortSignal | undefined;
  private readonly plan: RunPlan | undefined;
  private readonly id: string | undefined;
  /** --worktree: made on the first `next()`, before the session and the loop exist (they need its project root). */
  private worktreeStep: (() => Promise<RunWorktree>) | undefined;
  private worktree: RunWorktree | undefined;
  /** Stops hearing the host's signals (hostSignals), once the run has ended. */
  private releaseHostSignals: (() => void) | undefined;
  /** The target of the latest script started (for the CLI's Ctrl-C line). */
  private target: string | undefined;
  /** --sandbox: proved on the first `next()`, before the session begins (its run.start names it). */
  private fence: EngineSandbox | undefined;

  constructor(request: RunRequest) {
    this.outcome = new Promise((resolve) => (this.resolveOutcome = resolve));
    // The abort signal first: an abort wins over a bad request (the API's caller gave up anyway).
    const signal = abortSignalOf(request.options?.signal);
    try {
      this.plan = planRun(request);
      this.id = this.plan.resume?.runId ?? createRunId();
      const worktree = worktreeStart(this.plan, this.id);
      this.worktreeStep = worktree.create;
      this.worktree = worktree.adopted;
      this.fence = EngineSandbox.of(this.plan);
      if (!this.worktreeStep) this.build();
    } catch (error) {
      this.setupError = error;
    }
    if (request.signals) {
      const supervisor = this.supervisor;
      cancelOnSignals(
        {
          cancel: (cancel) => this.cancel(cancel),
          runningTarget: () => (supervisor.running ? this.target : undefined),
          killNow: () => supervisor.killNow(),
          suspend: (stop) => supervisor.suspend(stop),
        },
        KILL_GRACE_MS,
      );
    }
    if (signal) {
      this.abortSignal = signal;
      this.onAbort = () => void this.cancel({ reason: "aborted", signal: "SIGTERM", exitCode: null, error: abortReason(signal) });
      if (signal.aborted) this.onAbort();
      else signal.addEventListener("abort", this.onAbort, { once: true });
    }
  }

  /** The run's session and loop, once its project root is known (its worktree's, when it has one). */
  private build(): void {
    const plan = this.plan!;
    this.session = this.createSession(plan, this.worktree);
    const projectRoot = this.worktree?.projectRoot ?? plan.projectRoot;
    this.loop = runLoop({ ...loopOptions(plan), projectRoot }, createLoopHost(this.supervisor), this.session);
  }

  /**
   * --worktree: the worktree is made before anything else of the run exists; a cancellation that
   * came meanwhile removes it again (nothing ran in it) and the run never begins.
   */
  private async makeWorktree(): Promise<void> {
    const step = this.worktreeStep!;
    this.worktreeStep = undefined;
    try {
      this.worktree = await step();
    } catch (error) {
      this.setupError = error;
      return;
    }
    if (this.earlyCancel) return void (await this.worktree.finish());
    try {
      this.build();
    } catch (error) {
      this.setupError = error;
    }
  }

  /** The session of a planned run, with its parts: the built-in and the options' ones, then the driver's. */
  private createSession(plan: RunPlan, worktree: RunWorktree | undefined): RunSession {
    const parts = runParts(plan, worktree);
    const fence = this.fence;
    if (fence) parts.unshift(fence);
    if (plan.compactHeap) {
      const keepHeapCompact = createHeapKeeper();
      parts.push({ onEvent: (event) => event.type === "iteration.end" && keepHeapCompact() });
    }
    if (plan.signals) parts.push({ onEvent: (event) => event.type === "iteration.start" && (this.target = event.target) });
    parts.push(...plan.parts);
    const resume = plan.resume;
    return new RunSession({
      get sandbox() { return fence?.info; },
      id: this.id!,
      pid: process.pid,
      terminate: (signal) => this.supervisor.terminate(signal),
      graceEndsAt: () => this.supervisor.graceEndsAt,
      scriptExited: () => this.supervisor.scriptExited,
      warn: warnToStderr,
      runtime: runtimeName,
      version: VERSION,
      parts,
      ...(plan.argv ? { argv: plan.argv } : {}),
      options: recordedOptions(plan.options),
      ...(worktree && !resume ? { worktree: worktree.info } : {}),
      ...(resume
        ? { resume: { iterations: resume.iterations, elapsedMs: resume.elapsedMs, ...(resume.stdin !== undefined ? { stdinBytes: Buffer.byteLength(resume.stdin) } : {}) } }
        : {}),
    });
  }

  private get cancellation(): RunCancel | undefined {
    return this.session ? this.session.cancellation : this.earlyCancel;
  }

  cancel(cancel: RunCancel): Promise<void> {
    if (this.session) return this.session.cancel(cancel);
    this.earlyCancel ??= cancel;
    return cancel.signal ? this.supervisor.terminate(cancel.signal) : Promise.resolve();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /**
   * Once the loop is over (or never started): the session decides how the run ended — a
   * cancellation wins over what the loop saw — after the running group is gone and every part has
   * ended. `seen` is the loop's own ending, for runs that never began.
   */
  private conclude(seen: RunEnd): Promise<RunOutcome> {
    this.concluding ??= (async () => {
      const early = this.earlyCancel;
      const end: RunEnd = this.session
        ? await this.session.end(seen)
        : early
          ? { reason: early.reason, exitCode: early.exitCode, signal: early.signal, ...(early.error !== undefined ? { error: early.error } : {}) }
          : seen;
      // A run that failed before it began (discovery in the worktree) never ended its parts.
      await this.worktree?.finish();
      this.fence?.release();
      if (this.onAbort) this.abortSignal?.removeEventListener("abort", this.onAbort);
      this.releaseHostSignals?.();
      const { graceEndsAt: _, ...outcome } = end;
      this.resolveOutcome(outcome);
      return outcome;
    })();
    return this.concluding;
  }

  /** The loop threw (or was never started, or was aborted): end it and give the outcome's error, if any. */
  private async fail(error: unknown): Promise<IteratorResult<Output, void>> {
    this.finished = true;
    await this.loop?.return().catch(() => undefined);
    const outcome = await this.conclude({ reason: "failed", exitCode: 1, message: error instanceof Error ? error.message : String(error), error });
    if (outcome.error !== undefined) throw outcome.error;
    return DONE;
  }

  /** The consumer's own cancellation (an abort) ends the run at once: no further output is given. */
  private get aborted(): boolean {
    return this.cancellation?.reason === "aborted";
  }

  async next(): Promise<IteratorResult<Output, void>> {
    if (this.finished) return DONE;
    // Cancelled before the first script was asked for: the loop never starts (nothing is validated).
    if (!this.started && this.cancellation) return this.fail(this.cancellation.error);
    this.started = true;
    if (this.worktreeStep) {
      await this.makeWorktree();
      if (this.earlyCancel) return this.fail(this.earlyCancel.error);
    }
    if (this.aborted) return this.fail(this.cancellation!.error);
    if (!this.loop) return this.fail(this.setupError);
    if (this.fence) await this.fence.prepare(this.worktree?.projectRoot ?? this.plan!.projectRoot, this.supervisor);
    if (this.plan?.hostSignals && !this.releaseHostSignals) this.releaseHostSignals = cancelOnHostSignals((cancel) => this.cancel(cancel));
    this.driving = true;
    let outcome: RunOutcome | undefined;
    try {
      const result = await this.loop.next();
      if (this.aborted) return this.fail(this.cancellation!.error);
      if (this.finished) return DONE;
      if (!result.done) return result;
      this.finished = true;
      // The loop's `finally` has ended a run that began; one that did not (-n 0) completed it.
      outcome = await this.conclude({ reason: "limit", exitCode: 0 });
    } catch (error) {
      if (this.finished && !this.aborted) return DONE;
      return this.fail(error);
    } finally {
      this.driving = false;
    }
    // A cancellation that stopped the loop before a script started (a time limit between two
    // scripts, a stop --now) ends it with its error, as one during a script does.
    if (outcome.error !== undefined) throw outcome.error;
    return DONE;
  }

  async return(): Promise<IteratorResult<Output, void>> {
    if (!this.finished) {
      this.finished = true;
      // Mid-iteration the running script is terminated; at a yield the loop's `finally` decides.
      const pending = this.driving ? this.cancel({ reason: "returned", signal: "SIGTERM", exitCode: null }) : undefined;
      await this.loop?.return().catch(() => undefined);
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
