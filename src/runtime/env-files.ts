import { lstatSync, mkdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { writeFileAtomic } from "../os/atomic-write.js";
import { loopxDir } from "../os/xdg.js";
import { fsReason, LoopxError } from "../core/errors.js";
import { loadEnvFile, withEnvVar, withoutEnvVar, type EnvFileReader } from "../core/envfile.js";

/** `$XDG_CONFIG_HOME/loopx/env`, defaulting to `~/.config/loopx/env` (spec §8.1). */
export function globalEnvPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(loopxDir("config", env), "env");
}

/**
 * Reads an env file's text. Returns undefined when the file does not exist and `missingOk`;
 * anything that is not a readable regular file (directory, FIFO, socket, unreadable) is an error —
 * a FIFO would otherwise block the loop forever.
 */
function readEnvText(path: string, label: string, missingOk: boolean): string | undefined {
  let stat;
  try {
    stat = statSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT" && missingOk) return undefined;
    if ((error as NodeJS.ErrnoException).code === "ENOENT") throw new LoopxError(`${label} not found: ${path}`);
    throw new LoopxError(`cannot read ${label} ${path}: ${fsReason(error)}`);
  }
  if (stat.isDirectory()) throw new LoopxError(`cannot read ${label} ${path}: it is a directory`);
  if (!stat.isFile()) throw new LoopxError(`cannot read ${label} ${path}: not a regular file`);
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw new LoopxError(`cannot read ${label} ${path}: ${fsReason(error)}`);
  }
}

/** The env files on disk; the global one where the environment says now (spec §8.1). */
export const fsEnvFileReader: EnvFileReader = {
  globalEnvFile: () => globalEnvPath(),
  read: readEnvText,
};

/**
 * Replaces `path` with `text` atomically: write a temp file in the same directory, fsync, rename.
 * A crash at any moment leaves either the old file or the new one, never a half-written file.
 * New files are created 0600 because env files usually hold secrets.
 */
function writeEnvFile(linkOrPath: string, text: string): void {
  // A symlinked env file (say, into a dotfiles repo) is updated at its target; the link stays.
  let path = linkOrPath;
  try {
    if (lstatSync(linkOrPath).isSymbolicLink()) path = realpathSync(linkOrPath);
  } catch {
    /* missing, or a dangling link: write the path itself */
  }
  let mode = 0o600;
  try {
    mode = statSync(path).mode & 0o7777;
  } catch {
    /* new file */
  }
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileAtomic(path, text, { mode, fsync: true });
  } catch (error) {
    throw new LoopxError(`cannot write global env file ${path}: ${fsReason(error)}`);
  }
}

export function setGlobalEnvVar(key: string, value: string, env: NodeJS.ProcessEnv = process.env): void {
  const path = globalEnvPath(env);
  const current = readEnvText(path, "global env file", true) ?? "";
  writeEnvFile(path, withEnvVar(current, key, value));
}

export function removeGlobalEnvVar(key: string, env: NodeJS.ProcessEnv = process.env): void {
  const path = globalEnvPath(env);
  const current = readEnvText(path, "global env file", true);
  if (current === undefined) return;
  const next = withoutEnvVar(current, key);
  if (next !== undefined) writeEnvFile(path, next);
}

export function listGlobalEnv(warn: (message: string) => void, env: NodeJS.ProcessEnv = process.env): Array<[string, string]> {
  const vars = loadEnvFile(fsEnvFileReader, globalEnvPath(env), "global env file", true, warn);
  return [...vars].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
