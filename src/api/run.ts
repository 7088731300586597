import { isAbsolute, resolve } from "node:path";
import { LoopxError } from "../core/errors.js";
import type { LoopRequest } from "../core/loop.js";
import type { Output } from "../core/output.js";
import { loopxBin } from "../runtime/platform/runtime.js";
import type { RunCancel, RunSession } from "../core/run-session.js";
import type { LoopEvent } from "../records/events.js";
import { ScriptSupervisor } from "../runtime/supervisor.js";

export type { Output } from "../core/output.js";

export interface RunOptions {
  /** Maximum number of script executions, goto hops included; 0 validates and runs nothing. */
  maxIterations?: number;
  /** A `.env` file merged over the global env file; relative paths resolve against `cwd`. */
  envFile?: string;
  /** Aborting terminates the running script's process group and makes the loop throw. */
  signal?: AbortSignal;
  /** The project root (where `.loopx/` is); defaults to process.cwd() at call time. */
  cwd?: string;
  /**
   * Variables for every script of this run (loopx's own addition, not in the spec). Copied when
   * `run()` / `runPromise()` is called: changing the object afterwards has no effect. Merged over
   * the inherited environment, the global env file and `envFile`; loopx's own variables
   * (`LOOPX_BIN`, `LOOPX_PROJECT_ROOT`, `LOOPX_WORKFLOW`, `LOOPX_TMPDIR`, `LOOPX_RUN_ID`,
   * `LOOPX_ITERATION`) still win. Anything but a plain object of strings (an array, `null`, a
   * non-string value) makes `run()` throw on its first `next()` and `runPromise()` reject, naming
   * the bad key. Use it instead of mutating `process.env`, which concurrent runs would share.
   */
  env?: Record<string, string>;
  /**
   * loopx's own extension: receives every event of the run (run.start, iteration.start,
   * iteration.end, run.end) synchronously, in order — the same objects a run record holds. A
   * callback that throws is reported once as a warning and never breaks the loop.
   */
  onEvent?: (event: LoopEvent) => void;
  /**
   * loopx's own extension: write a run record under $XDG_STATE_HOME/loopx/runs/ (see
   * `loopx runs`), as every CLI run does. Default false; LOOPX_RECORD=0 turns it off.
   */
  record?: boolean;
  /**
   * Time limit for each script execution, in milliseconds (loopx's own addition). On expiry the
   * script's process group is terminated and the loop rejects with an error named "TimeoutError".
   */
  timeout?: number;
  /** Time limit for the whole run, in milliseconds (loopx's own addition); as `timeout` on expiry. */
  maxTime?: number;
}

/** RunOptions.env copied now (own enumerable keys); anything else is kept for the engine to reject. */
function snapshotEnv(env: unknown): unknown {
  if (env === null || typeof env !== "object" || Array.isArray(env)) return env;
  const proto = Object.getPrototypeOf(env);
  return proto === Object.prototype || proto === null ? { ...env } : env;
}

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("The loop was aborted", "AbortError");
}

/**
 * Runs a loop and yields each iteration's Output (spec §9.1). Never throws synchronously: every
 * error surfaces from the first `next()`. Options, cwd and the environment are snapshotted now.
 */
export function run(target: string, options?: RunOptions): AsyncGenerator<Output, void, undefined> {
  let request: LoopRequest | undefined;
  let features: ApiFeatures = {};
  let signal: AbortSignal | undefined;
  let setupError: unknown;
  try {
    const cwd = options?.cwd ?? process.cwd();
    const envFile = options?.envFile;
    signal = options?.signal;
    request = {
      target,
      maxIterations: options?.maxIterations,
      env: snapshotEnv(options?.env),
      envFile: envFile === undefined ? undefined : isAbsolute(envFile) ? envFile : resolve(cwd, envFile),
      projectRoot: resolve(cwd),
      baseEnv: { ...process.env },
      loopxBin: loopxBin(),
    };
    const onEvent = options?.onEvent;
    if (onEvent !== undefined && typeof onEvent !== "function") throw new LoopxError(`onEvent must be a function, got ${typeof onEvent}`);
    features = {
      env: request.baseEnv,
      record: options?.record === true,
      ...(onEvent ? { onEvent } : {}),
      limits: { timeout: options?.timeout, maxTime: options?.maxTime },
    };
  } catch (error) {
    setupError = error instanceof Error ? error : new LoopxError(String(error));
  }
  return new LoopGenerator(request, features, signal, setupError);
}

/** What the API asks of runParts (a subset of RunFeatures, typed here so nothing loads early). */
interface ApiFeatures {
  env?: Record<string, string | undefined>;
  record?: boolean;
  onEvent?: (event: LoopEvent) => void;
  /** RunOptions.timeout / maxTime as given; checked with the engine, before the first script. */
  limits?: { timeout: unknown; maxTime: unknown };
}

/** Runs a loop to its end and resolves with every Output (spec §9.2); rejects on any error. */
export async function runPromise(target: string, options?: RunOptions): Promise<Output[]> {
  const outputs: Output[] = [];
  for await (const output of run(target, options)) outputs.push(output);
  return outputs;
}

