import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fsReason, LoopxError } from "../core/errors.js";
import { git, gitOk } from "./git.js";
import type { Env } from "../core/env.js";

/**
 * What loopx copied into a worktree (`.loopx/`'s untracked entries, --worktree-copy paths) is
 * ignored in that worktree only, so that a loop's `git add -A` never commits it: committed, the
 * copies (with their absolute node_modules symlinks) would collide with the main tree's untracked
 * originals on `git merge loopx/<name>`.
 *
 * git reads no per-worktree exclude file ($GIT_DIR/info/exclude is the repository's, shared by
 * every worktree), but it reads a per-worktree config (extensions.worktreeConfig, git ≥ 2.20):
 * the worktree's config.worktree sets core.excludesFile to a file in the worktree's own git
 * directory, which `git worktree remove` removes with it. That file starts with the user's own
 * global excludes (which the setting replaces in that worktree). The main tree's ignore files are
 * untouched; the repository's config gets extensions.worktreeConfig = true once.
 */

/** A path relative to the worktree's top as a gitignore pattern matching exactly it (file, link or directory). */
function exactPattern(path: string): string {
  return `/${path.replace(/[\\*?[\]!# ]/g, (char) => `\\${char}`)}`;
}

/** The global excludes file git would read: core.excludesFile, else $XDG_CONFIG_HOME/git/ignore. */
async function globalExcludes(worktree: string, env: Env): Promise<string> {
  const set = await git(worktree, ["config", "--type=path", "--get", "core.excludesFile"], env);
  const file = set.code === 0 && set.stdout.trim() !== "" ? set.stdout.trim() : join(env.XDG_CONFIG_HOME || join(env.HOME ?? "", ".config"), "git", "ignore");
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

/** Turns on per-worktree config unless the repository's config makes that unsafe; false then. */
async function worktreeConfigOn(top: string, env: Env): Promise<boolean> {
  const on = await git(top, ["config", "--bool", "--get", "extensions.worktreeConfig"], env);
  if (on.stdout.trim() === "true") return true;
  // With the extension on, these would apply to every worktree (git-worktree(1), CONFIGURATION FILE).
  const bare = await git(top, ["config", "--local", "--bool", "--get", "core.bare"], env);
  const worktree = await git(top, ["config", "--local", "--get", "core.worktree"], env);
  if (bare.stdout.trim() === "true" || worktree.code === 0) return false;
  await gitOk(top, ["config", "--local", "extensions.worktreeConfig", "true"], env, "--worktree: cannot turn on git's per-worktree config");
  return true;
}

/**
 * Ignores `paths` (relative to the worktree's top) in the worktree at `path` only. Returns a
 * warning when the repository does not allow it (nothing is changed then).
 */
export async function excludeCopies(top: string, path: string, paths: string[], env: Env): Promise<string | undefined> {
  if (paths.length === 0) return undefined;
  if (!(await worktreeConfigOn(top, env))) {
    return `the copies of ${paths.join(", ")} are not ignored in the worktree (the repository's config sets core.bare or core.worktree): a loop's git add -A would commit them`;
  }
  const gitDir = (await gitOk(path, ["rev-parse", "--absolute-git-dir"], env, "--worktree: cannot find the worktree's git directory")).trim();
  const file = join(gitDir, "loopx-exclude");
  const own = await globalExcludes(path, env);
  const lines = ["# loopx: copied into this worktree by loopx run --worktree, never committed", ...paths.map(exactPattern)];
  try {
    writeFileSync(file, `${own}${own === "" || own.endsWith("\n") ? "" : "\n"}${lines.join("\n")}\n`);
  } catch (error) {
    throw new LoopxError(`--worktree: cannot write ${file}: ${fsReason(error)}`);
  }
  await gitOk(path, ["config", "--worktree", "core.excludesFile", file], env, "--worktree: cannot set the worktree's core.excludesFile");
  return undefined;
}
