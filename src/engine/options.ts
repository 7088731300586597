import { describeValue } from "../core/describe.js";
import { checkLimit } from "../core/duration.js";
import { LoopxError } from "../core/errors.js";
import type { LoopEvent, RecordedOptions } from "../core/events.js";
import type { ValueKind } from "../core/value-kinds.js";
import { validateWorktreeMerge, validateWorktreeOption } from "../worktree/option.js";
import { checkSandboxMode, checkSandboxRules } from "../sandbox/option.js";
import { validateStallAfter } from "../core/stall.js";
import { checkAbortSignal, checkFunction, checkPath, shapeOf, validateRunEnv } from "./option-checks.js";

/**
 * The options of a run, declared once. Each entry reaches, with no other edit:
 * - the CLI: `loopx run <cli.names>` (its field, help line, grammar and completion; cli/commands/run.ts
 *   parses the text by `cli.kind`, see cli/options.ts parseOptionText);
 * - the API: RunOptions[name] of `run()` / `runPromise()` when `api` is set (api/run.ts passes the
 *   caller's options through; add the field with its doc comment to RunOptions in api/run.ts — the
 *   compiler insists, see ApiOptionName);
 * - the engine's one check (`check`, which throws one LoopxError naming the option), the checked
 *   plan (RunPlan.options[name]) and, with `recorded`, `run.start`'s options that `runs resume`
 *   gives the resumed run again (add the field to core/events.ts RecordedOptions too).
 *
 * The table declares and checks; it composes nothing. What acts on an option is a part in its
 * feature folder, and engine/parts.ts is the one place that composes every part of a run, the
 * options' included, in the order they begin (one list to read for "what runs, and in what
 * order"; most parts need others: the records' directory, the scratch directory, a resumed run's
 * totals). To add a run option: append an entry here, write its part in its feature folder and add
 * it to engine/parts.ts where it belongs, add the RunOptions field in api/run.ts (the compiler
 * checks both ways). The table's order is the help's order and the order options are checked in.
 */
export interface RunOptionDeclaration<Name extends string = string, T = unknown> {
  /** RunOptions.<name> (API) and RunPlan.options.<name>. */
  name: Name;
  /** The `loopx run` option: its names, the kind of its value (none: a flag) and its help line. */
  cli?: {
    names: string;
    kind?: ValueKind;
    description: string;
    /** `loopx runs resume` takes it too (shown inline there), for the resumed run. */
    resume?: boolean;
    /** What a valid value looks like, for the line when the target was taken as its value (`loopx run --timeout main`). */
    example?: string;
    /** "optional": a flag that may carry a value after `=`; "repeated": given any number of times. */
    form?: "optional" | "repeated";
  };
  /** RunOptions has it: the API's callers may give it. */
  api?: boolean;
  /**
   * The value as given (the API's as is, the CLI's as parsed), checked; relative paths resolve
   * against `projectRoot`; `given` holds every option as given (for an option checked with another).
   */
  check(value: unknown, projectRoot: string, given: Record<string, unknown>): T;
  /** Only with this other option (checked by the engine; by the CLI in its own words). */
  requires?: string;
  /** Kept in `run.start` (RecordedOptions) so that a resumed run gets it again unless given anew. */
  recorded?: boolean;
}

/** An entry, with whether the API takes it kept in its type (ApiOptionName reads it). */
function declare<Name extends string, T, const Api extends boolean = false>(declaration: RunOptionDeclaration<Name, T> & { api?: Api }): RunOptionDeclaration<Name, T> & { api?: Api } {
  return declaration;
}

export function validateMaxIterations(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new LoopxError(`maxIterations must be a non-negative integer, got ${describeValue(value)}`);
  }
  return value;
}

