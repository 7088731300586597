import { describeValue } from "../core/describe.js";
import { checkLimit } from "../core/duration.js";
import { LoopxError } from "../core/errors.js";
import type { LoopEvent } from "../core/events.js";
import type { WorktreeOption } from "../worktree/part.js";
import { validateWorktreeOption } from "../worktree/option.js";
import type { Budget } from "../core/budget.js";

/**
 * A run's options as the CLI or the API hand them over, not yet checked. The CLI has already
 * turned its text (`-n 5`, `--timeout 30s`) into values; the API passes what its caller gave.
 */
export interface RunOptionValues {
  /** Maximum number of script executions, goto hops included; 0 validates and runs nothing. */
  maxIterations?: unknown;
  /** RunOptions.env (loopx's own addition): variables for every script of the run. */
  env?: unknown;
  /** Limit for each script execution, in ms (`--timeout`, RunOptions.timeout). */
  timeout?: unknown;
  /** Limit for the whole run, in ms (`--max-time`, RunOptions.maxTime). */
  maxTime?: unknown;
  /** RunOptions.onEvent: every event of the run. */
  onEvent?: unknown;
  /** `--worktree[=<name>]`, RunOptions.worktree: true or a name (loopx's own addition). */
  worktree?: unknown;
  /** `--worktree-copy <path>`, RunOptions.worktreeCopy: untracked paths copied into the worktree. */
  worktreeCopy?: unknown;
  /** `--on-end` / RunOptions.onEnd: a shell command run once when the run ends (src/hooks). */
  onEnd?: unknown;
  /** Budgets (`--max-cost`, `--count-estimates`, `--max-tokens`; RunOptions the same): core/budget.ts. */
  maxCost?: unknown;
  countEstimates?: unknown;
  maxTokens?: unknown;
}

/** The same options, checked: what the engine and the run's parts work with. */
export interface RunOptionsChecked {
  maxIterations: number | undefined;
  env: Record<string, string>;
  timeout: number | undefined;
  maxTime: number | undefined;
  onEvent: ((event: LoopEvent) => void) | undefined;
  /** The run's own worktree, if asked for (src/worktree/); absent otherwise. */
  worktree?: WorktreeOption;
  onEnd: string | undefined;
  /** The run's budget, when it has one. */
  budget: Budget | undefined;
}

export function validateMaxIterations(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new LoopxError(`maxIterations must be a non-negative integer, got ${describeValue(value)}`);
  }
  return value;
}

function shapeOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object" || typeof value === "function") {
    const name = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
    return typeof value === "function" ? "a function" : typeof name === "string" && name !== "" && name !== "Object" ? `a ${name}` : "an object";
  }
  return `${typeof value} ${describeValue(value)}`;
}

/**
 * RunOptions.env: undefined, or a plain object whose every value is a string; names may hold
 * neither "=" nor NUL (nor be empty), values no NUL — what an environment can carry.
 */
function validateRunEnv(value: unknown): Record<string, string> {
  if (value === undefined) return {};
  const proto = value !== null && typeof value === "object" ? Object.getPrototypeOf(value) : undefined;
  if (value === null || typeof value !== "object" || Array.isArray(value) || (proto !== Object.prototype && proto !== null)) {
    throw new LoopxError(`env must be an object of variable names to string values, got ${shapeOf(value)}`);
  }
  const env: Record<string, string> = {};
  for (const [key, item] of Object.entries(value)) {
    if (key === "" || key.includes("=") || key.includes("\0")) {
      throw new LoopxError(`env has an invalid variable name ${JSON.stringify(key)}: names are non-empty and hold no "=" or NUL`);
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `env.${key}` : `env[${JSON.stringify(key)}]`;
    if (typeof item !== "string") throw new LoopxError(`${name} must be a string, got ${shapeOf(item)}`);
    if (item.includes("\0")) throw new LoopxError(`${name} must not contain a NUL character`);
    env[key] = item;
  }
  return env;
}

/**
 * Every option of a run, checked once, for the CLI and the API alike, before anything of the run
 * exists (discovery, env files and the target come next, in the loop's own validation). The
 * first problem is thrown as a LoopxError naming the option.
 */
export function validateRunOptions(options: RunOptionValues): RunOptionsChecked {
  const onEvent = options.onEvent;
  if (onEvent !== undefined && typeof onEvent !== "function") throw new LoopxError(`onEvent must be a function, got ${typeof onEvent}`);
  const onEnd = options.onEnd;
  if (onEnd !== undefined && (typeof onEnd !== "string" || onEnd.trim() === "" || onEnd.includes("\0"))) {
    throw new LoopxError(`onEnd must be a shell command (a non-empty string without NUL), got ${shapeOf(onEnd)}`);
  }
  const timeout = checkLimit(options.timeout, "timeout");
  const maxTime = checkLimit(options.maxTime, "maxTime");
  const checked: RunOptionsChecked = {
    maxIterations: validateMaxIterations(options.maxIterations),
    env: validateRunEnv(options.env),
    timeout,
    maxTime,
    onEvent: onEvent as RunOptionsChecked["onEvent"],
    onEnd,
    budget: validateBudget(options),
  };
  const worktree = validateWorktreeOption(options.worktree, options.worktreeCopy);
  return worktree ? { ...checked, worktree } : checked;
}

/** maxCost (USD, a finite number ≥ 0), countEstimates (a boolean, with maxCost), maxTokens (an integer ≥ 0). */
function validateBudget(options: RunOptionValues): Budget | undefined {
  const { maxCost, countEstimates, maxTokens } = options;
  if (maxCost !== undefined && (typeof maxCost !== "number" || !Number.isFinite(maxCost) || maxCost < 0)) {
    throw new LoopxError(`maxCost must be a non-negative number of US dollars, got ${describeValue(maxCost)}`);
  }
  if (countEstimates !== undefined && typeof countEstimates !== "boolean") throw new LoopxError(`countEstimates must be a boolean, got ${describeValue(countEstimates)}`);
  if (countEstimates === true && maxCost === undefined) throw new LoopxError("countEstimates needs maxCost (--count-estimates needs --max-cost)");
  if (maxTokens !== undefined && (typeof maxTokens !== "number" || !Number.isSafeInteger(maxTokens) || maxTokens < 0)) {
    throw new LoopxError(`maxTokens must be a non-negative integer, got ${describeValue(maxTokens)}`);
  }
  if (maxCost === undefined && maxTokens === undefined) return undefined;
  return {
    ...(maxCost !== undefined ? { maxCost: maxCost as number } : {}),
    ...(countEstimates === true ? { countEstimates: true } : {}),
    ...(maxTokens !== undefined ? { maxTokens: maxTokens as number } : {}),
  };
}
