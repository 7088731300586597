// What the workflows know about the OpenAI Codex CLI (`codex exec --json`, 0.169.0), read from the
// real CLI driven against a stand-in for the Responses API (test/e2e/workflows/workflows-codex-real.test.ts):
// - a call succeeded when its stream has `turn.completed` and no `turn.failed` (and it exited 0).
//   A top-level `error` event alone is no failure: codex prints them for problems it recovers
//   from ("Reconnecting... 1/5 (stream disconnected before completion: …)", then turn.completed).
// - a usage limit: `error` + `turn.failed` "You’ve hit your usage limit. … try again at 2:44 PM."
//   (local time, minute precision, a typographic apostrophe; "at Dec 29th, 2025 10:15 PM" when not
//   today; "try again later" when it does not know). The API's `resets_at` never reaches the stream.
// - usage: `turn.completed.usage` {input_tokens, cached_input_tokens, cache_write_input_tokens,
//   output_tokens, reasoning_output_tokens}, no cost, CUMULATIVE over the thread (`exec resume`
//   reports the earlier turns again).
// Shared by the ralph and converge workflows.
import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import type { Receipt } from "./usage.ts";
import { which, type Vars } from "./util.ts";

type Json = Record<string, any>;

/** Why a finished codex call failed, judged from its stream (exit code aside). */
export function codexFailure(events: Json[]): string | undefined {
  const failed = events.find((e) => e.type === "turn.failed");
  if (failed) return `the agent reported an error: ${failed.error?.message ?? "turn failed"}`;
  if (!events.some((e) => e.type === "turn.completed")) {
    const error = [...events].reverse().find((e) => e.type === "error");
    return `the stream has no turn.completed event${error ? ` (last error: ${String(error.message ?? "").slice(0, 200)})` : ""}`;
  }
  return undefined;
}

/**
 * Progress, for AGENT_IDLE_TIMEOUT: a turn started or ended, an item completed. Not any event:
 * codex retrying an unreachable API prints "Reconnecting…" `error` events forever.
 */
