// What every preset of presets/ has: the CLI's command and arguments, how its JSON stream is
// shown, read and counted. The four original presets (claude, codex, amp, cline) live in
// agent.ts; each CLI added since is one file here (see docs/workflows-add-an-agent.md).
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { CostKind, Receipt } from "../usage.ts";

export type Json = Record<string, any>;
export type Env = Record<string, string | undefined>;

export interface StreamPreset {
  cli: string;
  args: string;
  streamArgs: string;
  /** The CLI's read-only / plan mode where it has one (else the worker's args, and the caller checks the tree). */
  readOnlyArgs: string;
  /** True where the read-only args really keep the agent from changing files. */
  readOnlyEnforced: boolean;
  /** The prompt goes as the last argument, not on stdin (the CLI does not read stdin). */
  promptArg?: boolean;
  /** One line naming the fix, for a CLI that is not logged in or has no key. */
  loginFix: string;
  /** A cheap check before the first call: why the CLI cannot work (no credentials), else undefined. */
  preflight?: (env: Env) => string | undefined;
  /** The live view's rendering of one event (undefined: nothing shown). */
  display(event: Json, earlier: Json[]): string | undefined;
  /** Everything the assistant said, never the prompt, tool input or output. */
  responseText(events: Json[]): string;
  /** What it ended with. */
  finalAnswer(events: Json[]): string;
  /** An event after which the call is over even if the CLI goes on (it is ended 2 s later). */
  endsCall?: (event: Json) => boolean;
  /** Real progress for the idle watchdog (not a retry notice, not a heartbeat). */
  progress(event: Json): boolean;
  /** What the call used, as loopx receipts (without the agent name: added by the caller). */
  receipts(events: Json[], context: PresetUsageContext): Receipt[];
}

interface PresetUsageContext {
  env: Env;
  args: string[];
  costKind?: CostKind;
}

export const short = (text: unknown, max = 160): string => {
  const one = String(text ?? "").replace(/\s+/g, " ").trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
};

const TOOL_OUTPUT_LINES = 8;

/** A tool's output, indented, at most TOOL_OUTPUT_LINES lines (the session log has it all). */
export function toolOutput(mark: string, text: unknown, prefix = ""): string {
  const all = String(text ?? "").replace(/\s+$/, "").split(/\r?\n/);
  const shown = all.slice(0, TOOL_OUTPUT_LINES).map((line, i) => `  ${i === 0 ? `${mark} ${prefix}` : "  "}${short(line, 120)}`.trimEnd());
  if (all.length > TOOL_OUTPUT_LINES) shown.push(`    … ${all.length - TOOL_OUTPUT_LINES} more lines`);
  return shown.join("\n");
}

/** The one-line summary of a tool call's input: its command, path, pattern, … */
export function toolSummary(input: unknown): string {
  if (!input || typeof input !== "object") return short(input, 120);
  const record = input as Json;
  for (const key of ["command", "cmd", "file_path", "filePath", "path", "pattern", "url", "query", "description"]) {
    if (typeof record[key] === "string") return short(record[key], 120);
  }
  return short(JSON.stringify(input), 120);
}

const count = (value: unknown): number | undefined => (typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : undefined);
export const dollars = (value: unknown): number | undefined => (typeof value === "number" && Number.isFinite(value) && value >= 0 && value <= 1_000_000 ? value : undefined);

/** Token fields with only the values that are there (undefined when none is). */
export function tokenFields(fields: Record<string, unknown>): Receipt["tokens"] {
  const out: Json = {};
  for (const [key, value] of Object.entries(fields)) if (count(value) !== undefined && !(key === "reasoning" && value === 0)) out[key] = value;
  return Object.keys(out).length ? out : undefined;
}

/** The value after `-m`/`--model` (or `--model=`) in a CLI's arguments. */
export function modelArg(args: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    if ((args[i] === "-m" || args[i] === "--model") && args[i + 1]) return args[i + 1];
    if (args[i]!.startsWith("--model=")) return args[i]!.slice(8);
  }
  return undefined;
}

/** A JSON file, or undefined when it is missing or not JSON. */
export function readJson(path: string): Json | undefined {
  try {
    return existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as Json) : undefined;
  } catch {
    return undefined;
  }
}

const homeOf = (env: Env): string => env.HOME || homedir();
export const under = (env: Env, ...parts: string[]): string => join(homeOf(env), ...parts);
