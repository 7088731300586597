import { isAbsolute, resolve } from "node:path";
import { abortReason, LoopxError } from "../core/errors.js";
import type { Output } from "../core/output.js";
import type { LoopEvent } from "../core/events.js";
import type { RunHandle, RunRequest } from "../engine/index.js";


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
  /**
   * Budget in USD (loopx's own addition): once the billed cost its scripts reported (`receipt()`,
   * `loopx receipt`) reaches it, no further script starts and the loop rejects with a LoopxError
   * naming the budget and the total (the run ends "budget"; the CLI exits 3). Estimated cost
   * counts only with `countEstimates: true`. On a resume: the whole run's new budget.
   */
  maxCost?: number;
  countEstimates?: boolean;
  /** Budget in tokens of every kind (loopx's own addition), as `maxCost`. */
  maxTokens?: number;
  /**
   * loopx's own extension: go on with the recorded run of this id (or unique prefix) where it
   * ended, as `loopx runs resume` does — same LOOPX_RUN_ID, iterations counted on, the script
   * that was running again with the stdin it got, in the run's own project (`cwd` is not used),
   * with its recorded env file and limits. `target` must be the run's starting target;
   * `maxIterations` gives more iterations from here (default: what is left of the run's budget);
   * `envFile`, `timeout` and `maxTime` given here replace the recorded ones. The run must have
   * been recorded (`record: true`, or a CLI run); the resumed run is recorded too. A run that
   * cannot be resumed makes the first `next()` throw, saying why.
   */
  resume?: string;
  /**
   * loopx's own extension: a shell command (`sh -c`) run once when the run ends, however it ends,
   * as `loopx run --on-end` runs it (README "When a run ends"): the outcome as JSON on its stdin and
   * LOOPX_END_* variables, in the project root; its failure is one warning and never changes how
   * the run ends. The run's guardian runs it if the process running the loop dies. API runs do not
   * read LOOPX_ON_END. A resumed run keeps the recorded one unless this replaces it.
   */
  onEnd?: string;
  /**
   * loopx's own extension, as `loopx run --worktree[=<name>]`: the run works in a new git worktree
   * on branch `loopx/<name>` (true: named after the run id), made from the project's HEAD under
   * $XDG_STATE_HOME/loopx/worktrees/; removed at the end when nothing was committed or changed,
   * kept (one line on stderr names it) otherwise. See README "Worktrees".
   */
  worktree?: boolean | string;
  /** With `worktree`: untracked paths (relative to `cwd`) copied into the worktree, as `--worktree-copy`. */
  worktreeCopy?: string[];
}

/** RunOptions.env copied now (own enumerable keys); anything else is kept for the engine to reject. */
function snapshotEnv(env: unknown): unknown {
  if (env === null || typeof env !== "object" || Array.isArray(env)) return env;
  const proto = Object.getPrototypeOf(env);
  return proto === Object.prototype || proto === null ? { ...env } : env;
}

/**
 * Runs a loop and yields each iteration's Output (spec §9.1). Never throws synchronously: every
 * error surfaces from the first `next()`. Options, cwd and the environment are snapshotted now.
 */