/**
 * The engine, loaded when iteration begins: scripts import this module (for output/input) on every
 * iteration, and must not pay for discovery, env files, semver, the script runner or run parts.
 */
async function* lazyLoop(request: LoopRequest, features: ApiFeatures, owner: LoopGenerator): AsyncGenerator<Output, void, undefined> {
  const [{ runLoop }, { createLoopHost }, { createRunSession }, { runParts }, { checkLimit }] = await Promise.all([
    import("../core/loop.js"),
    import("./loop-host.js"),
    import("../runtime/run-session-factory.js"),
    import("../runtime/parts/index.js"),
    import("../core/duration.js"),
  ]);
  const { limits, ...rest } = features;
  const timeout = checkLimit(limits?.timeout, "timeout");
  const maxTime = checkLimit(limits?.maxTime, "maxTime");
  const session = createRunSession(owner.supervisor, { parts: runParts({ ...rest, timeout, maxTime }) });
  owner.attach(session);
  yield* runLoop(request, createLoopHost(owner.supervisor), session);
}

/**
 * An AsyncGenerator over the engine that can cancel a script that is running *now*: `return()`
 * and abort terminate the active process group (SIGTERM, grace, SIGKILL) even while a `next()` is
 * pending, which a plain `async function*` cannot do. Cancellations go through the run session,
 * so the run's parts learn how it ended, after the group is gone.
 */
class LoopGenerator implements AsyncGenerator<Output, void, undefined> {
  readonly supervisor = new ScriptSupervisor();
  private session: RunSession | undefined;
  private readonly inner: AsyncGenerator<Output, void, undefined> | undefined;
  private returned = false;
  private aborted = false;
  /** True while a `next()` is driving the engine (a script may be running or about to start). */
  private driving = false;
  private readonly onAbort = () => {
    this.aborted = true;
    void this.cancel({ reason: "aborted", signal: "SIGTERM", exitCode: null, error: abortError(this.signal!) });
  };

  constructor(
    request: LoopRequest | undefined,
    features: ApiFeatures,
    private readonly signal: AbortSignal | undefined,
    private setupError: unknown,
  ) {
    if (request) this.inner = lazyLoop(request, features, this);
    if (signal?.aborted) this.aborted = true;
    else signal?.addEventListener("abort", this.onAbort, { once: true });
  }

  /** Called by the engine's loader once the run's session exists. */
  attach(session: RunSession): void {
    this.session = session;
    if (this.aborted) void this.cancel({ reason: "aborted", signal: "SIGTERM", exitCode: null, error: abortError(this.signal!) });
  }

  /** Before the engine has loaded there is no session: stopping the supervisor keeps any script from starting. */
  private cancel(cancel: RunCancel): Promise<void> {
    return this.session ? this.session.cancel(cancel) : this.supervisor.terminate(cancel.signal);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** `await using loop = run(...)` stops the loop like `return()` (Node ≥ 20.4 and Bun define the symbol). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.return();
  }

  private finish(): void {
    this.signal?.removeEventListener("abort", this.onAbort);
  }

  async next(): Promise<IteratorResult<Output, void>> {
    if (this.returned) return { done: true, value: undefined };
    if (this.aborted) return this.fail(await this.abortedError());
    if (this.setupError !== undefined || !this.inner) {
      const error = this.setupError;
      this.setupError = undefined;
      return this.fail(error);
    }
    this.driving = true;
    try {
      const result = await this.inner.next();
      if (this.aborted) return this.fail(await this.abortedError());
      if (this.returned) return { done: true, value: undefined };
      if (result.done) this.finish();
      return result;
    } catch (error) {
      if (this.aborted) return this.fail(await this.abortedError());
      if (this.returned) return { done: true, value: undefined };
      // A time limit ended the run: the script it killed (or the one it kept from starting) is
      // not the error, the TimeoutError is.
      const cancelled = this.session?.cancellation;
      if (cancelled?.reason === "timed-out") return this.fail(cancelled.error);
      return this.fail(error);
    } finally {
      this.driving = false;
    }
  }

  /** Waits until the aborted loop's process group is gone, then gives the abort error. */
  private async abortedError(): Promise<unknown> {
    await this.cancel({ reason: "aborted", signal: "SIGTERM", exitCode: null, error: abortError(this.signal!) });
    return abortError(this.signal!);
  }

  /** Ends the run (its parts included) before the error reaches the caller. */
  private async fail(error: unknown): Promise<never> {
    this.returned = true;
    this.finish();
    await this.inner?.return().catch(() => undefined);
    throw error;
  }

  async return(): Promise<IteratorResult<Output, void>> {
    if (!this.returned) {
      this.returned = true;
      this.finish();
      // Mid-iteration the running script is terminated; at a yield the engine's `finally` decides
      // (a consumer leaving after the stop output ends a "stopped" run, not a "returned" one).
      const pending = this.driving ? this.cancel({ reason: "returned", signal: "SIGTERM", exitCode: null }) : undefined;
      await this.inner?.return().catch(() => undefined);
      await pending;
    }
    return { done: true, value: undefined };
  }

  async throw(error: unknown): Promise<IteratorResult<Output, void>> {
    await this.return();
    throw error;
  }
}
