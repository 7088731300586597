import { chmodSync, lstatSync, mkdirSync, readdirSync, rmdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fsReason, LoopxError } from "../core/errors.js";
import { listRecordIds, recordsDir } from "../records/store.js";
import { otherOwner } from "../os/own-user.js";

/**
 * Where a run's control channel lives (loopx's own addition): a Unix socket `<run id>.sock` in a
 * directory only its user can enter (mode 0700, owned by that user) — nobody else can connect to
 * it, list it or learn what runs. The first of these whose socket path fits in a socket address
 * (sun_path: 108 bytes on Linux, 104 on macOS, the terminating NUL included):
 *   $XDG_STATE_HOME/loopx/control/   next to the run records (default ~/.local/state/loopx/control/)
 *   $XDG_RUNTIME_DIR/loopx/          when XDG_RUNTIME_DIR is set
 *   <os tmpdir>/loopx-<uid>/
 * A client looks in all of them, in the same order.
 */

const SUN_PATH_BYTES = process.platform === "linux" ? 108 : 104;

export function controlDirs(env: Record<string, string | undefined>): string[] {
  const dirs = [join(dirname(recordsDir(env)), "control")];
  const runtimeDir = env.XDG_RUNTIME_DIR;
  if (runtimeDir?.startsWith("/")) dirs.push(join(runtimeDir, "loopx"));
  dirs.push(join(tmpdir(), `loopx-${process.getuid?.() ?? "user"}`));
  return dirs;
}

export function socketName(runId: string): string {
  return `${runId}.sock`;
}

/** True when `path` fits in a Unix socket address. */
export function fitsSocketAddress(path: string): boolean {
  return Buffer.byteLength(path) < SUN_PATH_BYTES;
}

/**
 * Makes `dir` (and its parents) if missing and checks that it is private: a real directory (not a
 * symlink) owned by this user, mode 0700 (a looser mode of our own directory is tightened).
 * Returns the first directory it made, if it made any (see removeMadeDirs).
 */
export function privateDir(dir: string): string | undefined {
  try {
    const made = mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stat = lstatSync(dir);
    if (!stat.isDirectory()) throw new LoopxError(`${dir} is not a directory`);
    if (otherOwner(stat) !== undefined) throw new LoopxError(`${dir} belongs to another user (uid ${stat.uid})`);
    if ((stat.mode & 0o077) !== 0) chmodSync(dir, 0o700);
    return made;
  } catch (error) {
    if (error instanceof LoopxError) throw error;
    throw new LoopxError(`cannot use ${dir}: ${fsReason(error)}`);
  }
}

/**
 * Removes `dir` and its parents up to `made` (what privateDir made) while they are empty: a run
 * with records off leaves nothing in the state directory. A directory another run uses is not
 * empty and stays.
 */
export function removeMadeDirs(dir: string, made: string | undefined): void {
  if (made === undefined) return;
  for (let at = dir; at.length >= made.length; at = dirname(at)) {
    try {
      rmdirSync(at);
    } catch {
      return;
    }
  }
}

/** The ids of the sockets in `dir`; a directory that cannot be read is reported through `unreadable`. */
export function socketIds(dir: string, unreadable: string[] = []): string[] {
  try {
    return readdirSync(dir)
      .filter((name) => name.endsWith(".sock"))
      .map((name) => name.slice(0, -5));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ENOTDIR") unreadable.push(`${dir}: ${fsReason(error)}`);
    return [];
  }
}

/**
 * Every run id a run id prefix can name (`loopx runs stop <prefix>`): the runs with a control
 * channel and the recorded ones. Directories that cannot be read are reported through `unreadable`.
 */
export function knownRunIds(env: Record<string, string | undefined>, unreadable: string[] = []): Set<string> {
  const ids = new Set<string>();
  for (const dir of controlDirs(env)) for (const id of socketIds(dir, unreadable)) ids.add(id);
  try {
    for (const id of listRecordIds(recordsDir(env))) ids.add(id);
  } catch (error) {
    unreadable.push(`${recordsDir(env)}: ${fsReason(error)}`);
  }
  return ids;
}
