/** Temp directories (removed after each test file), projects made of files, bash scripts and what they leave. */
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { atFileEnd } from "./file-end.js";

/** A fresh temp directory (realpath'd, so it compares equal to what scripts see as cwd). */
export function tempDir(prefix = "loopx-test-"): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  // Removed after the file's last test, so a run of the suite leaves nothing behind in the temp dir.
  atFileEnd(() => rmSync(dir, { recursive: true, force: true, maxRetries: 2 }));
  return dir;
}

/**
 * Creates a project directory holding `files` (relative path → content). `.sh` files are made
 * executable. Returns the project root.
 */
export function makeProject(files: Record<string, string> = {}, root = tempDir()): string {
  for (const [relative, content] of Object.entries(files)) {
    const path = join(root, relative);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
    if (path.endsWith(".sh")) chmodSync(path, 0o755);
  }
  return root;
}

export function makeSymlink(target: string, path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  symlinkSync(target, path);
}

/** The project root, quoted, in a bash script. */
export const R = '"$LOOPX_PROJECT_ROOT"';

/** A bash script: shebang line, then `body`. */
export const sh = (body: string): string => `#!/bin/bash\n${body}\n`;

/** The non-empty lines of `file`; [] when it does not exist. */
export function fileLines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
}

/** The lines of `<root>/trace.log` (the file scripts append to); [] if it is missing or empty. */
export function readTrace(root: string): string[] {
  const path = join(root, "trace.log");
  if (!existsSync(path)) return [];
  const text = readFileSync(path, "utf8");
  return text === "" ? [] : text.replace(/\n$/, "").split("\n");
}

/**
 * Every file, directory and symlink under `root` (relative path → kind + mode + content).
 * `.bun/` at the top level (bun's own transpiler cache in $HOME, written by the runtime, not by
 * loopx) is skipped. Not the same format as `snapshot` in fixtures/install/support.ts.
 */
export function snapshotTree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string, rel: string): void => {
    if (!existsSync(dir)) return;
    for (const name of readdirSync(dir).sort()) {
      if (rel === "" && name === ".bun") continue;
      const path = join(dir, name);
      const relative = rel === "" ? name : `${rel}/${name}`;
      const stat = lstatSync(path);
      if (stat.isSymbolicLink()) out[relative] = `link:${readlinkSync(path)}`;
      else if (stat.isDirectory()) {
        out[relative] = `dir:${(stat.mode & 0o7777).toString(8)}`;
        walk(path, relative);
      } else out[relative] = `file:${(stat.mode & 0o7777).toString(8)}:${readFileSync(path, "utf8")}`;
    }
  };
  walk(root, "");
  return out;
}
