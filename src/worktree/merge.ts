import { closeSync, openSync, statSync, unlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import type { WorktreeInfo } from "../core/worktree-events.js";
import { git, gitReason } from "./git.js";
import type { Env } from "../core/env.js";

/**
 * Landing a run's branch back (`loopx run --worktree --worktree-merge`, loopx's own addition): when
 * the run passed (its workflow stopped it with exit 0), its branch is merged with `--no-ff` into
 * the branch the main tree had checked out when the run started, in the main tree. Anything that
 * makes that unsafe — the main tree on another branch or a detached HEAD, uncommitted changes
 * there, a base the branch no longer contains (rewritten), a conflict — leaves the branch and the
 * worktree as they are, and the line returned says why and how to merge by hand. Runs of one
 * repository that end together merge one at a time (a lock file beside their worktrees).
 */

/** How long a run waits for another run's merge into the same repository. */
const LOCK_WAIT_MS = 120_000;
/** A lock older than this was left by a loopx that died mid-merge. */
const STALE_LOCK_MS = 600_000;

async function lock(path: string): Promise<() => void> {
  const until = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      closeSync(openSync(path, "wx", 0o600));
      return () => {
        try {
          unlinkSync(path);
        } catch {
          // Already gone.
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") return () => undefined;
      try {
        if (Date.now() - statSync(path).mtimeMs > STALE_LOCK_MS) unlinkSync(path);
      } catch {
        // Gone meanwhile: try again.
      }
      if (Date.now() > until) return () => undefined;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

function byHand(info: WorktreeInfo): string {
  return `merge by hand: git -C ${info.repo} checkout ${info.mergeInto} && git -C ${info.repo} merge --no-ff ${info.branch}`;
}

/** Why the main tree cannot take the merge now, or undefined when it can. */
async function refusal(info: WorktreeInfo, env: Env): Promise<string | undefined> {
  const into = info.mergeInto!;
  const head = await git(info.repo, ["symbolic-ref", "-q", "--short", "HEAD"], env);
  const current = head.code === 0 ? head.stdout.trim() : undefined;
  if (current !== into) return `${info.repo} is on ${current === undefined ? "a detached HEAD" : `branch ${current}`}, not ${into} (the branch the run started from)`;
  const contains = await git(info.repo, ["merge-base", "--is-ancestor", info.base, `refs/heads/${into}`], env);
  if (contains.code !== 0) return `${into} moved: it no longer contains ${info.base.slice(0, 12)}, the commit the run started from (rewritten history)`;
  const dirty = await git(info.repo, ["status", "--porcelain", "--untracked-files=no"], env);
  if (dirty.code !== 0) return `cannot read the state of ${info.repo}: ${gitReason(dirty)}`;
  const files = dirty.stdout.split("\n").filter(Boolean).length;
  if (files > 0) return `${info.repo} has uncommitted changes (${files} file${files === 1 ? "" : "s"})`;
  return undefined;
}

/** Merges the run's branch into `info.mergeInto`; the one line says what happened. */
export async function mergeBack(info: WorktreeInfo, env: Env): Promise<{ merged: boolean; line: string }> {
  const into = info.mergeInto!;
  const kept = `${info.branch} and its worktree ${info.path} are kept`;
  const release = await lock(join(dirname(info.path), ".merge.lock"));
  try {
    const refused = await refusal(info, env);
    if (refused !== undefined) return { merged: false, line: `not merged: ${refused}; ${kept}; ${byHand(info)}` };
    const message = `Merge ${info.branch} into ${into} (loopx run --worktree-merge)`;
    const merge = await git(info.repo, ["merge", "--no-ff", "--no-edit", "-m", message, `refs/heads/${info.branch}`], env);
    if (merge.code === 0) {
      const sha = await git(info.repo, ["rev-parse", "--short=12", "HEAD"], env);
      return { merged: true, line: `merged ${info.branch} into ${into} (--no-ff, ${sha.stdout.trim()})` };
    }
    const conflicted = await git(info.repo, ["diff", "--name-only", "--diff-filter=U"], env);
    const files = conflicted.stdout.split("\n").filter(Boolean);
    await git(info.repo, ["merge", "--abort"], env);
    const why = files.length > 0 ? `${info.branch} conflicts with ${into} in ${files.slice(0, 3).join(", ")}${files.length > 3 ? ` and ${files.length - 3} more` : ""}` : `git merge failed: ${gitReason(merge)}`;
    return { merged: false, line: `not merged: ${why}; ${kept}; ${byHand(info)}` };
  } finally {
    release();
  }
}
