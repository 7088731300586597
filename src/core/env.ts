import { closeSync, fsyncSync, lstatSync, mkdirSync, openSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { randomBytes } from "node:crypto";
import { LoopxError, fsReason } from "./errors.js";
import { parseEnvFile, withEnvVar, withoutEnvVar } from "./envfile.js";

/** `$XDG_CONFIG_HOME/loopx/env`, defaulting to `~/.config/loopx/env` (spec §8.1). */
export function globalEnvPath(env: NodeJS.ProcessEnv = process.env): string {
  const configHome = env.XDG_CONFIG_HOME ? env.XDG_CONFIG_HOME : join(env.HOME || homedir(), ".config");
  return join(configHome, "loopx", "env");
}

function describeFsError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException)?.code;
  switch (code) {
    case "EACCES":
    case "EPERM":
      return "permission denied";
    case "EISDIR":
      return "it is a directory";
    case "ENOENT":
      return "no such file";
    case "ENOTDIR":
      return "a parent path is not a directory";
    default:
      return code ?? String((error as Error)?.message ?? error);
  }
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
    throw new LoopxError(`cannot read ${label} ${path}: ${describeFsError(error)}`);
  }
  if (stat.isDirectory()) throw new LoopxError(`cannot read ${label} ${path}: it is a directory`);
  if (!stat.isFile()) throw new LoopxError(`cannot read ${label} ${path}: not a regular file`);
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw new LoopxError(`cannot read ${label} ${path}: ${describeFsError(error)}`);
  }
}

/** Loads an env file into a map; invalid lines are reported through `warn` and skipped. */
export function loadEnvFile(path: string, label: string, missingOk: boolean, warn: (message: string) => void): Map<string, string> {
  const text = readEnvText(path, label, missingOk);
  if (text === undefined) return new Map();
  const parsed = parseEnvFile(text, path);
  for (const warning of parsed.warnings) warn(warning);
  return parsed.vars;
}

/** The global variables merged with the `-e` file's (local wins), as loaded once at loop start. */
export function loadRunEnv(localEnvFile: string | undefined, warn: (message: string) => void): Map<string, string> {
  const merged = loadEnvFile(globalEnvPath(), "global env file", true, warn);
  if (localEnvFile !== undefined) {
    for (const [key, value] of loadEnvFile(localEnvFile, "env file", false, warn)) merged.set(key, value);
  }
  return merged;
}

/**
 * Replaces `path` with `text` atomically: write a temp file in the same directory, fsync, rename.
 * A crash at any moment leaves either the old file or the new one, never a half-written file.
 * New files are created 0600 because env files usually hold secrets.
 */
function writeFileAtomic(linkOrPath: string, text: string): void {
  // A symlinked env file (say, into a dotfiles repo) is updated at its target; the link stays.
  let path = linkOrPath;
  try {
    if (lstatSync(linkOrPath).isSymbolicLink()) path = realpathSync(linkOrPath);
  } catch {
    /* missing, or a dangling link: write the path itself */
  }
  const dir = dirname(path);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new LoopxError(`cannot write global env file ${path}: cannot create ${dir}: ${fsReason(error)}`);
  }
  let mode = 0o600;
  try {
    mode = statSync(path).mode & 0o7777;
  } catch {
    /* new file */
  }
  const temp = join(dir, `.env.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    const fd = openSync(temp, "wx", mode);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw new LoopxError(`cannot write global env file ${path}: ${describeFsError(error)}`);
  }
}

export function setGlobalEnvVar(key: string, value: string): void {
  const path = globalEnvPath();
  const current = readEnvText(path, "global env file", true) ?? "";
  writeFileAtomic(path, withEnvVar(current, key, value));
}

export function removeGlobalEnvVar(key: string): void {
  const path = globalEnvPath();
  const current = readEnvText(path, "global env file", true);
  if (current === undefined) return;
  const next = withoutEnvVar(current, key);
  if (next !== undefined) writeFileAtomic(path, next);
}

export function listGlobalEnv(warn: (message: string) => void): Array<[string, string]> {
  const vars = loadEnvFile(globalEnvPath(), "global env file", true, warn);
  return [...vars].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
