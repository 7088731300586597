import { lstatSync, readdirSync } from "node:fs";
import { join, posix } from "node:path";
import * as tar from "tar";
import { LoopxError } from "../core/errors.js";
import { unsafeEntries } from "./tree.js";

const ALLOWED_TYPES = new Set(["File", "OldFile", "ContiguousFile", "Directory", "GNUDumpDir", "SymbolicLink", "Link"]);

function describeType(type: string): string {
  switch (type) {
    case "CharacterDevice":
      return "a character device";
    case "BlockDevice":
      return "a block device";
    case "FIFO":
      return "a FIFO";
    default:
      return `of unsupported type ${type}`;
  }
}

/**
 * Checks archive entries as they are read, before anything is written: refuses `..` segments,
 * absolute paths, symlinks whose target leaves the archive, hardlinks to anything outside it,
 * entries placed under (or over) an earlier symlink, and device files/FIFOs. `check` returns the
 * reason an entry is refused, or undefined.
 */
export class EntryChecker {
  private readonly symlinks = new Set<string>();

  check(path: string, type: string, linkpath: string | undefined): string | undefined {
    const entry = JSON.stringify(path);
    if (!ALLOWED_TYPES.has(type)) return `entry ${entry} is ${describeType(type)}`;
    if (path === "") return "an entry has an empty path";
    if (path.startsWith("/")) return `entry ${entry} has an absolute path`;
    if (path.split("/").includes("..")) return `entry ${entry} has a ".." path segment`;
    const normalized = posix.normalize(path).replace(/\/+$/, "");
    const parts = normalized.split("/");
    for (let i = 1; i < parts.length; i++) {
      const prefix = parts.slice(0, i).join("/");
      if (this.symlinks.has(prefix)) return `entry ${entry} lies inside symlink ${JSON.stringify(prefix)}`;
    }
    if (this.symlinks.has(normalized)) return `entry ${entry} would replace the symlink of the same name`;
    if (type === "SymbolicLink") {
      const target = linkpath ?? "";
      if (target === "") return `symlink ${entry} has an empty target`;
      if (target.startsWith("/")) return `symlink ${entry} points to an absolute path (${JSON.stringify(target)})`;
      const resolved = posix.normalize(posix.join(posix.dirname(normalized), target));
      if (resolved === ".." || resolved.startsWith("../")) return `symlink ${entry} points outside the archive (-> ${JSON.stringify(target)})`;
      this.symlinks.add(normalized);
    } else if (type === "Link") {
      const target = linkpath ?? "";
      if (target === "") return `hardlink ${entry} has an empty target`;
      if (target.startsWith("/")) return `hardlink ${entry} points to an absolute path (${JSON.stringify(target)})`;
      if (target.split("/").includes("..")) return `hardlink ${entry} points outside the archive (-> ${JSON.stringify(target)})`;
      const targetParts = posix.normalize(target).split("/");
      for (let i = 1; i <= targetParts.length; i++) {
        const prefix = targetParts.slice(0, i).join("/");
        if (this.symlinks.has(prefix)) return `hardlink ${entry} points through symlink ${JSON.stringify(prefix)}`;
      }
    }
    return undefined;
  }
}

function archiveError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^TAR_BAD_ARCHIVE:\s*/, "").replace(/\s*[\r\n]+\s*/g, " ");
}

/**
 * Extracts the gzipped tarball `file` into `dest` (an empty directory) with node-tar. The whole
 * archive is validated by a listing pass first, so a hostile archive writes nothing at all; the
 * extraction pass applies the same checks again and runs in strict mode (any tar warning is an
 * error). Finally the extracted tree is checked for symlinks that escape through other links.
 */
export async function extractTarball(file: string, dest: string, shown: string): Promise<void> {
  let refused: string | undefined;
  const listChecker = new EntryChecker();
  try {
    await tar.t({
      file,
      strict: true,
      onReadEntry: (entry) => {
        refused ??= listChecker.check(entry.path, entry.type, entry.linkpath);
      },
    });
  } catch (error) {
    throw new LoopxError(`cannot extract ${shown}: not a valid .tar.gz archive (${archiveError(error)})`);
  }
  if (refused) throw new LoopxError(`refusing to install ${shown}: ${refused}`);

  const extractChecker = new EntryChecker();
  try {
    await tar.x({
      file,
      cwd: dest,
      strict: true,
      preserveOwner: false,
      filter: (path, entry) => {
        const reason = extractChecker.check(path, (entry as tar.ReadEntry).type, (entry as tar.ReadEntry).linkpath);
        refused ??= reason;
        return reason === undefined;
      },
    });
  } catch (error) {
    throw new LoopxError(`cannot extract ${shown}: ${archiveError(error)}`);
  }
  if (refused) throw new LoopxError(`refusing to install ${shown}: ${refused}`);

  const unsafe = unsafeEntries(dest, "the archive");
  if (unsafe.length > 0) throw new LoopxError(`refusing to install ${shown}: ${unsafe.join("; ")}`);
}

/** The source root of an extracted archive: its single top-level directory, if that is all there is. */
export function stripWrapper(dir: string): string {
  const entries = readdirSync(dir);
  if (entries.length === 1) {
    const only = join(dir, entries[0]!);
    if (lstatSync(only).isDirectory()) return only;
  }
  return dir;
}
