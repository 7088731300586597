// Usage limits (subscription windows, 429s): read from each agent's stream, shared between the
// loops of one account on this machine, and waited out. Shared by the ralph and converge workflows.
//
// How the CLIs report a limit:
// - claude (2.x, subscriber): `{"type":"rate_limit_event","rate_limit_info":{"status":"rejected",
//   "resetsAt":<epoch s>,"rateLimitType":"five_hour"|"seven_day"|…}}`, then a synthetic assistant
//   message ("You've hit your session limit · resets 7:55pm") and a `result` with is_error and
//   api_error_status 429; it exits 1. The same event with status "allowed" comes on normal runs,
//   so the event alone is no reason to wait. A 429 without the unified headers: status "rejected"
//   and no resetsAt; API-key users: `system`/`api_retry` events, then a 429 result, no reset time.
// - codex: an `error` / `turn.failed` event "You’ve hit your usage limit. … try again at 3:05 PM."
//   (minute precision: waited to the end of that minute; see codex.ts).
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import * as loopx from "loopx";
import type { AgentSpec, AgentType } from "./agent.ts";
import { NO_RESET_TTL_MS, newestSnapshots, readCaps, type Caps, type WindowSnapshot } from "./caps.ts";
import { codexLimit } from "./codex.ts";
import { duration, durationVar, type Vars } from "./util.ts";

type Json = Record<string, any>;

export interface UsageLimit {
  /** When the limit resets (ms since 1970), when the agent said. */
  resetsAt?: number;
  /** five_hour, seven_day, usage_limit, rate_limit, … */
  kind: string;
  /** The agent's own words, one line. */
  message: string;
  /** Learnt from another loop on this account (the shared file), not from this agent call. */
  shared?: boolean;
  /** A usage-window cap, not the agent, holds the call (caps.ts): what to say instead of "usage limit (kind)". */
  cap?: string;
  /** The window snapshot over the cap. */
  snapshot?: WindowSnapshot;
}

const oneLine = (text: unknown): string => String(text ?? "").replace(/\s+/g, " ").trim().slice(0, 200);

/** The usage limit a failed agent call ran into, if that is why it failed. */
export function usageLimit(type: AgentType, events: Json[]): UsageLimit | undefined {
  if (type === "claude" || type === "amp") {
    const result = [...events].reverse().find((e) => e.type === "result");
    const rejected = events.find((e) => e.type === "rate_limit_event" && e.rate_limit_info?.status === "rejected")?.rate_limit_info;
    if (rejected) {
      const resetsAt = typeof rejected.resetsAt === "number" ? rejected.resetsAt * 1000 : undefined;
      return { resetsAt, kind: String(rejected.rateLimitType ?? "rate_limit"), message: oneLine(result?.result ?? "rate limit rejected") };
    }
    if (result?.is_error === true && result.api_error_status === 429) return { kind: "rate_limit", message: oneLine(result.result) };
    return undefined;
  }
  if (type === "codex") return codexLimit(events);
  return undefined;
}

export interface LimitPolicy {
  /** The workflow's name, the prefix of its lines. */
  name: string;
  /** Who shares limits: the agent type and its account (config directory, or AGENT_ACCOUNT). */
  account: string;
  /** The file the loops of this machine share limits in. */
  file: string;
  /** Added to a reset time (the agent's clock and ours differ a little). */
  marginMs: number;
  /** First wait for a limit without a reset time; doubles while they keep coming, up to 30 min. */
  backoffMs: number;
  /** MAX_LIMIT_WAIT: the total a run may wait for limits. */
  maxWaitMs: number;
  maxWaitText: string;
  /** Waited so far in this run (the caller keeps it across iterations). */
  waited: { ms: number };
  /** Set when a wait would exceed MAX_LIMIT_WAIT: the reason the run ends. */
  exceeded?: string;
  /** The session log. */
  log(text: string): void;
  /** LIMIT_CAP_5H, LIMIT_CAP_7D, LIMIT_PROBE (caps.ts). */
  caps: Caps;
  /** Where LIMIT_PROBE runs (the project root). */
  cwd: string;
  /** CODEX_HOME of a codex agent (its session rollouts give the windows' use). */
  codexHome?: string;
}