export const RUN_OPTIONS = [
  declare({
    name: "maxIterations",
    cli: { names: "-n", kind: "count", description: "Stop after <count> script executions (goto hops count); 0 only validates", resume: true, example: "a count, e.g. -n 10" },
    api: true,
    check: validateMaxIterations,
  }),
  declare({
    name: "envFile",
    cli: { names: "-e", kind: "env-file", description: "Env file merged over the global env ($XDG_CONFIG_HOME/loopx/env)" },
    api: true,
    recorded: true,
    check: checkPath("envFile"),
  }),
  declare({
    name: "log",
    cli: { names: "--log", kind: "log-file", description: "Append the run's events (JSON lines) to <file> too (loopx's own addition)" },
    recorded: true,
    check: checkPath("log"),
  }),
  declare({
    name: "timeout",
    cli: { names: "--timeout", kind: "duration", description: "Limit for each script execution (loopx's own addition)", example: "a duration, e.g. --timeout 20m" },
    api: true,
    recorded: true,
    check: (value) => checkLimit(value, "timeout"),
  }),
  declare({
    name: "maxTime",
    cli: { names: "--max-time", kind: "duration", description: "Limit for the whole run; no script starts after it (loopx's own addition)", example: "a duration, e.g. --max-time 8h" },
    api: true,
    recorded: true,
    check: (value) => checkLimit(value, "maxTime"),
  }),
  // The end-of-run hook (hooks/part.ts): composed by the engine before the scratch directory and
  // with the guardian, which runs it if loopx dies; the CLI's LOOPX_ON_END is RunRequest.onEndFromEnv.
  declare({
    name: "onEnd",
    cli: { names: "--on-end", kind: "command", description: "Run <command> (sh -c) once when the run ends, however it ends (loopx's own addition)" },
    api: true,
    recorded: true,
    check: (value) => {
      if (value !== undefined && (typeof value !== "string" || value.trim() === "" || value.includes("\0"))) {
        throw new LoopxError(`onEnd must be a shell command (a non-empty string without NUL), got ${shapeOf(value)}`);
      }
      return value as string | undefined;
    },
  }),
  // Budgets (core/budget.ts): the engine composes their part (receipts/part.ts) with the scratch
  // directory and a resumed run's totals.
  declare({
    name: "maxCost",
    cli: { names: "--max-cost", kind: "usd", description: "Budget: no script starts once the run's billed cost reaches <usd>; exit 3 (loopx's own addition)", resume: true },
    api: true,
    recorded: true,
    check: (value) => {
      if (value !== undefined && (typeof value !== "number" || !Number.isFinite(value) || value < 0)) throw new LoopxError(`maxCost must be a non-negative number of US dollars, got ${describeValue(value)}`);
      return value as number | undefined;
    },
  }),
  declare({
    name: "countEstimates",
    cli: { names: "--count-estimates", description: "With --max-cost: estimated cost counts too (loopx's own addition)", resume: true },
    api: true,
    recorded: true,
    requires: "maxCost",
    check: (value) => {
      if (value !== undefined && typeof value !== "boolean") throw new LoopxError(`countEstimates must be a boolean, got ${describeValue(value)}`);
      return value === true ? true : undefined;
    },
  }),
  declare({
    name: "maxTokens",
    cli: { names: "--max-tokens", kind: "count", description: "Budget: no script starts once the run's tokens (input, cache write, output, reasoning; not cache reads) reach <count>; exit 3 (loopx's own addition)", resume: true },
    api: true,
    recorded: true,
    check: (value) => {
      if (value !== undefined && (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0)) throw new LoopxError(`maxTokens must be a non-negative integer, got ${describeValue(value)}`);
      return value as number | undefined;
    },
  }),
  // The stall sensor (src/stall/): the engine composes its part with the scratch directory.
  declare({ name: "stallAfter", api: true, recorded: true, check: validateStallAfter, cli: { names: "--stall-after", kind: "count", description: "End the run \"stalled\" (exit 5) after <count> iterations in a row without progress (loopx's own addition)", resume: true, example: "a count, e.g. --stall-after 3" } }),
  // A run in its own git worktree (src/worktree/): checked together (worktree/option.ts); the engine
  // makes the worktree before the session exists and gives it the run's project root.
  declare({
    name: "worktree",
    cli: { names: "--worktree", kind: "worktree-name", form: "optional", description: "Run in a new git worktree on branch loopx/<name> (default name: the run id; loopx's own addition)" },
    api: true,
    check: (value, _root, given) => validateWorktreeOption(value, given.worktreeCopy, given.worktreeMerge),
  }),
  declare({
    name: "worktreeCopy",
    cli: { names: "--worktree-copy", kind: "path", form: "repeated", description: "Copy this untracked path into the worktree too (repeatable; loopx's own addition)" },
    api: true,
    requires: "worktree",
    // Checked with worktree (worktree/option.ts); an empty list asks for nothing.
    check: (value) => (Array.isArray(value) && value.length > 0 ? (value as string[]) : undefined),
  }),
  // The fence (src/sandbox/): the engine proves it before the run's first event (engine/sandbox.ts).
  declare({ name: "worktreeMerge", api: true, requires: "worktree", check: validateWorktreeMerge, cli: { names: "--worktree-merge", description: "With --worktree: merge the run's branch (--no-ff) into the branch it started from when its workflow stops it with exit 0 (loopx's own addition)" } }),
  declare({ name: "sandbox", cli: { names: "--sandbox", kind: "sandbox-mode", form: "optional", resume: true, description: "Run every script in a fence: writes to the project only, no secrets, allowed hosts only (Linux, bubblewrap; loopx's own addition)" }, api: true, recorded: true, check: checkSandboxMode }),
  declare({ name: "sandboxAllow", cli: { names: "--sandbox-allow", kind: "sandbox-rule", form: "repeated", resume: true, description: "With --sandbox: also allow connecting to <host:port>, or writing <path> (repeatable; loopx's own addition)" }, api: true, recorded: true, check: checkSandboxRules }),
  declare({
    name: "summary",
    cli: { names: "--summary", description: "Print the summary line when the run ends, also off a terminal (loopx's own addition)" },
    check: (value) => value === true,
  }),
  declare({ name: "env", api: true, check: validateRunEnv }),
  declare({ name: "onEvent", api: true, check: checkFunction<(event: LoopEvent) => void>("onEvent") }),
  // Records: every CLI run (the CLI asks for it), API runs with `record: true`; LOOPX_RECORD=0 turns it off.
  declare({ name: "record", api: true, check: (value) => value === true }),
  declare({ name: "signal", api: true, check: checkAbortSignal }),
  // OpenTelemetry export (telemetry/settings.ts): true/false here, else LOOPX_OTEL decides.
  declare({
    name: "telemetry",
    api: true,
    check: (value) => {
      if (value !== undefined && typeof value !== "boolean") throw new LoopxError(`telemetry must be a boolean, got ${describeValue(value)}`);
      return value as boolean | undefined;
    },
  }),
] as const;

