// Shared by the ralph and converge workflows. This directory is the one source; an installed
// workflow can rely only on files inside its own directory, so the pack step
// (scripts/pack-workflows.mjs) copies it into each workflow's lib/shared/ (in the checkout,
// lib/shared is a link to here).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import { accessSync, constants } from "node:fs";

export type Vars = Record<string, string | undefined>;

/** One line on stderr, prefixed with the workflow's name. */
export function say(prefix: string, message: string): void {
  process.stderr.write(`${prefix}: ${message}\n`);
}

/** Ends the script with `code` after one last stderr line (the reason). */
export function fail(prefix: string, message: string, code = 1): never {
  say(prefix, message);
  process.exit(code);
}

/**
 * KEY=VALUE lines (the `.env` shape loopx uses): `#` comments and blank lines skipped, one pair of
 * matching surrounding quotes stripped, an optional leading `export ` allowed. Returns {} for a
 * missing file.
 */
export function readKeyValueFile(path: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!existsSync(path)) return out;
  for (const raw of readFileSync(path, "utf8").split(/\r?\n/)) {
    const line = raw.trim().replace(/^export\s+/, "");
    if (line === "" || line.startsWith("#")) continue;
    const match = line.match(/^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/);
    if (!match) continue;
    let value = match[2]!.trim();
    if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.endsWith(value[0]!)) value = value.slice(1, -1);
    out[match[1]!] = value;
  }
  return out;
}

/** envsubst: `${NAME}` and `$NAME` become the variable's value, or "" when it is not set. */
export function substitute(template: string, vars: Vars): string {
  return template.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (_m, braced, bare) => vars[braced ?? bare] ?? "");
}

/**
 * Splits an args string the way a POSIX shell splits words (whitespace, '…' and "…" quotes,
 * backslash escapes), without expansions: AGENT_ARGS="--model 'opus 4'" gives two words.
 */
export function splitArgs(text: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === "\\" && i + 1 < text.length && '"\\$`'.includes(text[i + 1]!)) word += text[++i];
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === "\\" && i + 1 < text.length) {
      word += text[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) throw new Error(`unterminated ${quote} quote in ${JSON.stringify(text)}`);
  if (inWord) words.push(word);
  return words;
}

/** The absolute path of `command` on PATH (or itself, if it holds a slash and is executable). */
export function which(command: string, path = process.env.PATH ?? ""): string | undefined {
  const executable = (file: string): boolean => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (command.includes("/")) return executable(command) ? resolve(command) : undefined;
  for (const dir of path.split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, command);
    if (executable(candidate)) return candidate;
  }
  return undefined;
}

/** `path` resolved against `base` unless it is absolute. */
export function resolveFrom(base: string, path: string): string {
  return isAbsolute(path) ? path : join(base, path);
}

/** `YYYY-MM-DD HH:MM:SS` in local time. */
export function timestamp(date = new Date()): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${p(date.getMonth() + 1)}-${p(date.getDate())} ${p(date.getHours())}:${p(date.getMinutes())}:${p(date.getSeconds())}`;
}

/** `YYYYMMDD-HHMMSS` in local time (session log names). */
export function compactTimestamp(date = new Date()): string {
  return timestamp(date).replace(/-/g, "").replace(" ", "-").replace(/:/g, "");
}

/** `1h 02m 03s`, `2m 03s`, `3s`. */
export function duration(ms: number): string {
  const total = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const p = (n: number) => String(n).padStart(2, "0");
  if (h > 0) return `${h}h ${p(m)}m ${p(s)}s`;
  if (m > 0) return `${m}m ${p(s)}s`;
  return `${s}s`;
}

export function usd(amount: number): string {
  return `$${amount.toFixed(amount < 1 ? 6 : 2)}`;
}

/**
 * The run's private scratch directory: loopx creates $LOOPX_TMPDIR for every run and removes it
 * when the run ends, so intra-run state (counters, the last agent output) never leaks into the
 * next run nor collides with a concurrent one.
 */
export function runDir(prefix: string): string {
  const dir = process.env.LOOPX_TMPDIR;
  if (!dir) fail(prefix, "LOOPX_TMPDIR is not set: this workflow needs a loopx that gives each run its own scratch directory");
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** JSON state kept in the run's scratch directory. */
export function readState<T>(dir: string, name: string): T | undefined {
  const path = join(dir, name);
  return existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as T) : undefined;
}

export function writeState(dir: string, name: string, value: unknown): void {
  writeFileSync(join(dir, name), JSON.stringify(value, null, 2) + "\n");
}

/** A non-negative integer from a variable, or `fallback` when unset; throws on anything else. */
export function intVar(vars: Vars, name: string, fallback: number): number {
  const raw = vars[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(raw)}`);
  return Number(raw.trim());
}