export function codexProgress(event: Json): boolean {
  return event.type === "item.completed" || event.type === "turn.started" || event.type === "turn.completed" || event.type === "turn.failed";
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/**
 * codex's "try again at 3:05 PM." / "… at Dec 29th, 2025 10:15 PM." (local time) as ms since 1970:
 * the END of the minute named (codex rounds the true reset down to the minute it shows), so a
 * wait never ends before the window does. A time of day already past: tomorrow.
 */
export function codexResetTime(message: string, now = Date.now()): number | undefined {
  const at = /try again at (.+?)\.?\s*$/i.exec(message)?.[1];
  const time = at && /(\d{1,2}):(\d{2})\s*([AP]M)/i.exec(at);
  if (!time) return undefined;
  const hours = (Number(time[1]) % 12) + (time[3]!.toUpperCase() === "PM" ? 12 : 0);
  const day = /([A-Z][a-z]{2}) (\d{1,2})(?:st|nd|rd|th)?, (\d{4})/.exec(at);
  const date = new Date(now);
  if (day && MONTHS.includes(day[1]!)) date.setFullYear(Number(day[3]), MONTHS.indexOf(day[1]!), Number(day[2]));
  date.setHours(hours, Number(time[2]) + 1, 0, 0);
  // Past by more than a clock's skew: a time of day means tomorrow's.
  if (!day && date.getTime() < now - 60_000) date.setDate(date.getDate() + 1);
  return date.getTime();
}

/** A `resets_at` (epoch seconds) on the event, should codex ever pass the API's on. */
function eventResetsAt(event: Json): number | undefined {
  for (const holder of [event, event.error, event.error?.codex_error_info]) {
    const value = holder?.resets_at ?? holder?.resetsAt;
    if (typeof value === "number" && value > 0) return value * 1000;
  }
  return undefined;
}

/** The usage limit a failed codex call ran into: its reset (end of the named minute), kind and words. */
export function codexLimit(events: Json[]): { resetsAt?: number; kind: string; message: string } | undefined {
  // The failure's own words first; a "Reconnecting…" codex recovered from says nothing about the end.
  for (const e of [...events].reverse()) {
    if (e.type !== "error" && e.type !== "turn.failed") continue;
    const message = e.type === "error" ? e.message : e.error?.message;
    if (typeof message !== "string" || /^Reconnecting\b/.test(message) || !/usage limit|rate limit|too many requests|\b429\b/i.test(message)) continue;
    const resetsAt = eventResetsAt(e) ?? codexResetTime(message);
    return { resetsAt, kind: /usage limit/i.test(message) ? "usage_limit" : "rate_limit", message: message.replace(/\s+/g, " ").trim().slice(0, 200) };
  }
  return undefined;
}

/** The live view's line for a top-level `error` / `turn.failed`; a turn.failed repeating the error just shown: nothing. */
export function codexErrorLine(event: Json, earlier: Json[]): string | undefined {
  const message = String(event.error?.message ?? event.message ?? "").replace(/\s+/g, " ").trim();
  if (event.type === "turn.failed") {
    const previous = [...earlier].reverse().find((e) => e !== event && e.type === "error");
    if (previous && String(previous.message ?? "").replace(/\s+/g, " ").trim() === message) return undefined;
  } else if (/^Reconnecting\b/.test(message)) return `· ${message.slice(0, 160)}`;
  return `✗ ${message.length > 160 ? `${message.slice(0, 159)}…` : message}`;
}

// ---- usage → loopx receipts -------------------------------------------------------------------

interface Usage {
  input: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
  reasoning: number;
}

const FIELDS: Array<[keyof Usage, string]> = [
  ["input", "input_tokens"],
  ["cacheRead", "cached_input_tokens"],
  ["cacheWrite", "cache_write_input_tokens"],
  ["output", "output_tokens"],
  ["reasoning", "reasoning_output_tokens"],
];

function usageOf(raw: Json | undefined): Usage | undefined {
  if (!raw || typeof raw !== "object") return undefined;
  const usage = {} as Usage;
  for (const [key, field] of FIELDS) usage[key] = Number.isSafeInteger(raw[field]) && raw[field] >= 0 ? raw[field] : 0;
  return usage;
}

/**
 * The receipt's tokens, in buckets that do not overlap: OpenAI counts the cached input inside
 * input_tokens and the reasoning inside output_tokens; a receipt's `input` is the input not read
 * from the cache, and its `reasoning` is not inside `output`.
 */
export function receiptTokens(usage: Usage): Usage {
  return {
    input: Math.max(0, usage.input - usage.cacheRead - usage.cacheWrite),
    cacheRead: usage.cacheRead,
    cacheWrite: usage.cacheWrite,
    output: Math.max(0, usage.output - usage.reasoning),
    reasoning: usage.reasoning,
  };
}

/**
 * This call's share of a thread's cumulative usage: `now` minus what the thread had reported
 * before (`seen`). A count that went down means the totals were not the same thread's: `now` whole.
 */
export function usageDelta(now: Usage, seen: Usage | undefined): Usage {
  if (!seen || FIELDS.some(([key]) => now[key] < seen[key])) return now;
  const delta = {} as Usage;
  for (const [key] of FIELDS) delta[key] = now[key] - seen[key];
  return delta;
}

/** Threads' last cumulative usage: $XDG_STATE_HOME/loopx/workflows/codex-threads.json (a resumed thread can be any older one). */
function threadsFile(env: Vars): string {
  return join(env.XDG_STATE_HOME || join(env.HOME || homedir(), ".local", "state"), "loopx", "workflows", "codex-threads.json");
}

const THREAD_KEEP_MS = 30 * 24 * 3600_000;

function updateThreads(env: Vars, thread: string, usage: Usage): Usage | undefined {
  const file = threadsFile(env);
  let all: Record<string, { usage: Usage; at: number }> = {};
  try {
    if (existsSync(file)) all = JSON.parse(readFileSync(file, "utf8")) ?? {};
  } catch {
    all = {};
  }
  const seen = all[thread]?.usage;
  for (const [key, value] of Object.entries(all)) if (!(value?.at > Date.now() - THREAD_KEEP_MS)) delete all[key];
  all[thread] = { usage, at: Date.now() };
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(all) + "\n", { mode: 0o600 });
    renameSync(tmp, file);
  } catch {
    // Without the file a later resume of this thread reports its whole total once.
  }
  return seen;
}

