import { abortReason } from "../core/errors.js";
import { runLoop } from "../core/loop.js";
import type { Output } from "../core/output.js";
import type { RecordedOptions } from "../core/events.js";
import type { Budget } from "../core/budget.js";
import { newRunId, RunSession, type RunCancel, type RunEnd, type RunPart } from "../core/run-session.js";
import { createHeapKeeper, loopxBin, runtimeName } from "../runtime/platform/index.js";
import { runParts } from "./parts.js";
import { stderrLine, warnToStderr } from "../os/stderr.js";
import { KILL_GRACE_MS, ScriptSupervisor } from "../runtime/supervisor.js";
import { VERSION } from "../version.js";
import { createLoopHost } from "./host.js";
import type { ResumeRequest } from "../control/resume.js";
import { validateRunOptions, type RunOptionsChecked, type RunOptionValues } from "./options.js";
import { RunWorktree } from "../worktree/part.js";
import { sharedTreePart } from "../worktree/shared-tree.js";
import { recordsDir } from "../records/store.js";
import { cancelOnHostSignals } from "./host-signals.js";
import { cancelOnSignals } from "./signals.js";

/**
 * The engine: the one place a run is started, for the CLI (`loopx run`) and the API (`run()`,
 * `runPromise()`) alike. It checks the options, builds the supervisor, the session, the run's parts
 * and the host, and turns every ending — stop, `-n`, a failure, a signal, an abort, `return()`, a
 * time limit, a part's cancellation — into one outcome value.
 */

/** What to run, from the CLI's arguments or the API's call; nothing of it is checked yet. */
export interface RunRequest extends RunOptionValues {
  /** "workflow" or "workflow:script" (spec §4.1); checked with discovery when the run starts. */
  target: unknown;
  /** Absolute path of the `-e` / RunOptions.envFile file, if any. */
  envFile?: string;
  /** Where `.loopx/` is; LOOPX_PROJECT_ROOT. */
  projectRoot: string;
  /** The environment scripts inherit, and where the run's features read their settings. */
  baseEnv: Record<string, string | undefined>;
  /**
   * The run goes on where it ended (control/resume.ts prepares this from its record): `target`
   * above is still the run's starting target and `maxIterations` its whole budget.
   */
  resume?: ResumeRequest;
}

/** The features a run asks for besides its options; each one nobody asks for costs nothing. */
export interface RunFeatures {
  /** The CLI's arguments after `loopx`, for `run.start`. */
  argv?: string[];
  /** Write a run record under $XDG_STATE_HOME/loopx/runs/ (LOOPX_RECORD=0 turns it off). */
  record?: boolean;
  /** `--log <file>`: append every event to this absolute path as well. */
  log?: string;
  /** Progress lines on stderr when it is a terminal (LOOPX_PROGRESS=0 turns them off). */
  progress?: boolean;
  /** `--summary`: the summary line when the run ends, wherever stderr goes. */
  summary?: boolean;
  /** SIGINT/SIGTERM/SIGHUP/SIGQUIT to this process cancel the run (the CLI's; see engine/signals.ts). */
  signals?: boolean;
  /**
   * While the run goes, SIGINT/SIGTERM/SIGHUP to this process end its scripts without changing
   * what the host does with the signal (the API's; see engine/host-signals.ts).
   */
  hostSignals?: boolean;
  /** Aborting cancels the run: the running group is terminated and the outcome's error is the abort reason. */
  abortSignal?: AbortSignal;
  /** Keep a long run's heap compact (the CLI's: a library must not retune its host; runtime/heap.ts). */
  compactHeap?: boolean;
  /** More parts for this run (a control channel, a guardian, ...), after the built-in ones. */
  parts?: RunPart[];
  /** The CLI's: LOOPX_ON_END (environment, env files) is the end-of-run hook when no `onEnd` is given. */
  onEndFromEnv?: boolean;
}

/**
 * How a run ended. `exitCode` is the CLI's (null for the API-only endings, aborted and returned);
 * `error`, when there is one, is what the API rejects with (a LoopxError for failures, the
 * TimeoutError of a time limit, the abort reason). A run that failed validation never began (no
 * events, no parts) and ends as "failed" with the validation error.
 */
