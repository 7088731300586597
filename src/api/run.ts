import { settledOutput, type Output } from "../core/output.js";
import type { LoopEvent } from "../core/events.js";
import type { RunHandle, RunRequest } from "../engine/index.js";
import type { ApiOptionName } from "../engine/options.js";


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
   * The stall sensor (loopx's own addition), as `loopx run --stall-after <n>`: after `n` iterations
   * in a row that reach no workspace state the run has not seen (HEAD, changed and untracked files,
   * in a git project) and send no progress signal that counts (`progress()`), no further script
   * starts and the loop rejects with a LoopxError naming the flat iterations and what they
   * repeated (the run ends "stalled"; the CLI exits 5). See README "Stall sensor".
   */
  stallAfter?: number;
  /**
   * loopx's own extension: go on with the recorded run of this id (or unique prefix) where it
   * ended, as `loopx runs resume` does — same LOOPX_RUN_ID, iterations counted on, the script
   * that was running again with the stdin it got, in the run's own project (`cwd` is not used),
   * with its recorded env file and limits. `target` must be the run's starting target;
   * `maxIterations` gives more iterations from here (default: what is left of the run's -n);
   * `envFile`, `timeout`, `maxTime` and the budgets given here replace the recorded ones. The run must have
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
   * loopx's own extension: export this run's traces and metrics to OpenTelemetry (true), or not
   * (false); when not given, LOOPX_OTEL decides. OTEL_SDK_DISABLED=true always wins (`loopx otel test`).
   */
  telemetry?: boolean;
  /**
   * loopx's own extension, as `loopx run --worktree[=<name>]`: the run works in a new git worktree
   * on branch `loopx/<name>` (true: named after the run id), made from the project's HEAD under
   * $XDG_STATE_HOME/loopx/worktrees/; removed at the end when nothing was committed or changed,
   * kept (one line on stderr names it) otherwise. See README "Worktrees".
   */
  worktree?: boolean | string;
  /** With `worktree`: untracked paths (relative to `cwd`) copied into the worktree, as `--worktree-copy`. */
  worktreeCopy?: string[];
  /**
   * loopx's own extension, as `loopx run --sandbox`: every script of the run, and all it starts,
   * runs inside a fence (Linux, bubblewrap) that lets it write only the project, LOOPX_TMPDIR and
   * the policy's paths, hides $HOME but for toolchains and the policy's paths, and connects only to
   * the policy's `host:port` entries. Proven by a probe before the first script; a fence that
   * cannot be set up or does not hold fails the run (exit code 4) and nothing runs. "off" / false:
   * no fence (a resume's way to drop it). See README "Sandbox".
   */
  sandbox?: boolean | "on" | "off";
  /** With `sandbox`: more `host:port` entries to connect to and paths to write, as `--sandbox-allow`. */
  sandboxAllow?: string[];
  /**
   * With `worktree`, as `--worktree-merge`: when the run ends by its workflow's stop, its branch is
   * merged (`--no-ff`) into the branch the project had checked out when it started, in the project's
   * own tree; a conflict, uncommitted changes there, or another branch checked out leave it unmerged
   * (one line on stderr says why and how to merge by hand). Never after any other ending.
   */
  worktreeMerge?: boolean;
}

// RunOptions and the run options table (engine/options.ts) are checked both ways: every API option
// of the table is a documented field of RunOptions, and every field of RunOptions but the two the
// engine takes apart (`cwd`: the project root; `resume`: the run to go on with) is an API option of
// the table. Neither compiles otherwise, and the error names the field that drifted.
type MissingApiFields = Exclude<ApiOptionName, keyof RunOptions>;
const everyApiOptionDocumented: [MissingApiFields] extends [never] ? true : MissingApiFields = true;
type FieldsOutsideTable = Exclude<keyof RunOptions, ApiOptionName | "cwd" | "resume">;
const everyFieldInTable: [FieldsOutsideTable] extends [never] ? true : FieldsOutsideTable = true;
void everyApiOptionDocumented;
void everyFieldInTable;

/** RunOptions.env copied now (own enumerable keys); anything else is kept for the engine to reject. */
function snapshotEnv(env: unknown): unknown {
  if (env === null || typeof env !== "object" || Array.isArray(env)) return env;
  const proto = Object.getPrototypeOf(env);
  return proto === Object.prototype || proto === null ? { ...env } : env;
}

/**
 * Runs a loop and yields each iteration's Output (spec §9.1). Never throws synchronously: every
 * error surfaces from the first `next()`. Options, cwd and the environment are snapshotted now;
 * the engine checks them (engine/options.ts), resume included.
 */
export function run(target: string, options?: RunOptions): AsyncGenerator<Output, void, undefined> {
  const { cwd, resume, ...given } = options ?? {};
  const request: RunRequest = {
    target,
    options: { ...given, env: snapshotEnv(given.env) },
    projectRoot: cwd ?? process.cwd(),
    baseEnv: { ...process.env },
    ...(resume !== undefined ? { resume: { id: resume } } : {}),
    hostSignals: true,
  };
  return new LoopGenerator(request);
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

  constructor(private readonly request: RunRequest) {}

  private start(): Promise<RunHandle> {
    this.handle ??= import("../engine/index.js").then(({ startRun }) => startRun(this.request));
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
    const next = await (await this.start()).next();
    // A huge raw result is decoded only now, when it is handed over (core/output.ts).
    return next.done ? next : { value: settledOutput(next.value), done: false };
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
