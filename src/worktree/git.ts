import { setTimeout as sleep } from "node:timers/promises";
import { execFile } from "node:child_process";
import { LoopxError } from "../core/errors.js";
import type { Env } from "../core/env.js";

/**
 * git, run as a child process (loopx has no git library): every call names its directory (`-C`),
 * gets the caller's environment without the variables that would point git at another repository
 * (a loopx started from a git hook inherits GIT_DIR / GIT_INDEX_FILE), and never prompts.
 */


export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Variables that make `git -C <dir>` look somewhere else than <dir>. */
const REDIRECTING = ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY", "GIT_NAMESPACE", "GIT_PREFIX"];

function gitEnv(env: Env): Env {
  const clean: Env = { ...env, GIT_TERMINAL_PROMPT: "0", GIT_OPTIONAL_LOCKS: "0", LC_ALL: "C" };
  for (const name of REDIRECTING) delete clean[name];
  return clean;
}

/**
 * What git says when another git process is half-way through changing the repository: a worktree
 * whose administrative directory is being made (its commondir/gitdir not written yet: `git
 * worktree list` fails with "failed to read .git/worktrees/<name>/commondir", seen with three
 * `--worktree` runs started together), or a lock file held. Such a call is tried again.
 */
const CONCURRENT_GIT = /failed to read .*\/worktrees\/[^/\s]+\/(commondir|gitdir)|Unable to create '[^']+\.lock': File exists/;

/** Tries at 50, 100, 200, 400 and 800 ms after the first: 1.55 s in all, then gives the failure. */
const RETRIES = 5;

/**
 * Runs `git -C dir ...args`; a missing git is a LoopxError, any other outcome is returned. A
 * failure caused by a concurrent git (CONCURRENT_GIT) is tried again before it is returned.
 */
export async function git(dir: string, args: string[], env: Env): Promise<GitResult> {
  let result = await gitOnce(dir, args, env);
  for (let retry = 0; retry < RETRIES && result.code !== 0 && CONCURRENT_GIT.test(result.stderr); retry++) {
    await sleep(50 * 2 ** retry);
    result = await gitOnce(dir, args, env);
  }
  return result;
}

function gitOnce(dir: string, args: string[], env: Env): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    execFile("git", ["-C", dir, ...args], { env: gitEnv(env), maxBuffer: 64 * 1024 * 1024, encoding: "utf8" }, (error, stdout, stderr) => {
      const code = (error as NodeJS.ErrnoException | null)?.code;
      if (code === "ENOENT") return reject(new LoopxError("--worktree needs git, and git is not on PATH"));
      if (error && typeof code !== "number") return reject(new LoopxError(`cannot run git: ${error.message.split("\n")[0]}`));
      resolve({ code: typeof code === "number" ? code : 0, stdout, stderr });
    });
  });
}

/** The first meaningful line of git's stderr, without its "fatal: " / "error: " prefix. */
export function gitReason(result: GitResult): string {
  const line = result.stderr.split("\n").find((text) => text.trim() !== "" && !text.startsWith("hint:")) ?? `git exited with ${result.code}`;
  return line.replace(/^(fatal|error): /, "").trim();
}

/** `git -C dir ...args`, its stdout; a failure is one LoopxError line starting with `what`. */
export async function gitOk(dir: string, args: string[], env: Env, what: string): Promise<string> {
  const result = await git(dir, args, env);
  if (result.code !== 0) throw new LoopxError(`${what}: ${gitReason(result)}`);
  return result.stdout;
}