const MAX_BACKOFF_MS = 30 * 60_000;

/** The limits file: $XDG_STATE_HOME/loopx/workflows/agent-limits.json (default ~/.local/state/…). */
export function limitsFile(env: Vars = process.env): string {
  const state = env.XDG_STATE_HOME || join(env.HOME || homedir(), ".local", "state");
  return join(state, "loopx", "workflows", "agent-limits.json");
}

/** LIMIT_MARGIN (10s), LIMIT_BACKOFF (60s), MAX_LIMIT_WAIT (6h), AGENT_ACCOUNT, the caps (caps.ts). */
export function limitPolicy(name: string, vars: Vars, spec: AgentSpec, waited: { ms: number }, log: (text: string) => void): LimitPolicy {
  const home = vars.HOME || homedir();
  const configDir = spec.type === "claude" ? vars.CLAUDE_CONFIG_DIR || join(home, ".claude") : spec.type === "codex" ? vars.CODEX_HOME || join(home, ".codex") : home;
  return {
    name,
    account: `${spec.type}:${vars.AGENT_ACCOUNT || configDir}`,
    file: limitsFile(vars),
    marginMs: durationVar(vars, "LIMIT_MARGIN", 10_000),
    backoffMs: durationVar(vars, "LIMIT_BACKOFF", 60_000),
    maxWaitMs: durationVar(vars, "MAX_LIMIT_WAIT", 6 * 3600_000),
    maxWaitText: vars.MAX_LIMIT_WAIT || "6h",
    waited,
    log,
    caps: readCaps(vars),
    cwd: vars.LOOPX_PROJECT_ROOT || process.cwd(),
    codexHome: spec.type === "codex" ? configDir : undefined,
  };
}

interface SharedEntry {
  until: number;
  kind: string;
  message: string;
  seenAt: number;
}

function readShared(file: string): Record<string, SharedEntry> {
  try {
    const value = JSON.parse(readFileSync(file, "utf8"));
    return value && typeof value === "object" ? value : {};
  } catch {
    return {};
  }
}

/** A limit another loop on this account recorded and that has not reset yet. */
export function sharedLimitUntil(policy: LimitPolicy, now = Date.now()): UsageLimit | undefined {
  if (!existsSync(policy.file)) return undefined;
  const entry = readShared(policy.file)[policy.account];
  if (!entry || typeof entry.until !== "number" || entry.until <= now) return undefined;
  return { resetsAt: entry.until, kind: entry.kind, message: entry.message, shared: true };
}

function share(policy: LimitPolicy, entry: SharedEntry): void {
  writeShared(policy.file, policy.account, entry);
}

/**
 * Writes one entry of the limits file (atomically: another loop reads it whole or not at all);
 * entries whose `until` has passed are dropped. The account's limit is under its name, its
 * windows' snapshots under `windows:<account>` ({until, snapshots}).
 */
function writeShared<T extends { until: number }>(file: string, key: string, entry: T): void {
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const all = readShared(file) as Record<string, any>;
    for (const [name, value] of Object.entries(all)) if (!(value?.until > Date.now())) delete all[name];
    all[key] = entry;
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(all, null, 2) + "\n", { mode: 0o600 });
    renameSync(tmp, file);
  } catch {
    // Sharing is a courtesy to the other loops; this one waits all the same.
  }
}

/** The window snapshots the loops on this account shared (caps.ts), the newest of each window that still tells. */
export function sharedSnapshots(policy: LimitPolicy, now = Date.now()): WindowSnapshot[] {
  if (!existsSync(policy.file)) return [];
  const entry = (readShared(policy.file) as Record<string, any>)[`windows:${policy.account}`];
  const list: unknown[] = Array.isArray(entry?.snapshots) ? entry.snapshots : [];
  const valid = list.filter((s): s is WindowSnapshot => !!s && typeof s === "object" && ["5h", "7d"].includes((s as Json).window) && typeof (s as Json).usedPercent === "number" && typeof (s as Json).seenAt === "number");
  return newestSnapshots(valid, now);
}

