import { readdirSync, statSync, type Dirent } from "node:fs";
import { dirname, join } from "node:path";
import { isValidName, splitScriptFileName, type ScriptExtension } from "./names.js";

/** A script file found directly inside a workflow directory (spec §2.1, §5.1). */
export interface DiscoveredScript {
  name: string;
  ext: ScriptExtension;
  /** Path through `.loopx/` as discovered (symlinks are not resolved: names come from links). */
  path: string;
}

export interface DiscoveredWorkflow {
  name: string;
  dir: string;
  /** Scripts by base name. With a collision, the entry holds the first file seen (and an issue is reported). */
  scripts: Map<string, DiscoveredScript>;
  /** Every script file, sorted by file name, colliding and invalidly named ones included (for run help). */
  files: Array<{ fileName: string; base: string }>;
}

export interface Discovery {
  loopxDir: string;
  /** False when `.loopx/` does not exist (or is not a directory). */
  exists: boolean;
  /**
   * Why `.loopx/` could not be listed when something is there (a mode-000 directory: EACCES; a
   * file: ENOTDIR); undefined when it is simply missing or was listed.
   */
  unreadable?: NodeJS.ErrnoException;
  workflows: Map<string, DiscoveredWorkflow>;
  /** Name violations and same-base-name collisions; fatal for `run <target>`, warnings for `run -h`. */
  issues: string[];
}

/** Reads a directory, following it if it is a symlink; undefined if it cannot be listed. */
function listDir(dir: string): Dirent[] | undefined {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return undefined;
  }
}

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

/**
 * Lists the script files directly inside `dir` (not recursive). Shared by runtime discovery and
 * the install-time checks, which apply the same rules to a source tree.
 */
export function scanScriptFiles(dir: string): Array<{ fileName: string; base: string; ext: ScriptExtension }> {
  const found: Array<{ fileName: string; base: string; ext: ScriptExtension }> = [];
  for (const entry of listDir(dir) ?? []) {
    const split = splitScriptFileName(entry.name);
    if (split && kindOf(dir, entry) === "file") found.push({ fileName: entry.name, ...split });
  }
  return found.sort((a, b) => (a.fileName < b.fileName ? -1 : a.fileName > b.fileName ? 1 : 0));
}

/** A directory is a workflow by structure when it has at least one top-level script file. */
export function isWorkflowDir(dir: string): boolean {
  return scanScriptFiles(dir).length > 0;
}

/** Validates one workflow's name and scripts, returning its issues (spec §5.2, §5.3). */
export function workflowIssues(name: string, files: ReturnType<typeof scanScriptFiles>): string[] {
  const issues: string[] = [];
  if (!isValidName(name)) {
    issues.push(`workflow ${JSON.stringify(name)}: invalid name (must match [a-zA-Z0-9_][a-zA-Z0-9_-]*)`);
  }
  const byBase = new Map<string, string[]>();
  for (const file of files) {
    if (!isValidName(file.base)) {
      issues.push(`workflow ${JSON.stringify(name)}: script ${JSON.stringify(file.fileName)} has an invalid name (must match [a-zA-Z0-9_][a-zA-Z0-9_-]*)`);
    }
    byBase.set(file.base, [...(byBase.get(file.base) ?? []), file.fileName]);
  }
  for (const [base, fileNames] of byBase) {
    if (fileNames.length > 1) {
      issues.push(`workflow ${JSON.stringify(name)}: name collision: scripts ${fileNames.join(", ")} share the script name ${JSON.stringify(base)}`);
    }
  }
  return issues;
}

/** Scans `<projectRoot>/.loopx/` (spec §5.1). Never throws; problems are reported in `issues`. */
export function discover(projectRoot: string): Discovery {
  const loopxDir = join(projectRoot, ".loopx");
  let entries: Dirent[] | undefined;
  let unreadable: NodeJS.ErrnoException | undefined;
  try {
    entries = readdirSync(loopxDir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") unreadable = error as NodeJS.ErrnoException;
  }
  const discovery: Discovery = { loopxDir, exists: entries !== undefined, workflows: new Map(), issues: [] };
  if (unreadable) discovery.unreadable = unreadable;
  const sorted = [...(entries ?? [])].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of sorted) {
    if (kindOf(loopxDir, entry) !== "dir") continue; // loose files in .loopx/ are never workflows
    const dir = join(loopxDir, entry.name);
    const files = scanScriptFiles(dir);
    if (files.length === 0) continue; // not a workflow: ignored silently
    discovery.issues.push(...workflowIssues(entry.name, files));
    const scripts = new Map<string, DiscoveredScript>();
    for (const file of files) {
      if (!scripts.has(file.base)) scripts.set(file.base, { name: file.base, ext: file.ext, path: join(dir, file.fileName) });
    }
    discovery.workflows.set(entry.name, { name: entry.name, dir, scripts, files: files.map(({ fileName, base }) => ({ fileName, base })) });
  }
  return discovery;
}

/**
 * The nearest ancestor of `dir` that has a `.loopx/` directory, for the message of a run started
 * in a subdirectory of a project (the project root is the cwd, spec §3.2: nothing is searched).
 */
export function ancestorWithLoopx(dir: string): string | undefined {
  for (let parent = dirname(dir); ; parent = dirname(parent)) {
    try {
      if (statSync(join(parent, ".loopx")).isDirectory()) return parent;
    } catch {
      // not this one
    }
    if (parent === dirname(parent)) return undefined;
  }
}

/**
 * The top-level files of a directory of `.loopx/` that discovery skipped (no supported script
 * extension: `index.py`, `index.mjs`), for the message of a workflow that is "not found".
 */
export function unsupportedFiles(dir: string): string[] {
  return (listDir(dir) ?? [])
    .filter((entry) => kindOf(dir, entry) === "file" && !entry.name.startsWith("."))
    .map((entry) => entry.name)
    .sort();
}
