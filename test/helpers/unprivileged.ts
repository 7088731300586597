/** Permission cases: loopx run as an unprivileged user when the suite is root. */
import { spawnSync } from "node:child_process";
import { lstatSync } from "node:fs";
import { dirname } from "node:path";
import { BIN, BUN, REAL_BIN } from "./paths.js";
import { runCommand, type RunOptions, type RunResult } from "./process.js";
import type { Cli, Runtime } from "./runtimes.js";

// ---------------------------------------------------------------------------------------------
// Permission cases as an unprivileged user. Root reads a mode-000 file anyway, so when the suite
// runs as root (CI does) these cases drop privileges instead of skipping.

/** The uid/gid unprivileged runs use when the suite is root (nobody/nogroup). */
export const UNPRIVILEGED_ID = 65534;
export const IS_ROOT = process.getuid?.() === 0;

/**
 * Makes `paths` (trees this test created) belong to the unprivileged user, so a process running
 * as that user can write them; a no-op when the suite is not root (the files are already ours).
 */
export function giveToUnprivileged(...paths: string[]): void {
  if (!IS_ROOT) return;
  for (const path of paths) spawnSync("chown", ["-R", `${UNPRIVILEGED_ID}:${UNPRIVILEGED_ID}`, path], { stdio: "inherit" });
}

/** The first ancestor directory of `path` an unprivileged user cannot search, if any. */
function unsearchableAncestor(path: string): string | undefined {
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    const stat = lstatSync(dir);
    if ((stat.mode & 0o001) === 0 && stat.uid !== UNPRIVILEGED_ID) return dir;
    if (dir === "/") return undefined;
  }
}

/**
 * `exe args` as the unprivileged user: through `setpriv --reuid --regid --clear-groups` when the
 * suite is root, unchanged otherwise. Fails loudly (never skips) when the built CLI, the runtimes
 * or the test's own files sit below a directory that user cannot enter.
 */
export function unprivileged(exe: string, args: string[], ...mustReach: string[]): [string, string[]] {
  if (!IS_ROOT) return [exe, args];
  for (const path of [exe, REAL_BIN, BUN, ...mustReach]) {
    const blocked = unsearchableAncestor(path);
    if (blocked) throw new Error(`uid ${UNPRIVILEGED_ID} cannot reach ${path}: ${blocked} is not searchable by others`);
  }
  const id = String(UNPRIVILEGED_ID);
  return ["setpriv", ["--reuid", id, "--regid", id, "--clear-groups", "--", exe, ...args]];
}

/** Like {@link runLoopx}, but loopx runs as the unprivileged user (see {@link unprivileged}). */
export function runLoopxUnprivileged(runtime: Runtime, args: string[], options: RunOptions): Promise<RunResult> {
  return runCliUnprivileged({ name: runtime.name, exe: runtime.exe, prefix: [BIN] }, args, options);
}

/** Like {@link runCli}, but loopx runs as the unprivileged user (see {@link unprivileged}). */
function runCliUnprivileged(cli: Cli, args: string[], options: RunOptions): Promise<RunResult> {
  const [exe, argv] = unprivileged(cli.exe, [...cli.prefix, ...args], options.cwd);
  return runCommand(exe, argv, options);
}