export function run(target: string, options?: RunOptions): AsyncGenerator<Output, void, undefined> {
  let request: RunRequest | undefined;
  let setupError: unknown;
  try {
    const cwd = options?.cwd ?? process.cwd();
    const envFile = options?.envFile;
    request = {
      target,
      maxIterations: options?.maxIterations,
      env: snapshotEnv(options?.env),
      timeout: options?.timeout,
      maxTime: options?.maxTime,
      maxCost: options?.maxCost,
      countEstimates: options?.countEstimates,
      maxTokens: options?.maxTokens,
      onEvent: options?.onEvent,
      worktree: options?.worktree,
      worktreeCopy: Array.isArray(options?.worktreeCopy) ? [...options.worktreeCopy] : options?.worktreeCopy,
      onEnd: options?.onEnd,
      envFile: envFile === undefined ? undefined : isAbsolute(envFile) ? envFile : resolve(cwd, envFile),
      projectRoot: resolve(cwd),
      baseEnv: { ...process.env },
    };
  } catch (error) {
    setupError = error instanceof Error ? error : new LoopxError(String(error));
  }
  const resume = options?.resume;
  if (resume !== undefined && request && setupError === undefined) {
    const given = request;
    return new LoopGenerator(
      async () => {
        if (typeof resume !== "string") throw new LoopxError(`resume must be a run id, got ${typeof resume}`);
        const [{ prepareResume }, { validateMaxIterations }] = await Promise.all([import("../control/resume.js"), import("../engine/options.js")]);
        const more = validateMaxIterations(given.maxIterations);
        const prepared = prepareResume(given.baseEnv, resume, {
          target,
          ...(more !== undefined ? { maxIterations: more } : {}),
          overrides: {
            ...(given.envFile !== undefined ? { envFile: given.envFile } : {}),
            ...(given.timeout !== undefined ? { timeout: given.timeout as number } : {}),
            ...(given.maxTime !== undefined ? { maxTime: given.maxTime as number } : {}),
            ...(typeof given.onEnd === "string" ? { onEnd: given.onEnd } : {}),
            ...(given.maxCost !== undefined ? { maxCost: given.maxCost as number } : {}),
            ...(given.countEstimates !== undefined ? { countEstimates: given.countEstimates as boolean } : {}),
            ...(given.maxTokens !== undefined ? { maxTokens: given.maxTokens as number } : {}),
          },
        });
        return { ...prepared.request, env: given.env, onEvent: given.onEvent };
      },
      { record: true, abortSignal: options?.signal, hostSignals: true },
      undefined,
    );
  }
  return new LoopGenerator(async () => request!, { record: options?.record === true, abortSignal: options?.signal, hostSignals: true }, setupError);
}

/** Runs a loop to its end and resolves with every Output (spec §9.2); rejects on any error. */
export async function runPromise(target: string, options?: RunOptions): Promise<Output[]> {
  const outputs: Output[] = [];
  for await (const output of run(target, options)) outputs.push(output);
  return outputs;
}

/**
 * The AsyncGenerator of `run()` over the engine's run handle. The engine is loaded on the first
 * `next()`: scripts import this module (for output/input) on every iteration and must not pay for
 * discovery, env files, semver, the script runner or the run's parts.
 */
class LoopGenerator implements AsyncGenerator<Output, void, undefined> {
  private handle: Promise<RunHandle> | undefined;
  private returned = false;

  constructor(
    private readonly request: () => Promise<RunRequest>,
    private readonly features: { record: boolean; abortSignal: AbortSignal | undefined; hostSignals: boolean },
    private setupError: unknown,
  ) {}

  private start(): Promise<RunHandle> {
    this.handle ??= Promise.all([import("../engine/index.js"), this.request()]).then(([{ startRun }, request]) => startRun(request, this.features));
    return this.handle;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** `await using loop = run(...)` stops the loop like `return()` (Node ≥ 20.4 and Bun define the symbol). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.return();
  }

  async next(): Promise<IteratorResult<Output, void>> {
    if (this.returned) return { done: true, value: undefined };
    const signal = this.features.abortSignal;
    if (!this.handle && (signal?.aborted || this.setupError !== undefined)) {
      // An abort before the first next() wins over a bad call (the engine would say the same).
      this.returned = true;
      throw signal?.aborted ? abortReason(signal) : this.setupError;
    }
    let handle: RunHandle;
    try {
      handle = await this.start();
    } catch (error) {
      // The run could not be set up (a resume that is refused): nothing ran, nothing to end.
      this.returned = true;
      throw error;
    }
    return handle.next();
  }

  async return(): Promise<IteratorResult<Output, void>> {
    this.returned = true;
    if (this.handle) await (await this.handle.catch(() => undefined))?.return();
    return { done: true, value: undefined };
  }

  async throw(error: unknown): Promise<IteratorResult<Output, void>> {
    await this.return();
    throw error;
  }
}