/** Shares `snapshots` with the other loops on this account (the newest of each window is kept). */
export function shareSnapshots(policy: LimitPolicy, snapshots: WindowSnapshot[], now = Date.now()): void {
  if (snapshots.length === 0) return;
  const kept = newestSnapshots([...sharedSnapshots(policy, now), ...snapshots], now);
  if (kept.length === 0) return;
  const until = Math.max(...kept.map((s) => s.resetsAt ?? s.seenAt + NO_RESET_TTL_MS));
  writeShared(policy.file, `windows:${policy.account}`, { until, snapshots: kept });
}

export const clock = (ms: number): string => new Date(ms).toTimeString().slice(0, 8);

/** A note in the run's record (loopx's own addition; a loopx without it: nothing). */
export function note(text: string, data: Record<string, unknown>): void {
  try {
    (loopx as { note?: (text: string, data?: Record<string, unknown>) => boolean }).note?.(text, data);
  } catch {
    // The record is for watching the run; it never stops it.
  }
}

/**
 * Waits for `limit` to reset (plus the margin; a limit without a reset time: the back-off) —
 * one line on stderr, a countdown when stderr is a terminal, a line in the session log and a
 * note in the run's record. A limit this call saw is shared with the other loops first.
 * "exceeded" when the wait would take the run past MAX_LIMIT_WAIT (nothing is waited then).
 */
export async function parkForLimit(
  policy: LimitPolicy,
  limit: UsageLimit,
  stopping: () => boolean,
  inARow: number,
  shareIt = false,
): Promise<"resumed" | "interrupted" | "exceeded"> {
  const now = Date.now();
  const backoff = Math.min(MAX_BACKOFF_MS, policy.backoffMs * 2 ** Math.max(0, inARow - 1));
  const until = limit.shared ? limit.resetsAt! : limit.resetsAt !== undefined ? Math.max(now, limit.resetsAt) + policy.marginMs : now + backoff;
  const wait = until - now;
  const what = limit.cap ?? `usage limit (${limit.kind})${limit.shared ? " seen by another loop on this account" : ""}`;
  const data = { kind: "limit.wait", limit: limit.kind, ...(limit.cap ? { cap: limit.cap, snapshot: limit.snapshot } : {}), until: new Date(until).toISOString(), resetsAt: limit.resetsAt === undefined ? null : new Date(limit.resetsAt).toISOString(), shared: limit.shared === true };
  if (policy.waited.ms + wait > policy.maxWaitMs) {
    policy.exceeded = `${what}: waiting until ${clock(until)} (${duration(wait)}) would exceed MAX_LIMIT_WAIT=${policy.maxWaitText} (${duration(policy.waited.ms)} waited already)`;
    policy.log(`Usage limit: ${policy.exceeded}\n`);
    note(`${policy.name}: ${policy.exceeded}`, { ...data, kind: "limit.exceeded" });
    return "exceeded";
  }
  if (shareIt) share(policy, { until, kind: limit.kind, message: limit.message, seenAt: now });
  const why = limit.resetsAt !== undefined ? `resets ${clock(limit.resetsAt)}` : `no reset time given: backing off ${duration(wait)}`;
  const line = `${what} — ${why}; waiting until ${clock(until)} (${duration(wait)}), then ${limit.cap ? "the call starts" : "the same call runs again"}${limit.message ? ` [${limit.message}]` : ""}`;
  process.stderr.write(`${policy.name}: ${line}\n`);
  policy.log(`Usage limit: ${line}\n`);
  note(`${policy.name}: ${line}`, data);
  const tty = process.stderr.isTTY === true;
  const started = Date.now();
  let interrupted = false;
  while (Date.now() < until) {
    if (stopping()) {
      interrupted = true;
      break;
    }
    if (tty) process.stderr.write(`\r\x1b[K${policy.name}: waiting for the usage limit · ${duration(until - Date.now())} left`);
    await new Promise((resolve) => setTimeout(resolve, Math.min(250, Math.max(1, until - Date.now()))));
  }
  if (tty) process.stderr.write("\r\x1b[K");
  policy.waited.ms += Date.now() - started;
  if (interrupted) return "interrupted";
  policy.log(`Usage limit: waited ${duration(Date.now() - started)}, resuming\n`);
  return "resumed";
}