/** The model codex uses: `-m`/`--model` or `-c model=…` in its arguments, else `model` in $CODEX_HOME/config.toml. */
export function codexModel(args: string[], env: Vars): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if ((arg === "-m" || arg === "--model") && args[i + 1]) return args[i + 1];
    if (arg.startsWith("--model=")) return arg.slice(8);
    const config = arg === "-c" || arg === "--config" ? args[i + 1] : undefined;
    const set = config && /^model\s*=\s*"?([^"]+)"?$/.exec(config);
    if (set) return set[1];
  }
  try {
    const toml = readFileSync(join(env.CODEX_HOME || join(env.HOME || homedir(), ".codex"), "config.toml"), "utf8");
    const top = toml.split(/^\s*\[/m)[0]!; // keys before the first table
    return /^\s*model\s*=\s*"([^"]+)"/m.exec(top)?.[1];
  } catch {
    return undefined;
  }
}

let version: string | undefined | null = null;

/** codex's version: its npm package.json beside the command, else `codex --version` (once per process). */
function codexVersion(cli: string): string | undefined {
  if (version !== null) return version;
  version = undefined;
  try {
    const path = which(cli);
    const pkg = path && join(dirname(realpathSync(path)), "..", "package.json");
    if (pkg && existsSync(pkg)) version = JSON.parse(readFileSync(pkg, "utf8")).version;
    if (!version) version = /(\d+\.\d+\.\d+\S*)/.exec(spawnSync(cli, ["--version"], { encoding: "utf8", timeout: 5000, stdio: ["ignore", "pipe", "ignore"] }).stdout ?? "")?.[1];
  } catch {
    // a receipt without the version
  }
  return version ?? undefined; // never null here (set to undefined above); tsc cannot tell across the try
}

/**
 * A codex call's receipts: one per `turn.completed` (tokens, no cost; a resumed thread's
 * cumulative usage diffed against what it reported before). Sent by report.ts.
 */
export function codexReceipts(spec: { cli: string; args: string[] }, events: Json[], env: Vars = process.env): Receipt[] {
  let thread: string | undefined;
  const receipts: Receipt[] = [];
  for (const event of events) {
    if (event.type === "thread.started" && typeof event.thread_id === "string") thread = event.thread_id;
    const usage = event.type === "turn.completed" ? usageOf(event.usage) : undefined;
    if (!usage) continue;
    const tokens = receiptTokens(thread ? usageDelta(usage, updateThreads(env, thread, usage)) : usage);
    const model = codexModel(spec.args, env);
    const agentVersion = codexVersion(spec.cli);
    receipts.push({ tokens, agent: "codex", provider: "openai", ...(model ? { model } : {}), ...(agentVersion ? { agentVersion } : {}) });
  }
  return receipts;
}

/**
 * The environment codex runs in. Codex's own sandbox (`--sandbox read-only`, converge's judge)
 * runs each tool call through bubblewrap: its bundled bwrap when none is on PATH, else the system's
 * (so that an AppArmor profile for /usr/bin/bwrap applies). A system bwrap older than 0.9 (Debian
 * 12's 0.8.0) has no `--argv0`, so codex then starts its helper by the name `codex-linux-sandbox`,
 * found through an alias it links in $CODEX_HOME/tmp/arg0 and puts first on PATH; it refuses to
 * link that alias when CODEX_HOME is under the temporary directory (TMPDIR, else /tmp), and every
 * tool call then fails: `bwrap: execvp codex-linux-sandbox: No such file or directory`. Such a
 * CODEX_HOME (a CI job's, a test's) gets TMPDIR set to the run's own scratch directory
 * (LOOPX_TMPDIR, removed when the run ends), which it is not under; any other keeps TMPDIR as is.
 * Only for a codex that sandboxes its tools (not under --dangerously-bypass-approvals-and-sandbox).
 */
export function codexEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv | undefined {
  const scratch = env.LOOPX_TMPDIR;
  if (!scratch) return undefined;
  const home = env.CODEX_HOME || join(env.HOME || homedir(), ".codex");
  const tmp = (env.TMPDIR || "/tmp").replace(/\/+$/, "") || "/";
  const under = (path: string, dir: string): boolean => path === dir || path.startsWith(dir === "/" ? "/" : `${dir}/`);
  if (!under(home, tmp) || under(home, scratch)) return undefined;
  return { ...env, TMPDIR: scratch };
}