export type RunOutcome = Omit<RunEnd, "graceEndsAt">;

/**
 * A started run, driven by its consumer: each `next()` runs scripts until the next output (spec
 * §9.1 — nothing runs ahead of the consumer). Errors come from `next()` (never from `startRun`);
 * `outcome` resolves once the run has ended, every part included, and never rejects.
 */
export interface RunHandle extends AsyncIterableIterator<Output, void, undefined> {
  next(): Promise<IteratorResult<Output, void>>;
  /**
   * The consumer leaves: a script running now is terminated (SIGTERM, grace, SIGKILL) and the run
   * ends as "returned"; at a yield the loop's own ending stands (a consumer leaving after the stop
   * output ends a "stopped" run).
   */
  return(): Promise<IteratorResult<Output, void>>;
  /**
   * Ends the run from outside the loop: the first cancellation decides the outcome; each call
   * forwards its signal to the running script's group. Resolves when the group is gone.
   */
  cancel(cancel: RunCancel): Promise<void>;
  /** Drives the run to its end without looking at its outputs (the CLI's way) and gives its outcome. */
  complete(): Promise<RunOutcome>;
  readonly outcome: Promise<RunOutcome>;
}

/** A run id: start time, then 7 random base-36 digits (core/run-session.ts newRunId). */
export function createRunId(now: number = Date.now()): string {
  return newRunId(now, crypto.getRandomValues(new Uint8Array(7)));
}

const DONE: IteratorResult<Output, void> = { done: true, value: undefined };

/** The options `run.start` keeps for a resume; only those given. */
function recordedOptions(envFile: string | undefined, timeout: number | undefined, maxTime: number | undefined, log: string | undefined, budget: Budget | undefined, onEnd: string | undefined): RecordedOptions {
  return {
    ...(onEnd !== undefined ? { onEnd } : {}),
    ...(envFile !== undefined ? { envFile } : {}),
    ...(timeout !== undefined ? { timeout } : {}),
    ...(maxTime !== undefined ? { maxTime } : {}),
    ...(log !== undefined ? { log } : {}),
    ...budget,
  };
}

/** Starts a run. Never throws: a bad request surfaces from the first `next()` and in `outcome`. */
export function startRun(request: RunRequest, features: RunFeatures = {}): RunHandle {
  return new EngineRun(request, features);
}

class EngineRun implements RunHandle {
  readonly outcome: Promise<RunOutcome>;
  private resolveOutcome!: (outcome: RunOutcome) => void;
  private concluding: Promise<RunOutcome> | undefined;
  private readonly supervisor = new ScriptSupervisor();
  private session: RunSession | undefined;
  private loop: AsyncGenerator<Output, void, undefined> | undefined;
  private setupError: unknown;
  /** --worktree: made on the first `next()`, before the session and the loop exist (they need its project root). */
  private worktreeStep: (() => Promise<RunWorktree>) | undefined;
  private worktree: RunWorktree | undefined;
  /** A cancellation before the session existed (the request was invalid). */
  private earlyCancel: RunCancel | undefined;
  private started = false;
  /** The consumer is done with the run: `return()`, or an error was given. */
  private finished = false;
  /** True while a `next()` is driving the loop (a script may be running or about to start). */
  private driving = false;
  private readonly onAbort: (() => void) | undefined;
  /** Stops hearing the host's signals (hostSignals), once the run has ended. */
  private releaseHostSignals: (() => void) | undefined;
  /** The target of the latest script started (for the CLI's Ctrl-C line). */
  private target: string | undefined;

