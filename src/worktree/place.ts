import { nodeCrypto } from "../os/builtins.js";
import { basename, join } from "node:path";
import { LoopxError } from "../core/errors.js";
import { loopxDir } from "../os/xdg.js";

/**
 * Where a run's worktree lives and what it is called. Worktrees live under
 * `$XDG_STATE_HOME/loopx/worktrees/<repo>-<hash>/<name>` (default ~/.local/state/loopx/worktrees/):
 * outside every working tree (nothing new in the project, nor beside it, where the parent may be
 * $HOME, read-only or another repository), always writable by the user, one directory per
 * repository (hash of its git directory, so that two clones named alike never meet) and beside
 * loopx's run records, which name them.
 */

/** The branch of worktree `name`. */
export function worktreeBranch(name: string): string {
  return `loopx/${name}`;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** A name is a safe directory name and a valid branch component: letters, digits, '.', '_', '-'. */
export function checkWorktreeName(name: string): string {
  if (!NAME.test(name) || name.includes("..") || name.endsWith(".lock") || name.endsWith(".")) {
    throw new LoopxError(`invalid worktree name ${JSON.stringify(name)}: use letters, digits, '.', '_' and '-' (at most 64, starting with a letter or digit)`);
  }
  return name;
}

/** The directory of one repository's worktrees; `commonDir` is its git directory (absolute). */
export function repositoryWorktrees(env: Record<string, string | undefined>, top: string, commonDir: string): string {
  const hash = nodeCrypto().createHash("sha256").update(commonDir).digest("hex").slice(0, 10);
  return join(loopxDir("state", env), "worktrees", `${basename(top).replace(/[^A-Za-z0-9._-]/g, "_")}-${hash}`);
}
