import { existsSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fsReason, LoopxError } from "../core/errors.js";
import { copyTree } from "./copy.js";
import { excludeCopies } from "./exclude.js";
import { git, gitOk } from "./git.js";
import type { Env } from "../core/env.js";

/**
 * What a new worktree gets after its checkout, and what it lacks: the copies (`.loopx/`'s untracked
 * entries, --worktree-copy paths), ignored in that worktree only (exclude.ts); the main tree's
 * uncommitted changes it does not have; the submodules git leaves empty in it.
 */

export interface Filled {
  /** Copied paths, relative to the repository's top. */
  copied: string[];
  /** Tracked paths of the main tree with uncommitted changes (not carried over), relative to the top. */
  uncommitted: string[];
  /** One line each, for the run's stderr. */
  warnings: string[];
}

export async function fillWorktree(top: string, path: string, rel: string, named: string[], env: Env): Promise<Filled> {
  const loopxCopies = await copyUntracked(top, path, rel, env);
  const copied = [...loopxCopies];
  const untrackedNamed: string[] = [];
  for (const inside of named) {
    copied.push(copyNamed(top, path, inside));
    // Tracked files stay committable (a named copy carries their uncommitted state over on purpose).
    const tracked = await gitOk(top, ["ls-files", "-z", "--", inside], env, "--worktree: cannot list the tracked files of a copied path");
    if (tracked === "") untrackedNamed.push(inside);
  }
  const warnings: string[] = [];
  const excluded = await excludeCopies(top, path, [...loopxCopies, ...untrackedNamed], env);
  if (excluded !== undefined) warnings.push(excluded);
  const empty = await emptySubmodules(top, path, env);
  if (empty.length > 0) {
    warnings.push(`submodules are not checked out in the worktree (${empty.join(", ")}): git -C ${path} submodule update --init gets them`);
  }
  const status = await git(top, ["status", "--porcelain", "-z", "--untracked-files=no", "--no-renames"], env);
  const changed = status.code === 0 ? status.stdout.split("\0").filter((entry) => entry.length > 3).map((entry) => entry.slice(3)) : [];
  // What --worktree-copy named is carried over, changes and all.
  const uncommitted = changed.filter((file) => !named.some((inside) => file === inside || file.startsWith(`${inside}/`)));
  return { copied, uncommitted, warnings };
}

/** Submodules checked out in the main tree, which `git worktree add` leaves empty in the worktree. */
async function emptySubmodules(top: string, path: string, env: Env): Promise<string[]> {
  if (!existsSync(join(path, ".gitmodules"))) return [];
  const listed = await git(path, ["config", "--file", ".gitmodules", "--get-regexp", "^submodule\\..*\\.path$"], env);
  if (listed.code !== 0) return [];
  const paths = listed.stdout.split("\n").map((line) => line.slice(line.indexOf(" ") + 1)).filter((sub) => sub !== "");
  return paths.filter((sub) => existsSync(join(top, sub, ".git")) && !existsSync(join(path, sub, ".git")));
}

function copyNamed(top: string, path: string, inside: string): string {
  const target = join(path, inside);
  try {
    rmSync(target, { recursive: true, force: true });
    mkdirSync(dirname(target), { recursive: true });
    copyTree(join(top, inside), target);
  } catch (error) {
    throw new LoopxError(`--worktree-copy: cannot copy ${inside} into ${path}: ${fsReason(error)}`);
  }
  return inside;
}

/** The project's `.loopx/` entries git does not track (untracked or ignored), copied in. */
async function copyUntracked(top: string, path: string, rel: string, env: Env): Promise<string[]> {
  const loopx = rel === "" ? ".loopx" : join(rel, ".loopx");
  const listed = await gitOk(top, ["ls-files", "-z", "--others", "--directory", "--", loopx], env, "--worktree: cannot list the untracked files of .loopx/");
  const copied: string[] = [];
  for (const entry of listed.split("\0")) {
    if (entry === "") continue;
    const inside = entry.replace(/\/$/, "");
    try {
      mkdirSync(dirname(join(path, inside)), { recursive: true });
      copyTree(join(top, inside), join(path, inside));
    } catch (error) {
      throw new LoopxError(`--worktree: cannot copy ${inside} into ${path}: ${fsReason(error)}`);
    }
    copied.push(inside);
  }
  return copied;
}