/** A positive number from a variable, or undefined when unset; throws on anything else. */
export function numberVar(vars: Vars, name: string): number | undefined {
  const raw = vars[name];
  if (raw === undefined || raw.trim() === "") return undefined;
  const value = Number(raw.trim().replace(/^\$/, ""));
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got ${JSON.stringify(raw)}`);
  return value;
}

/** `90` (seconds), `90s`, `500ms`, `20m`, `2h`, `1h30m` in ms; throws on anything else. */
export function parseDuration(text: string): number {
  const trimmed = text.trim();
  if (/^\d+(?:\.\d+)?$/.test(trimmed)) return Number(trimmed) * 1000;
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  let total = 0;
  let rest = trimmed;
  while (rest !== "") {
    const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)/.exec(rest);
    if (!match) throw new Error(`not a duration: ${JSON.stringify(text)} (use 90, 90s, 20m, 2h or 1h30m)`);
    total += Number(match[1]) * units[match[2]!]!;
    rest = rest.slice(match[0].length);
  }
  if (trimmed === "") throw new Error("empty duration");
  return total;
}

/** A duration variable in ms, or `fallback` when unset; `0` turns a limit off. Throws naming the variable. */
export function durationVar(vars: Vars, name: string, fallback: number): number {
  const raw = vars[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  try {
    return parseDuration(raw);
  } catch (error) {
    throw new Error(`${name}: ${(error as Error).message}`);
  }
}

/**
 * Why a SIGTERM came, when it is loopx ending the script at a time limit (`--timeout`,
 * `--max-time`: loopx gives the limits in LOOPX_SCRIPT_TIMEOUT_MS and LOOPX_RUN_DEADLINE, and
 * exits 124); undefined for any other SIGTERM.
 */
export function timeLimitReached(now = Date.now()): string | undefined {
  // loopx starts the clock just before this process: on a busy machine its start (fork, exec, the
  // runtime's own start-up) has taken over a second, which made a --timeout read as a plain SIGTERM.
  const SLACK_MS = 3000;
  const timeout = Number(process.env.LOOPX_SCRIPT_TIMEOUT_MS);
  if (timeout > 0 && now - performance.timeOrigin >= timeout - SLACK_MS) return `loopx --timeout (${duration(timeout)} per script)`;
  const deadline = Number(process.env.LOOPX_RUN_DEADLINE);
  if (deadline > 0 && now >= deadline - SLACK_MS) return "loopx --max-time (the run's time limit)";
  return undefined;
}

export interface WorkflowConfig {
  /** The workflow's own directory (the script's cwd), replaced by `loopx install -y`. */
  workflowDir: string;
  projectRoot: string;
  /** Where the user's state and configuration live: `<dirVar>`, default `defaultDir` in the project root. */
  stateDir: string;
  vars: Vars;
}

/**
 * A workflow's settings. State and the user's configuration live outside the workflow's
 * directory (default e.g. `.ralph/` in the project root), so that `loopx install -y` updates the
 * workflow and keeps them. Built-in `defaults` < the shipped `config` < the project's
 * `<stateDir>/config` (or the file `<configVar>` names, relative to the project root) < the
 * environment (loopx env, -e files, the shell).
 */
export function workflowConfig(name: string, dirVar: string, configVar: string, defaultDir: string, defaults: Vars): WorkflowConfig {
  const workflowDir = process.cwd();
  const projectRoot = process.env.LOOPX_PROJECT_ROOT ?? workflowDir;
  const shipped = readKeyValueFile(join(workflowDir, "config"));
  const stateDir = resolveFrom(projectRoot, process.env[dirVar] || shipped[dirVar] || defaultDir);
  const named = process.env[configVar];
  const configPath = named ? resolveFrom(projectRoot, named) : join(stateDir, "config");
  if (named && !existsSync(configPath)) fail(name, `config file not found: ${configPath} (${configVar})`);
  return { workflowDir, projectRoot, stateDir, vars: { ...defaults, ...shipped, ...readKeyValueFile(configPath), ...process.env } };
}

/**
 * A new log file `<dir>/logs/<prefix>-YYYYMMDD-HHMMSS.log` (a suffix when that name is taken).
 * logs/ holds a .gitignore: logs are written while the agent works and commits, and never belong
 * in its commits.
 */
export function newLogFile(dir: string, prefix: string): string {
  const logs = join(dir, "logs");
  mkdirSync(logs, { recursive: true });
  if (!existsSync(join(logs, ".gitignore"))) writeFileSync(join(logs, ".gitignore"), "# logs of the loopx workflows: not committed\n*\n");
  const stamp = compactTimestamp();
  let file = join(logs, `${prefix}-${stamp}.log`);
  for (let n = 2; existsSync(file); n++) file = join(logs, `${prefix}-${stamp}-${n}.log`);
  writeFileSync(file, "", { flag: "a" });
  return file;
}
