import { existsSync, mkdirSync, realpathSync, rmSync, rmdirSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { fsReason, LoopxError } from "../core/errors.js";
import type { WorktreeInfo } from "../core/worktree-events.js";
import { fillWorktree } from "./fill.js";
import { git, gitOk, gitReason } from "./git.js";
import type { Env } from "../core/env.js";
import { checkWorktreeName, repositoryWorktrees, worktreeBranch } from "./place.js";

/**
 * Making a run's worktree (`loopx run --worktree`): a new branch `loopx/<name>` from the project's
 * HEAD, checked out in a directory of its own, with the project's untracked `.loopx/` and the
 * paths named by --worktree-copy copied in. All of it or nothing: a failure half-way undoes what
 * was done (the registration, the branch, the directories made), and is one LoopxError line.
 */

export interface WorktreeRequest {
  /** The project root of the main tree (where loopx was started). */
  projectRoot: string;
  /** The worktree's name (default: the run id). */
  name: string;
  /** --worktree-copy: paths relative to the project root (or absolute, inside the repository). */
  copy: string[];
  env: Env;
  /** --worktree-merge: the branch checked out now is where the run's branch lands back. */
  merge?: boolean;
}

export interface CreatedWorktree {
  info: WorktreeInfo;
  /** The run's project root: the main tree's project root, at the same place in the worktree. */
  projectRoot: string;
  /** Tracked files of the main tree with uncommitted changes (not carried over), relative to the repository's top. */
  uncommitted: string[];
  /** Lines for the run's stderr (fill.ts). */
  warnings: string[];
}

/** The repository around `projectRoot`: its top, its git directory and HEAD's commit. */
async function repository(projectRoot: string, env: Env): Promise<{ top: string; commonDir: string; head: string }> {
  const found = await git(projectRoot, ["rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir"], env);
  if (found.code !== 0) {
    const reason = gitReason(found);
    throw new LoopxError(/not a git repository/i.test(reason) ? `--worktree needs a git repository: ${projectRoot} is not in one` : `--worktree: cannot read the repository of ${projectRoot}: ${reason}`);
  }
  const [top, commonDir] = found.stdout.split("\n");
  if (!top || !commonDir) throw new LoopxError(`--worktree needs a working tree: ${projectRoot} is in a bare repository or a git directory`);
  const head = await git(projectRoot, ["rev-parse", "-q", "--verify", "HEAD^{commit}"], env);
  if (head.code !== 0) throw new LoopxError(`--worktree needs a commit to start from: the repository at ${top} has none yet`);
  return { top, commonDir, head: head.stdout.trim() };
}

/** --worktree-merge: the branch the main tree has checked out (a detached HEAD has none to land on). */
async function checkedOutBranch(top: string, env: Env): Promise<string> {
  const found = await git(top, ["symbolic-ref", "-q", "--short", "HEAD"], env);
  if (found.code !== 0 || found.stdout.trim() === "") throw new LoopxError(`--worktree-merge needs a branch to merge into: ${top} is on a detached HEAD`);
  return found.stdout.trim();
}

/** What was made so far, undone in reverse order. */
class Undo {
  private readonly steps: Array<() => Promise<unknown> | void> = [];
  add(step: () => Promise<unknown> | void): void {
    this.steps.push(step);
  }
  async run(): Promise<void> {
    for (const step of this.steps.reverse()) {
      try {
        await step();
      } catch {
        // Best effort: the next step may still clean up what this one could not.
      }
    }
  }
}

export async function createWorktree(request: WorktreeRequest): Promise<CreatedWorktree> {
  const { env } = request;
  const name = checkWorktreeName(request.name);
  const { top, commonDir, head } = await repository(request.projectRoot, env);
  const branch = worktreeBranch(name);
  const mergeInto = request.merge ? await checkedOutBranch(top, env) : undefined;
  const taken = await git(top, ["show-ref", "--verify", "--quiet", `refs/heads/${branch}`], env);
  if (taken.code === 0) throw new LoopxError(`--worktree=${name}: branch ${branch} already exists (pick another name, or remove it: git branch -D ${branch})`);
  const dir = repositoryWorktrees(env, top, commonDir);
  const path = join(dir, name);
  if (existsSync(path)) throw new LoopxError(`--worktree=${name}: ${path} already exists (a worktree of that name; see loopx runs clean)`);
  const registered = await gitOk(top, ["worktree", "list", "--porcelain"], env, "--worktree: cannot list the repository's worktrees");
  if (registered.split("\n").includes(`worktree ${path}`)) throw new LoopxError(`--worktree=${name}: a worktree is registered at ${path} (git worktree prune forgets a removed one)`);
  const rel = relative(top, realpathSync(request.projectRoot));
  const copies = request.copy.map((given) => copySource(request.projectRoot, top, given));
  const undo = new Undo();
  try {
    let made: string | undefined;
    try {
      made = mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch (error) {
      throw new LoopxError(`--worktree: cannot create ${dir}: ${fsReason(error)}`);
    }
    if (made !== undefined) undo.add(() => removeEmptyUpTo(dir, made!));
    undo.add(() => git(top, ["branch", "-D", branch], env));
    undo.add(() => rmSync(path, { recursive: true, force: true }));
    undo.add(() => git(top, ["worktree", "remove", "--force", "--force", path], env));
    // The branch first, then its checkout: each can be tried again when a concurrent git gets in
    // the way (worktree/git.ts), which `worktree add -b` cannot (a failed try leaves the branch).
    await gitOk(top, ["branch", "--no-track", branch, head], env, `--worktree: cannot create branch ${branch}`);
    await gitOk(top, ["worktree", "add", "-q", path, branch], env, `--worktree: git worktree add ${path} failed`);
    const { copied, uncommitted, warnings } = await fillWorktree(top, path, rel, copies, env);
    return { info: { name, branch, path, base: head, repo: top, copied, ...(mergeInto !== undefined ? { mergeInto } : {}) }, projectRoot: rel === "" ? path : join(path, rel), uncommitted, warnings };
  } catch (error) {
    await undo.run();
    throw error;
  }
}

/** A --worktree-copy path, absolute, checked: it exists and is inside the repository. */
function copySource(projectRoot: string, top: string, given: string): string {
  const source = isAbsolute(given) ? given : resolve(projectRoot, given);
  if (!existsSync(source)) throw new LoopxError(`--worktree-copy ${given}: ${source} does not exist`);
  const inside = relative(realpathSync(top), realpathSync(source));
  if (inside === "" || inside === ".." || inside.startsWith(`..${sep}`) || isAbsolute(inside)) {
    throw new LoopxError(`--worktree-copy ${given}: only paths inside the repository (${top}) can be copied, and not all of it`);
  }
  return inside;
}

/** Removes `dir` and its parents up to `made` (the first one this run created), while empty. */
function removeEmptyUpTo(dir: string, made: string): void {
  for (let at = dir; at.length >= made.length; at = dirname(at)) {
    try {
      rmdirSync(at);
    } catch {
      return;
    }
  }
}
