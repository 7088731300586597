import { readdirSync, statSync, type Dirent } from "node:fs";
import { join } from "node:path";
import * as core from "../core/discovery.js";
import { fsReason } from "../core/errors.js";

/** What an entry is once symlinks are followed: "file", "dir", or undefined (broken link, other). */
function kindOf(parent: string, entry: Dirent): "file" | "dir" | undefined {
  if (entry.isFile()) return "file";
  if (entry.isDirectory()) return "dir";
  if (!entry.isSymbolicLink()) return undefined;
  try {
    const stat = statSync(join(parent, entry.name));
    return stat.isFile() ? "file" : stat.isDirectory() ? "dir" : undefined;
  } catch {
    return undefined;
  }
}

/** Discovery's view of the real file system (core/discovery.ts makes every decision). */
export const fsDirectoryReader: core.DirectoryReader = {
  list(dir) {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return undefined;
    }
    return entries.map((entry) => ({ name: entry.name, kind: kindOf(dir, entry) }));
  },
  unreadable(dir) {
    try {
      readdirSync(dir);
      return undefined;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "ENOENT" ? undefined : fsReason(error);
    }
  },
};

/** Scans `<projectRoot>/.loopx/` on disk (spec §5.1). Never throws; problems are reported in `issues`. */
export function discover(projectRoot: string): core.Discovery {
  return core.discover(fsDirectoryReader, projectRoot);
}

/** The script files directly inside `dir` on disk (runtime discovery and the install-time checks). */
export function scanScriptFiles(dir: string): ReturnType<typeof core.scanScriptFiles> {
  return core.scanScriptFiles(fsDirectoryReader, dir);
}

/** A directory is a workflow by structure when it has at least one top-level script file. */
export function isWorkflowDir(dir: string): boolean {
  return core.isWorkflowDir(fsDirectoryReader, dir);
}
