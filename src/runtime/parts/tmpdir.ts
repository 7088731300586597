import { chmodSync, lstatSync, mkdtempSync, readdirSync, renameSync, rmdirSync, rmSync, unlinkSync, type BigIntStats } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fsReason, LoopxError } from "../../core/errors.js";
import type { RunControls, RunPart } from "../../core/run-session.js";

/**
 * LOOPX_TMPDIR (loopx's own addition): a private scratch directory for one run. Created after
 * validation, just before the first script starts (under os.tmpdir(), `loopx-*`, mode 0700), given
 * to every script of the run, and removed however the run ends — safely: a symlink is never
 * followed, and a path that no longer is the directory created here (another directory, a file, a
 * FIFO) is left alone with one warning. Nothing can remove it after SIGKILL of loopx itself.
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

export class TmpdirPart implements RunPart {
  private path: string | undefined;
  /** Device, inode and (where the filesystem records it) birth time: inodes are reused at once. */
  private identity: { dev: bigint; ino: bigint; birth: bigint } | undefined;
  private controls: RunControls | undefined;

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
      this.identity = { dev: stat.dev, ino: stat.ino, birth: stat.birthtimeNs };
    } catch (error) {
      try {
        rmdirSync(path);
      } catch {
        // Left behind: it was created here and is empty; nothing else can be done.
      }
      throw new LoopxError(`cannot set up the run's temporary directory (LOOPX_TMPDIR) ${path}: ${fsReason(error)}`);
    }
    this.path = path;
    return { LOOPX_TMPDIR: path };
  }

  end(): void {
    const path = this.path;
    const identity = this.identity;
    if (path === undefined || identity === undefined) return;
    this.path = undefined;
    const warn = (message: string) => this.controls?.warn(message);
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
    if (stat.dev !== identity.dev || stat.ino !== identity.ino || (identity.birth !== 0n && stat.birthtimeNs !== identity.birth)) {
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
}