type Declarations = (typeof RUN_OPTIONS)[number];

/** The run's options, checked: what the engine and the run's parts work with. */
export type RunOptionsChecked = { [D in Declarations as D["name"]]: ReturnType<D["check"]> };

/** The names RunOptions (api/run.ts) must have a field for. */
export type ApiOptionName = Extract<Declarations, { api?: true }>["name"];

/** A run's options as a driver hands them over, not yet checked (the CLI's parsed, the API's as given). */
export type RunOptionValues = Partial<Record<Declarations["name"], unknown>>;

/** Every option of a run, checked once, in the table's order; the first problem is thrown as a LoopxError naming it. */
export function validateRunOptions(values: RunOptionValues, projectRoot: string = process.cwd(), table: readonly RunOptionDeclaration[] = RUN_OPTIONS): RunOptionsChecked {
  const checked: Record<string, unknown> = {};
  for (const option of table) checked[option.name] = option.check((values as Record<string, unknown>)[option.name], projectRoot, values);
  for (const option of table) {
    if (option.requires !== undefined && checked[option.name] !== undefined && checked[option.requires] === undefined) {
      const other = table.find((o) => o.name === option.requires);
      throw new LoopxError(`${option.name} needs ${option.requires}${option.cli && other?.cli ? ` (${option.cli.names} needs ${other.cli.names})` : ""}`);
    }
  }
  return checked as RunOptionsChecked;
}

/** The options `run.start` keeps for a resume: the recorded ones that were given. */
export function recordedOptions(options: RunOptionsChecked, table: readonly RunOptionDeclaration[] = RUN_OPTIONS): RecordedOptions {
  const recorded: Record<string, unknown> = {};
  for (const option of table) {
    const value = (options as Record<string, unknown>)[option.name];
    if (option.recorded && value !== undefined) recorded[option.name] = value;
  }
  return recorded as RecordedOptions;
}