  constructor(
    request: RunRequest,
    private readonly features: RunFeatures,
  ) {
    this.outcome = new Promise((resolve) => (this.resolveOutcome = resolve));
    try {
      const options = validateRunOptions(request);
      const resume = request.resume;
      const id = resume?.runId ?? createRunId();
      const worktree = options.worktree;
      const notify = (line: string) => stderrLine(`loopx: ${line}`);
      if (worktree) {
        this.worktreeStep = () => RunWorktree.create(worktree, { id, projectRoot: request.projectRoot, env: request.baseEnv, warn: warnToStderr, notify });
        this.buildLater = (made) => this.build(request, options, id, made);
      } else {
        if (resume?.worktree) this.worktree = RunWorktree.adopt(resume.worktree, request.projectRoot, request.baseEnv, notify);
        this.build(request, options, id, this.worktree);
      }
    } catch (error) {
      this.setupError = error;
    }
    if (features.signals) {
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
    const signal = features.abortSignal;
    if (signal) {
      this.onAbort = () => void this.cancel({ reason: "aborted", signal: "SIGTERM", exitCode: null, error: abortReason(signal) });
      if (signal.aborted) this.onAbort();
      else signal.addEventListener("abort", this.onAbort, { once: true });
    }
  }

  private buildLater: ((worktree: RunWorktree) => void) | undefined;

  /** The run's parts, session and loop, once its project root is known. */
  private build(request: RunRequest, options: RunOptionsChecked, id: string, worktree: RunWorktree | undefined): void {
    const features = this.features;
    const parts = runParts({
      env: request.baseEnv,
      argv: features.argv,
      record: features.record,
      log: features.log,
      progress: features.progress,
      summary: features.summary,
      timeout: options.timeout,
      maxTime: options.maxTime,
      onEvent: options.onEvent,
      control: true,
      ...(options.onEnd !== undefined ? { onEnd: options.onEnd } : {}),
      ...(features.onEndFromEnv ? { onEndFromEnv: true } : {}),
      budget: options.budget,
      ...(request.resume?.totals ? { totals: request.resume.totals } : {}),
    });
    // First to begin, last to end: the worktree is judged once every other part is done with the run.
    if (worktree) parts.unshift(worktree.part);
    // A run in the project's own tree is warned of another live run of its workflow there.
    if (!worktree && features.record && request.baseEnv.LOOPX_RECORD !== "0") parts.push(sharedTreePart(recordsDir(request.baseEnv)));
    if (features.compactHeap) {
      const keepHeapCompact = createHeapKeeper();
      parts.push({ onEvent: (event) => event.type === "iteration.end" && keepHeapCompact() });
    }
    if (features.signals) parts.push({ onEvent: (event) => event.type === "iteration.start" && (this.target = event.target) });
    if (features.parts) parts.push(...features.parts);
    const resume = request.resume;
    const projectRoot = worktree?.projectRoot ?? request.projectRoot;
    this.session = new RunSession({
      id,
      pid: process.pid,
      terminate: (signal) => this.supervisor.terminate(signal),
      graceEndsAt: () => this.supervisor.graceEndsAt,
      scriptExited: () => this.supervisor.scriptExited,
      warn: warnToStderr,
      runtime: runtimeName,
      version: VERSION,
      parts,
      ...(features.argv ? { argv: features.argv } : {}),
      options: recordedOptions(request.envFile, options.timeout, options.maxTime, features.log, options.budget, options.onEnd),
      ...(worktree && !resume ? { worktree: worktree.info } : {}),
      ...(resume
        ? { resume: { iterations: resume.iterations, elapsedMs: resume.elapsedMs, ...(resume.stdin !== undefined ? { stdinBytes: Buffer.byteLength(resume.stdin) } : {}) } }
        : {}),
    });
    this.loop = runLoop(
      {
        target: request.target,
        maxIterations: options.maxIterations,
        env: options.env,
        envFile: request.envFile,
        projectRoot,
        baseEnv: request.baseEnv,
        loopxBin: loopxBin(),
        checkOutput: request.baseEnv.LOOPX_WARN_OUTPUT !== "0",
        ...(resume ? { resume: { target: resume.target, stdin: resume.stdin } } : {}),
      },
      createLoopHost(this.supervisor),
      this.session,
    );
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
      this.buildLater!(this.worktree);
    } catch (error) {
      this.setupError = error;
    }
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
      if (this.onAbort) this.features.abortSignal?.removeEventListener("abort", this.onAbort);
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
    if (this.features.hostSignals && !this.releaseHostSignals) this.releaseHostSignals = cancelOnHostSignals((cancel) => this.cancel(cancel));
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
