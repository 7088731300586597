import { nodeCrypto } from "../os/builtins.js";
import { execFile } from "node:child_process";
import type { Hash } from "node:crypto";
import { createReadStream } from "node:fs";
import { lstat, readlink } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import type { WorkspaceState } from "../core/stall.js";
import type { Env } from "../core/env.js";

/**
 * A git project's workspace state, for the stall sensor (src/core/stall.ts): HEAD, and every path
 * `git status` lists — tracked files changed, added or deleted, untracked files not ignored — with
 * the digest of what is in it now. One `git status` (no rename detection) plus a read of each
 * listed file: what a clean tree costs is git's own stat of the index. The project's `.loopx/` is
 * left out: the workflows' own files are not the work.
 */


/** Variables that would point `git -C <dir>` at another repository (a loopx started from a git hook). */
const REDIRECTING = ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY", "GIT_NAMESPACE", "GIT_PREFIX"];

/** Files above this size are known by their size and modification time, not read. */
const READ_LIMIT = 64 * 1024 * 1024;

function run(dir: string, args: string[], env: Env): Promise<{ code: number; stdout: string }> {
  const clean: Env = { ...env, GIT_TERMINAL_PROMPT: "0", GIT_OPTIONAL_LOCKS: "0", LC_ALL: "C" };
  for (const name of REDIRECTING) delete clean[name];
  return new Promise((resolve) => {
    execFile("git", ["-C", dir, ...args], { env: clean, maxBuffer: 256 * 1024 * 1024, encoding: "utf8" }, (error, stdout) => {
      const code = (error as NodeJS.ErrnoException | null)?.code;
      resolve({ code: error ? (typeof code === "number" ? code : -1) : 0, stdout });
    });
  });
}

export interface Workspace {
  /** The work tree's top directory. */
  top: string;
  /** The project's `.loopx/`, relative to `top` (git's pathspec form). */
  loopxDir: string;
  env: Env;
}

/** The git work tree the project is in, or undefined when it is in none (or git is missing). */
export async function findWorkspace(projectRoot: string, env: Env): Promise<Workspace | undefined> {
  const found = await run(projectRoot, ["rev-parse", "--show-toplevel"], env);
  if (found.code !== 0) return undefined;
  const top = found.stdout.trim();
  const loopxDir = relative(top, join(projectRoot, ".loopx")).split(sep).join("/");
  return { top, loopxDir, env };
}

async function addFile(hash: Hash, path: string): Promise<void> {
  let stat;
  try {
    stat = await lstat(path);
  } catch {
    hash.update("\0gone");
    return;
  }
  if (stat.isSymbolicLink()) return void hash.update(`\0link ${await readlink(path).catch(() => "")}`);
  if (!stat.isFile()) return void hash.update(`\0${stat.isDirectory() ? "dir" : "other"}`);
  if (stat.size > READ_LIMIT) return void hash.update(`\0big ${stat.size} ${stat.mtimeMs}`);
  hash.update(`\0file ${stat.mode & 0o111 ? "x" : "-"} ${stat.size}\0`);
  await new Promise<void>((resolve) => {
    const stream = createReadStream(path);
    stream.on("data", (chunk) => hash.update(chunk));
    stream.on("error", () => resolve());
    stream.on("end", () => resolve());
  });
}

/** The workspace's state now; undefined when git cannot say (the tree was removed, say). */
export async function fingerprint(space: Workspace): Promise<WorkspaceState | undefined> {
  const [head, status] = await Promise.all([
    run(space.top, ["rev-parse", "-q", "--verify", "HEAD"], space.env),
    run(space.top, ["status", "--porcelain", "-z", "--untracked-files=all", "--no-renames", "--", ".", `:(exclude)${space.loopxDir}`], space.env),
  ]);
  if (status.code !== 0) return undefined;
  const commit = head.code === 0 ? head.stdout.trim() : "";
  const hash = nodeCrypto().createHash("sha256").update(`HEAD ${commit}\n`);
  let changed = 0;
  let untracked = 0;
  const entries = status.stdout.split("\0").filter((entry) => entry.length > 3).sort((a, b) => (a.slice(3) < b.slice(3) ? -1 : 1));
  // One file at a time: the digest must not depend on which read finishes first.
  for (const entry of entries) {
    if (entry.startsWith("??")) untracked++;
    else changed++;
    hash.update(`\n${entry}`);
    await addFile(hash, join(space.top, entry.slice(3)));
  }
  const parts = [commit ? `HEAD ${commit.slice(0, 12)}` : "no commit"];
  if (changed > 0) parts.push(`${changed} changed file${changed === 1 ? "" : "s"}`);
  if (untracked > 0) parts.push(`${untracked} untracked file${untracked === 1 ? "" : "s"}`);
  if (changed + untracked === 0) parts.push("clean");
  return { digest: hash.digest("hex"), words: parts.join(", ") };
}
