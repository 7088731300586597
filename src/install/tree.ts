import { chmodSync, copyFileSync, constants, lstatSync, mkdirSync, readdirSync, readlinkSync, realpathSync, renameSync, symlinkSync } from "node:fs";
import { dirname, isAbsolute, join, posix, relative, sep } from "node:path";
import { otherOwner } from "../os/own-user.js";

/** True if `path` is `root` or inside it (both absolute, normalized). */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

function kindName(mode: number): string {
  const type = mode & constants.S_IFMT;
  if (type === constants.S_IFCHR) return "a character device";
  if (type === constants.S_IFBLK) return "a block device";
  if (type === constants.S_IFIFO) return "a FIFO";
  if (type === constants.S_IFSOCK) return "a socket";
  return "an unsupported file type";
}

function realDir(dir: string): string {
  return realpathSync.native(dir);
}

/**
 * Follows symlink target `target` from directory `from` (both real) one component at a time,
 * resolving every existing component with realpath (so links chained through other links are
 * followed as the kernel would), and reports whether every step stays inside `root`. Components
 * that do not exist (a dangling link) are taken literally.
 */
function staysInside(root: string, from: string, target: string): boolean {
  let current = from;
  for (const component of target.split("/")) {
    if (component === "" || component === ".") continue;
    if (component === "..") current = dirname(current);
    else {
      const next = join(current, component);
      try {
        current = realpathSync.native(next);
      } catch {
        current = next; // missing, or a loop: literal
      }
    }
    if (!isInside(root, current)) return false;
  }
  return true;
}

/**
 * Entries under `root` that must not be installed, each as a one-line description naming the
 * entry (relative to `root`): symlinks whose target is absolute or resolves outside `root`
 * (lexically, and once every link on the way is followed), and anything that is not a regular
 * file, directory or symlink (devices, FIFOs, sockets). Symlinked directories are not descended.
 */
export function unsafeEntries(root: string, scope = "the workflow"): string[] {
  const realRoot = realpathSync.native(root);
  const problems: string[] = [];
  const walk = (dir: string, rel: string): void => withOwnerAccess(dir, lstatSync(dir), 0o500, () => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const relPath = rel === "" ? name : `${rel}/${name}`;
      const stat = lstatSync(path);
      if (stat.isDirectory()) {
        walk(path, relPath);
      } else if (stat.isSymbolicLink()) {
        const target = readlinkSync(path);
        const lexical = posix.normalize(posix.join(posix.dirname(relPath), target));
        const escapes = isAbsolute(target) || lexical === ".." || lexical.startsWith("../") || !staysInside(realRoot, realDir(dir), target);
        if (escapes) problems.push(`symlink ${JSON.stringify(relPath)} points outside ${scope} (-> ${JSON.stringify(target)})`);
      } else if (!stat.isFile()) {
        problems.push(`${JSON.stringify(relPath)} is ${kindName(stat.mode)}`);
      }
    }
  });
  walk(root, "");
  return problems;
}

/**
 * Runs `action` on `path` with the owner permission `bits` (r, or r+x for a directory) added for
 * the duration when `path` lacks them and belongs to this process's user — as every entry of an
 * extracted tarball or a clone in loopx's own temp directory does. A mode-000 file in a source
 * (spec §3.2, §10.6: an unreadable package.json degrades the version check, the install proceeds)
 * is copied with its mode, readable or not. The mode is put back afterwards.
 */
function withOwnerAccess(path: string, stat: { mode: number; uid: number }, bits: number, action: () => void): void {
  const mode = stat.mode & 0o7777;
  if ((mode & bits) === bits || otherOwner(stat) !== undefined) return action();
  chmodSync(path, mode | bits);
  try {
    action();
  } finally {
    chmodSync(path, mode);
  }
}

/** The mode an installed entry gets: its permission bits, never setuid/setgid/sticky; a directory also owner rwx. */
function installedMode(stat: { mode: number; isDirectory(): boolean }): number {
  return stat.isDirectory() ? (stat.mode & 0o777) | 0o700 : stat.mode & 0o777;
}

/**
 * Copies the tree at `src` to `dest` (which must not exist): directories and regular files with
 * their permission bits (never setuid/setgid/sticky), symlinks as symlinks with the same target.
 * Anything else is an error; callers check {@link unsafeEntries} first.
 */
export function copyTree(src: string, dest: string): void {
  const stat = lstatSync(src);
  if (stat.isDirectory()) {
    mkdirSync(dest, { mode: 0o700 });
    withOwnerAccess(src, stat, 0o500, () => {
      for (const name of readdirSync(src)) copyTree(join(src, name), join(dest, name));
    });
    chmodSync(dest, installedMode(stat));
  } else if (stat.isSymbolicLink()) {
    symlinkSync(readlinkSync(src), dest);
  } else if (stat.isFile()) {
    withOwnerAccess(src, stat, 0o400, () => copyFileSync(src, dest, constants.COPYFILE_EXCL));
    chmodSync(dest, installedMode(stat));
  } else {
    throw new Error(`${src} is ${kindName(stat.mode)}`);
  }
}

/**
 * What {@link copyTree} makes, by rename: moves the tree at `src` to `dest` (which must not exist)
 * and then gives every entry the mode and link count a copy would have — directories their mode
 * plus owner rwx, files their mode without setuid/setgid/sticky, and a file hard-linked within the
 * tree a file of its own. For `src` in loopx's own temp directory only (it is gone afterwards). A
 * copy writes every file twice and the temp directory's removal unlinks each once more: for an
 * archive of 100,000 entries that was two thirds of the install. False when `dest` is on another
 * file system (EXDEV): nothing moved, the caller copies. A failure while settling (a path too long
 * under `dest`, as a copy would have met) moves the tree back before it is thrown.
 */
export function moveTree(src: string, dest: string): boolean {
  try {
    renameSync(src, dest);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EXDEV") return false;
    throw error;
  }
  try {
    settleEntry(dest, join(dirname(dest), ".copying"));
  } catch (error) {
    // Back where it came from (a path too long under .loopx/ may not be under TMPDIR): the caller
    // removes the staging directory, and the temp directory's removal takes the tree.
    try {
      renameSync(dest, src);
    } catch {
      // the removal of the staging directory is left to try
    }
    throw error;
  }
  return true;
}

/** Settles `path` as copyTree would have made it; `scratch`, a free path outside the tree, holds a hard link's own copy while it is written. */
function settleEntry(path: string, scratch: string): void {
  const stat = lstatSync(path);
  const settled = installedMode(stat);
  if (stat.isDirectory()) {
    if ((stat.mode & 0o7777) !== settled) chmodSync(path, settled);
    for (const name of readdirSync(path)) settleEntry(join(path, name), scratch);
  } else if (stat.isFile()) {
    if (stat.nlink > 1) {
      // A copy of its own, as copyTree makes one (written beside it, then renamed over it).
      withOwnerAccess(path, stat, 0o400, () => copyFileSync(path, scratch, constants.COPYFILE_EXCL));
      renameSync(scratch, path);
    }
    if ((stat.mode & 0o7777) !== settled || stat.nlink > 1) chmodSync(path, settled);
  } else if (!stat.isSymbolicLink()) {
    throw new Error(`${path} is ${kindName(stat.mode)}`);
  }
}
