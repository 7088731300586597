import { copyFileSync, constants, lstatSync, mkdirSync, readdirSync, readlinkSync, symlinkSync } from "node:fs";
import { join } from "node:path";

/**
 * Copies `from` to `to` (a file, a symlink or a directory tree): files are cloned where the file
 * system can (copy-on-write), symlinks are copied as links, and every `node_modules` directory
 * becomes a symlink to the original — dependencies are read, not written, and copying them would
 * make every start cost what `npm install` wrote.
 */
export function copyTree(from: string, to: string): void {
  const stat = lstatSync(from);
  if (stat.isSymbolicLink()) symlinkSync(readlinkSync(from), to);
  else if (stat.isDirectory()) {
    mkdirSync(to, { recursive: true, mode: stat.mode & 0o7777 });
    for (const entry of readdirSync(from)) {
      const source = join(from, entry);
      if (entry === "node_modules" && lstatSync(source).isDirectory()) symlinkSync(source, join(to, entry));
      else copyTree(source, join(to, entry));
    }
  } else if (stat.isFile()) copyFileSync(from, to, constants.COPYFILE_FICLONE);
}
