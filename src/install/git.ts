import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { LoopxError } from "../core/errors.js";
import type { Cleanup } from "./cleanup.js";
import { displayUrl } from "./source.js";

/** The line of git's stderr that says what went wrong (`fatal: ...` preferred), without the prefix. */
function gitReason(stderr: string): string {
  const lines = stderr
    .split(/\r?\n|\r/)
    .map((line) => line.trim())
    .filter((line) => line !== "");
  const fatal = lines.find((line) => /^(fatal|error):/.test(line)) ?? lines[0];
  return fatal ? fatal.replace(/^(fatal|error):\s*/, "") : "no error message from git";
}

/**
 * `git clone --depth 1` of `url` into `dest` (which must not exist), then removes `dest/.git`.
 * Never interactive: stdin is closed, terminal prompts and credential-manager dialogs are off,
 * and git runs in its own session (no controlling terminal, so ssh cannot prompt either).
 */
export async function cloneRepository(url: string, dest: string, cleanup: Cleanup): Promise<void> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    GIT_TERMINAL_PROMPT: "0",
    GCM_INTERACTIVE: "never",
    // A stalled server must not hang the install forever (user settings win).
    GIT_HTTP_LOW_SPEED_LIMIT: process.env["GIT_HTTP_LOW_SPEED_LIMIT"] ?? "1",
    GIT_HTTP_LOW_SPEED_TIME: process.env["GIT_HTTP_LOW_SPEED_TIME"] ?? "60",
  };
  const shown = displayUrl(url);
  await new Promise<void>((resolve, reject) => {
    let stderr = "";
    const child = spawn("git", ["clone", "--depth", "1", "--quiet", "--no-tags", "--", url, dest], {
      env,
      stdio: ["ignore", "ignore", "pipe"],
      detached: true,
    });
    cleanup.addChild(child);
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      if (stderr.length < 64 * 1024) stderr += chunk;
    });
    child.on("error", (error: NodeJS.ErrnoException) => {
      cleanup.removeChild(child);
      reject(
        new LoopxError(
          error.code === "ENOENT"
            ? `cannot clone ${shown}: git is not installed (or not on PATH); it is needed for git sources`
            : `cannot clone ${shown}: cannot run git (${error.message})`,
        ),
      );
    });
    child.on("close", (code, signal) => {
      cleanup.removeChild(child);
      if (code === 0) resolve();
      else reject(new LoopxError(`git clone of ${shown} failed${signal ? ` (killed by ${signal})` : ""}: ${gitReason(stderr)}`));
    });
  });
  rmSync(join(dest, ".git"), { recursive: true, force: true });
}
