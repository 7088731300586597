import { existsSync, rmdirSync } from "node:fs";
import { dirname } from "node:path";
import type { WorktreeInfo } from "../core/worktree-events.js";
import { git } from "./git.js";
import type { Env } from "../core/env.js";
import { mergeBack } from "./merge.js";

/**
 * What a run's worktree holds at its end, and its removal. A worktree with no commit since its
 * base and no change is removed with its branch; any other is kept for review. Changes inside the
 * paths copied in at the start (`.loopx/`, --worktree-copy) do not count: they are the loop's own
 * files, not the project's.
 */

export interface WorktreeState {
  /** The directory is still there. */
  exists: boolean;
  /** Commits on the branch since the base (undefined: the branch cannot be read). */
  commits: number | undefined;
  /** Changed, added or deleted paths, outside the copied ones. */
  changes: number;
}

function underCopied(path: string, copied: string[]): boolean {
  return copied.some((root) => path === root || path.startsWith(`${root}/`));
}

export async function worktreeState(info: WorktreeInfo, env: Env): Promise<WorktreeState> {
  if (!existsSync(info.path)) return { exists: false, commits: 0, changes: 0 };
  const [count, status] = await Promise.all([
    git(info.path, ["rev-list", "--count", `${info.base}..refs/heads/${info.branch}`], env),
    git(info.path, ["status", "--porcelain", "-z", "--untracked-files=all"], env),
  ]);
  const commits = count.code === 0 ? Number(count.stdout.trim()) : undefined;
  let changes = 0;
  if (status.code !== 0) changes = 1;
  else {
    const entries = status.stdout.split("\0");
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      if (entry.length < 4) continue;
      // A rename or copy is followed by its original path, which is not an entry of its own.
      if (entry[0] === "R" || entry[0] === "C") i++;
      if (!underCopied(entry.slice(3), info.copied)) changes++;
    }
  }
  return { exists: true, commits, changes };
}

/** Removes the worktree, its registration and its branch; true when all of it is gone. */
export async function removeWorktree(info: WorktreeInfo, env: Env): Promise<boolean> {
  const from = existsSync(info.repo) ? info.repo : info.path;
  const removed = await git(from, ["worktree", "remove", "--force", "--force", info.path], env);
  if (removed.code !== 0 && existsSync(info.path)) return false;
  const branch = await git(from, ["branch", "-D", info.branch], env);
  try {
    // The repository's directory of worktrees, once its last one is gone.
    rmdirSync(dirname(info.path));
  } catch {
    // Others are still there.
  }
  return branch.code === 0 || /not found/.test(branch.stderr);
}

/** "2 commits and uncommitted changes" */
export function describeWork(state: WorktreeState): string {
  const commits = state.commits === undefined ? "an unreadable branch" : `${state.commits} commit${state.commits === 1 ? "" : "s"}`;
  return state.changes > 0 ? `${commits} and ${state.changes} uncommitted change${state.changes === 1 ? "" : "s"}` : commits;
}

/**
 * The end rules, applied once when the run ends: nothing done → removed (undefined is returned);
 * otherwise kept, and the line saying where and how to review it is returned.
 */
export async function finishWorktree(info: WorktreeInfo, env: Env, passed = false): Promise<string | undefined> {
  let state = await worktreeState(info, env);
  if (!state.exists) return undefined;
  if (info.mergeInto !== undefined && passed && state.commits !== undefined && state.commits > 0) {
    const merge = await mergeBack(info, env);
    if (!merge.merged) return merge.line;
    state = { ...state, commits: 0 };
    if (state.changes > 0) return `${merge.line}; worktree kept: ${info.branch} at ${info.path} (${describeWork(state).replace(/^0 commits and /, "")} left uncommitted)`;
    if (!(await removeWorktree(info, env))) return `${merge.line}; the worktree ${info.path} could not be removed (git worktree remove --force ${info.path})`;
    return merge.line;
  }
  if (state.commits === 0 && state.changes === 0) {
    if (await removeWorktree(info, env)) return undefined;
    return `worktree ${info.path} has no commit and no change, but could not be removed (git worktree remove --force ${info.path})`;
  }
  return `worktree kept: ${info.branch} at ${info.path} (${describeWork(state)}); review: git log ${info.base.slice(0, 12)}..${info.branch}`;
}
