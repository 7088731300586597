import { chmodSync, lstatSync, mkdtempSync, readdirSync, renameSync, rmdirSync, rmSync, unlinkSync, type BigIntStats } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fsReason, LoopxError } from "../core/errors.js";
import type { RunControls, RunPart } from "../core/run-part.js";

/**
 * LOOPX_TMPDIR (loopx's own addition): a private scratch directory for one run. Created after
 * validation, just before the first script starts (under os.tmpdir(), `loopx-*`, mode 0700), given
 * to every script of the run, and removed however the run ends — safely: a symlink is never
 * followed, and a path that no longer is the directory created here (another directory, a file, a
 * FIFO) is left alone with one warning. When loopx itself is killed, the run's guardian removes it
 * (guardian/part.ts) by the same rules.
 */

function kindOf(stat: BigIntStats): string {
  if (stat.isFile()) return "a file";
  if (stat.isFIFO()) return "a FIFO";
  if (stat.isSocket()) return "a socket";
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return "a device";
  return "not a directory";
}

/** Directories deeper than this many bytes of path are moved up to the top before being emptied. */
const DEEP_PATH_BYTES = 2048;

/**
 * Removes the tree under `root` (a real directory) without following any symlink: symlinks are
 * unlinked, directories are emptied then removed, directories without owner rwx get it first.
 * Trees deeper than PATH_MAX are handled by moving deep directories up under `root` (Node 20's
 * rmSync gives up with ENAMETOOLONG there). Throws the first error it cannot get past.
 */
function removeTree(root: string): void {
  let moved = 0;
  const stack: { path: string; emptied: boolean }[] = [{ path: root, emptied: false }];
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if (top.emptied) {
      rmdirSync(top.path);
      stack.pop();
      continue;
    }
    top.emptied = true;
    for (const name of readdirSync(top.path)) {
      let path = join(top.path, name);
      const stat = lstatSync(path);
      if (!stat.isDirectory()) {
        unlinkSync(path);
        continue;
      }
      if (Buffer.byteLength(path) > DEEP_PATH_BYTES) {
        const shallow = join(root, `.loopx-deep-${moved++}`);
        renameSync(path, shallow);
        path = shallow;
      }
      if ((stat.mode & 0o700) !== 0o700) chmodSync(path, 0o700);
      stack.push({ path, emptied: false });
    }
  }
}

/** The run's scratch directory and what tells it from any other one at the same path later. */
export interface ScratchDir {
  path: string;
  /** Device, inode and (where the filesystem records it) birth time: inodes are reused at once. */
  dev: bigint;
  ino: bigint;
  birth: bigint;
}

/**
 * Removes the scratch directory `dir` if the path still is that directory, never following a
 * symlink: a symlink put in its place is unlinked (not its target), anything else (another
 * directory, a file, a FIFO) is left alone; each case is one warning. Already gone: nothing to do.
 * Used by the run's own ending and by its guardian (after loopx itself is gone).
 */
export function removeScratchDir(dir: ScratchDir, warn: (message: string) => void): void {
  const { path } = dir;
  let stat: BigIntStats;
  try {
    stat = lstatSync(path, { bigint: true });
  } catch (error) {
    // Already gone (a script removed it): nothing to clean up.
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") warn(`could not remove LOOPX_TMPDIR ${path}: ${fsReason(error)}`);
    return;
  }
  if (stat.isSymbolicLink()) {
    try {
      unlinkSync(path);
      warn(`LOOPX_TMPDIR ${path} was replaced by a symlink during the run: removed the link, not its target`);
    } catch (error) {
      warn(`LOOPX_TMPDIR ${path} was replaced by a symlink during the run; could not remove the link: ${fsReason(error)}`);
    }
    return;
  }
  if (!stat.isDirectory()) {
    warn(`LOOPX_TMPDIR ${path} was replaced during the run by ${kindOf(stat)}: left it in place`);
    return;
  }
  if (stat.dev !== dir.dev || stat.ino !== dir.ino || (dir.birth !== 0n && stat.birthtimeNs !== dir.birth)) {
    warn(`LOOPX_TMPDIR ${path} was replaced during the run by another directory: left it in place`);
    return;
  }
  try {
    // Native where the runtime has it (Bun's handles any depth); neither runtime follows symlinks.
    rmSync(path, { recursive: true, force: true });
  } catch {
    try {
      removeTree(path);
    } catch (error) {
      warn(`could not remove LOOPX_TMPDIR ${path}: ${fsReason(error)}`);
    }
  }
}

export class TmpdirPart implements RunPart {
  private dir: ScratchDir | undefined;
  private controls: RunControls | undefined;

  /** The directory this run created, until the run's ending has removed it. */
  get scratch(): ScratchDir | undefined {
    return this.dir;
  }

  begin(controls: RunControls): Record<string, string> {
    this.controls = controls;
    const parent = resolve(tmpdir());
    let path: string;
    try {
      path = mkdtempSync(join(parent, "loopx-"));
    } catch (error) {
      throw new LoopxError(`cannot create the run's temporary directory (LOOPX_TMPDIR) in ${parent}: ${fsReason(error)}`);
    }
    try {
      chmodSync(path, 0o700);
      const stat = lstatSync(path, { bigint: true });
      this.dir = { path, dev: stat.dev, ino: stat.ino, birth: stat.birthtimeNs };
    } catch (error) {
      try {
        rmdirSync(path);
      } catch {
        // Left behind: it was created here and is empty; nothing else can be done.
      }
      throw new LoopxError(`cannot set up the run's temporary directory (LOOPX_TMPDIR) ${path}: ${fsReason(error)}`);
    }
    return { LOOPX_TMPDIR: path };
  }

  end(): void {
    const dir = this.dir;
    if (dir === undefined) return;
    this.dir = undefined;
    removeScratchDir(dir, (message) => this.controls?.warn(message));
  }
}
