/**
 * The `.env` dialect of spec §8.1, shared by the global env file and `-e` files.
 * Pure: no file access here; the loop's host reads the files (src/runtime/env-files.ts), which also writes them.
 */

const KEY_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function isValidEnvKey(key: string): boolean {
  return KEY_PATTERN.test(key);
}

export interface EnvFileLine {
  /** 1-based line number, for warnings. */
  line: number;
  raw: string;
  /** Present when the line is a valid `KEY=VALUE` assignment. */
  key?: string;
  value?: string;
  /** Present when the line is neither blank, a comment, nor a valid assignment. */
  problem?: string;
}

/** Splits file text into lines; a trailing newline does not make an extra empty line. */
function splitLines(text: string): string[] {
  const lines = text.split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

export function parseEnvLines(text: string): EnvFileLine[] {
  return splitLines(text).map((raw, index) => parseEnvLine(raw, index + 1));
}

function parseEnvLine(raw: string, line: number): EnvFileLine {
  if (raw.trim() === "" || raw.startsWith("#")) return { line, raw };
  const eq = raw.indexOf("=");
  if (eq < 0) return { line, raw, problem: "no '=' (expected KEY=VALUE)" };
  const key = raw.slice(0, eq);
  // A shell's `export X=1` is not the spec's format (§8.1: its key "export X" is invalid, so the
  // line is ignored): the warning says why, and what the line would be.
  const exported = /^export\s+([A-Za-z_][A-Za-z0-9_]*)$/.exec(key);
  if (exported) return { line, raw, problem: `'export ' is shell syntax, not part of loopx's .env format (spec §8.1): write ${exported[1]}=... without it` };
  if (!isValidEnvKey(key)) return { line, raw, problem: `invalid key ${JSON.stringify(key)} (keys match [A-Za-z_][A-Za-z0-9_]*, no spaces around '=')` };
  const value = unquote(raw.slice(eq + 1).trimEnd());
  // No process environment can carry a NUL byte: report it against the file, not the script.
  if (value.includes("\0")) return { line, raw, problem: `the value of ${key} contains a NUL byte` };
  return { line, raw, key, value };
}

/** Strips one pair of matching surrounding quotes; no escape processing (spec §8.1). */
function unquote(value: string): string {
  if (value.length >= 2) {
    const first = value[0];
    if ((first === '"' || first === "'") && value[value.length - 1] === first) return value.slice(1, -1);
  }
  return value;
}

export interface ParsedEnvFile {
  vars: Map<string, string>;
  warnings: string[];
}

/** Parses env file text; later duplicates win; bad lines become warnings (they are skipped). */
export function parseEnvFile(text: string, fileLabel: string): ParsedEnvFile {
  const vars = new Map<string, string>();
  const warnings: string[] = [];
  for (const entry of parseEnvLines(text)) {
    if (entry.key !== undefined) {
      vars.delete(entry.key); // keep insertion order meaningful: last occurrence wins and sorts last
      vars.set(entry.key, entry.value!);
    } else if (entry.problem !== undefined) {
      warnings.push(`${fileLabel}:${entry.line}: ignoring line: ${entry.problem}`);
    }
  }
  return { vars, warnings };
}

/** Why a value cannot be stored by `env set`, or undefined if it can (spec §4.3). */
export function envValueProblem(value: string): string | undefined {
  if (value.includes("\n") || value.includes("\r")) return "values cannot contain newlines (\\n or \\r)";
  if (value.includes("\0")) return "values cannot contain NUL bytes";
  return undefined;
}

/** `KEY="<literal value>"` — no escaping; round-trips through parseEnvFile for every valid value. */
export function serializeEnvAssignment(key: string, value: string): string {
  return `${key}="${value}"`;
}

/**
 * Returns new file text with `key` set: the first existing assignment of the key is replaced in
 * place, later ones are dropped, everything else (comments, other keys, odd lines) is kept.
 */
export function withEnvVar(text: string, key: string, value: string): string {
  const out: string[] = [];
  let placed = false;
  for (const entry of parseEnvLines(text)) {
    if (entry.key === key) {
      if (!placed) out.push(serializeEnvAssignment(key, value));
      placed = true;
    } else {
      out.push(entry.raw);
    }
  }
  if (!placed) out.push(serializeEnvAssignment(key, value));
  return out.join("\n") + "\n";
}

/** Returns new file text without any assignment of `key`, or undefined if there was none. */
export function withoutEnvVar(text: string, key: string): string | undefined {
  const entries = parseEnvLines(text);
  if (!entries.some((entry) => entry.key === key)) return undefined;
  const kept = entries.filter((entry) => entry.key !== key).map((entry) => entry.raw);
  return kept.length === 0 ? "" : kept.join("\n") + "\n";
}

/**
 * How the engine reads env files: the runtime reads real files, tests an in-memory table. `read`
 * returns a file's text, undefined when it does not exist and `missingOk`; anything else that
 * keeps it from being read is a LoopxError naming `label` and the path.
 */
export interface EnvFileReader {
  /** `$XDG_CONFIG_HOME/loopx/env` or its default (spec §8.1), as the host's environment says now. */
  globalEnvFile(): string;
  read(path: string, label: string, missingOk: boolean): string | undefined;
}

/** Loads an env file into a map; invalid lines are reported through `warn` and skipped. */
export function loadEnvFile(reader: EnvFileReader, path: string, label: string, missingOk: boolean, warn: (message: string) => void): Map<string, string> {
  const text = reader.read(path, label, missingOk);
  if (text === undefined) return new Map();
  const parsed = parseEnvFile(text, path);
  for (const warning of parsed.warnings) warn(warning);
  return parsed.vars;
}

/** The global variables merged with the `-e` file's (local wins), as loaded once at loop start (spec §8). */
export function loadRunEnv(reader: EnvFileReader, localEnvFile: string | undefined, warn: (message: string) => void): Map<string, string> {
  const merged = loadEnvFile(reader, reader.globalEnvFile(), "global env file", true, warn);
  if (localEnvFile !== undefined) {
    for (const [key, value] of loadEnvFile(reader, localEnvFile, "env file", false, warn)) merged.set(key, value);
  }
  return merged;
}
