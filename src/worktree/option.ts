import { describeValue } from "../core/describe.js";
import { LoopxError } from "../core/errors.js";
import type { WorktreeOption } from "./part.js";
import { checkWorktreeName } from "./place.js";

/** RunOptions.worktreeMerge / --worktree-merge: true or undefined (worktree's own check takes it in). */
export function validateWorktreeMerge(value: unknown): true | undefined {
  if (value !== undefined && typeof value !== "boolean") throw new LoopxError(`worktreeMerge must be a boolean, got ${describeValue(value)}`);
  return value === true ? true : undefined;
}

/**
 * RunOptions.worktree (`--worktree[=<name>]`) and RunOptions.worktreeCopy (`--worktree-copy`),
 * checked: undefined when the run works in the project's own tree (the default, which costs nothing).
 */
export function validateWorktreeOption(worktree: unknown, copy: unknown, merge?: unknown): WorktreeOption | undefined {
  if (copy !== undefined && (!Array.isArray(copy) || copy.some((path) => typeof path !== "string" || path === "" || path.includes("\0")))) {
    throw new LoopxError(`worktreeCopy must be an array of paths, got ${Array.isArray(copy) ? "an array holding a non-path" : describeValue(copy)}`);
  }
  // worktreeCopy without worktree: the table's `requires` says so (engine/options.ts), in the CLI's words on the CLI.
  if (worktree === undefined || worktree === false) return undefined;
  if (worktree !== true && typeof worktree !== "string") throw new LoopxError(`worktree must be true or a name, got ${describeValue(worktree)}`);
  return { ...(typeof worktree === "string" ? { name: checkWorktreeName(worktree) } : {}), copy: (copy as string[] | undefined) ?? [], ...(merge === true ? { merge: true } : {}) };
}
