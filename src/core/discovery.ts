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
  workflows: Map<string, DiscoveredWorkflow>;
  /** Name violations and same-base-name collisions; fatal for `run <target>`, warnings for `run -h`. */
  issues: string[];
}

/** One entry of a directory listing, symlinks followed: a file, a directory, or anything else (undefined). */
interface DirectoryEntry {
  name: string;
  kind: "file" | "dir" | undefined;
}

/**
 * How discovery sees the file system: the runtime reads real directories, tests an in-memory tree.
 * `list` follows `dir` if it is a symlink and returns undefined if it cannot be listed.
 */
export interface DirectoryReader {
  list(dir: string): DirectoryEntry[] | undefined;
  /**
   * Why `dir`, which is there, cannot be listed ("permission denied (EACCES)", "not a directory
   * (ENOTDIR)"); undefined when it is simply missing. Asked only once `list` has failed.
   */
  unreadable?(dir: string): string | undefined;
}

/**
 * Lists the script files directly inside `dir` (not recursive). Shared by runtime discovery and
 * the install-time checks, which apply the same rules to a source tree.
 */
export function scanScriptFiles(reader: DirectoryReader, dir: string): Array<{ fileName: string; base: string; ext: ScriptExtension }> {
  const found: Array<{ fileName: string; base: string; ext: ScriptExtension }> = [];
  for (const entry of reader.list(dir) ?? []) {
    const split = splitScriptFileName(entry.name);
    if (split && entry.kind === "file") found.push({ fileName: entry.name, ...split });
  }
  return found.sort((a, b) => (a.fileName < b.fileName ? -1 : a.fileName > b.fileName ? 1 : 0));
}

/** A directory is a workflow by structure when it has at least one top-level script file. */
export function isWorkflowDir(reader: DirectoryReader, dir: string): boolean {
  return scanScriptFiles(reader, dir).length > 0;
}

/** Validates one workflow's name and scripts, returning its issues (spec §5.2, §5.3). */
export function workflowIssues(name: string, files: Array<{ fileName: string; base: string }>): string[] {
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
export function discover(reader: DirectoryReader, projectRoot: string): Discovery {
  const loopxDir = join(projectRoot, ".loopx");
  const entries = reader.list(loopxDir);
  const discovery: Discovery = { loopxDir, exists: entries !== undefined, workflows: new Map(), issues: [] };
  const sorted = [...(entries ?? [])].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of sorted) {
    if (entry.kind !== "dir") continue; // loose files in .loopx/ are never workflows
    const dir = join(loopxDir, entry.name);
    const files = scanScriptFiles(reader, dir);
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
export function ancestorWithLoopx(reader: DirectoryReader, dir: string): string | undefined {
  for (let parent = dirname(dir); ; parent = dirname(parent)) {
    if (reader.list(parent)?.some((entry) => entry.name === ".loopx" && entry.kind === "dir")) return parent;
    if (parent === dirname(parent)) return undefined;
  }
}

/**
 * The top-level files of a directory that discovery skipped for want of a supported extension
 * (`index.py`, `index.mjs`), for the message of a workflow "not found".
 */
export function unsupportedFiles(reader: DirectoryReader, dir: string): string[] {
  return (reader.list(dir) ?? [])
    .filter((entry) => entry.kind === "file" && !entry.name.startsWith("."))
    .map((entry) => entry.name)
    .sort();
}
