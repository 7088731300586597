/**
 * Replacing a file or a directory so that a crash at any moment leaves the old one or the new one,
 * never a half-written one: write beside it under a temp name, then rename(2) over it. Uses only
 * node:fs (through builtins, no node:crypto): the script loader writes its cache entries with it.
 */
import { fs } from "./builtins.js";

const { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeFileSync, writeSync } = fs;

/** A name beside `path` that no other writer picks (this pid, the time, randomness; created exclusively). */
function tempBeside(path: string): string {
  return `${path}.${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}.tmp`;
}

/**
 * Replaces the file `path` with `data`. `mode`: of a newly written file (default 0666 & ~umask);
 * `fsync`: flush the data to disk before the rename (for files that hold what the user wrote).
 * Throws what failed; the temp file is removed.
 */
export function writeFileAtomic(path: string, data: string, options: { mode?: number; fsync?: boolean } = {}): void {
  const temp = tempBeside(path);
  try {
    const fd = openSync(temp, "wx", options.mode ?? 0o666);
    try {
      writeSync(fd, data);
      if (options.fsync) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
  } catch (error) {
    try {
      rmSync(temp, { force: true });
    } catch {
      // A path under a regular file (ENOTDIR): no temp file was made; the first error says why.
    }
    throw error;
  }
}

/**
 * Replaces the directory `dir` with one holding exactly `files` (relative path → contents). A
 * directory cannot be renamed over a non-empty one, so the old one is removed first: for a moment
 * there is none, never a partial one. Throws what failed; the temp directory is removed.
 */
export function writeDirAtomic(dir: string, files: Record<string, string>): void {
  const temp = tempBeside(dir);
  try {
    for (const [relative, content] of Object.entries(files)) {
      const file = `${temp}/${relative}`;
      mkdirSync(file.slice(0, file.lastIndexOf("/")), { recursive: true });
      writeFileSync(file, content);
    }
    rmSync(dir, { recursive: true, force: true });
    renameSync(temp, dir);
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}
