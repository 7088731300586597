// Usage-window caps (LIMIT_CAP_5H, LIMIT_CAP_7D): a percentage of a subscription window above
// which no new agent call starts. Over the 5 h cap the call waits for the window's reset (as for
// a usage limit); over the 7 d cap the loop ends resumable (exit 75, `loopx runs resume <id>`).
// Shared by the ralph and converge workflows.
//
// Where the used share comes from (a window snapshot: window, used %, resetsAt, source):
// - claude: `rate_limit_event`s (`rateLimitType` five_hour / seven_day*, `utilization` a fraction;
//   optional in the stream: Claude sends it at allowed_warning or rejected).
// - codex: the session rollout ($CODEX_HOME/sessions/YYYY/MM/DD/rollout-…-<thread id>.jsonl), the
//   last `token_count` event's `rate_limits` {primary|secondary: {used_percent, window_minutes
//   (300: 5h, 10080: 7d), resets_at (epoch s) | resets_in_seconds}}.
// - LIMIT_PROBE: a shell command run before each call, printing
//   {"5h":{"usedPercent":85,"resetsAt":"2026-11-28T15:00:00Z"},"7d":{"usedPercent":40,"resetsAt":1796000000}}
//   (resetsAt ISO 8601 or epoch seconds, optional).
// The snapshots are shared between the loops of one account in the limits file (limits.ts).
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { UsageWindow } from "./usage.ts";
import type { Vars } from "./util.ts";

type Json = Record<string, any>;

export type WindowName = "5h" | "7d";
export type SnapshotSource = "claude-stream" | "codex-rollout" | "probe";

export interface WindowSnapshot {
  window: WindowName;
  /** 0-100 (may pass 100). */
  usedPercent: number;
  /** When the window resets (ms since 1970), when known. */
  resetsAt?: number;
  source: SnapshotSource;
  /** When it was read (ms since 1970). */
  seenAt: number;
}

export interface Caps {
  "5h"?: number;
  "7d"?: number;
  /** LIMIT_PROBE: the shell command that prints the windows' use. */
  probe?: string;
}

/** A snapshot without a reset time counts this long after it was seen. */
export const NO_RESET_TTL_MS = 10 * 60_000;

const CAP_VARS: Record<WindowName, string> = { "5h": "LIMIT_CAP_5H", "7d": "LIMIT_CAP_7D" };

/** LIMIT_CAP_5H, LIMIT_CAP_7D ("80" or "80%", 0 < x ≤ 100) and LIMIT_PROBE; throws one line naming the variable. */
export function readCaps(vars: Vars): Caps {
  const caps: Caps = {};
  for (const window of ["5h", "7d"] as const) {
    const name = CAP_VARS[window];
    const raw = vars[name]?.trim();
    if (!raw) continue;
    const match = /^(\d+(?:\.\d+)?)\s*%?$/.exec(raw);
    const value = match ? Number(match[1]) : Number.NaN;
    if (!(value > 0 && value <= 100)) throw new Error(`${name}=${raw}: not a percentage above 0 and at most 100 (e.g. 80 or 80%)`);
    caps[window] = value;
  }
  if (vars.LIMIT_PROBE?.trim()) caps.probe = vars.LIMIT_PROBE;
  return caps;
}

const percent = (value: unknown): number | undefined => (typeof value === "number" && Number.isFinite(value) && value >= 0 && value <= 1000 ? value : undefined);

/** five_hour → 5h; seven_day, seven_day_opus, seven_day_sonnet … → 7d; anything else: none. */
function claudeWindow(type: unknown): WindowName | undefined {
  if (type === "five_hour") return "5h";
  return typeof type === "string" && type.startsWith("seven_day") ? "7d" : undefined;
}

/** The windows Claude's `rate_limit_event`s reported with a utilization (the last of each window). */
export function claudeSnapshots(events: Json[], now = Date.now()): WindowSnapshot[] {
  const byWindow = new Map<WindowName, WindowSnapshot>();
  for (const event of events) {
    const info = event.type === "rate_limit_event" ? event.rate_limit_info : undefined;
    const window = claudeWindow(info?.rateLimitType);
    const used = percent(info?.utilization);
    if (!window || used === undefined) continue;
    const resetsAt = typeof info.resetsAt === "number" && info.resetsAt > 0 ? info.resetsAt * 1000 : undefined;
    byWindow.set(window, { window, usedPercent: Math.round(used * 10_000) / 100, resetsAt, source: "claude-stream", seenAt: now });
  }
  return [...byWindow.values()];
}

function codexWindow(minutes: unknown): WindowName | undefined {
  if (minutes === 300) return "5h";
  return minutes === 10080 ? "7d" : undefined;
}

/** The rate limits of a codex session rollout (its text): the last `token_count` event that has them. */
export function codexRolloutSnapshots(text: string, now = Date.now()): WindowSnapshot[] {
  let last: { limits: Json; at: number } | undefined;
  for (const line of text.split("\n")) {
    if (!line.includes("rate_limits")) continue;
    try {
      const entry = JSON.parse(line);
      const payload = entry?.payload ?? entry;
      if (payload?.type !== "token_count" || !payload.rate_limits || typeof payload.rate_limits !== "object") continue;
      const at = typeof entry.timestamp === "string" ? Date.parse(entry.timestamp) : Number.NaN;
      last = { limits: payload.rate_limits, at: Number.isNaN(at) ? now : at };
    } catch {
      // a line being written, or not JSON
    }
  }
  if (!last) return [];
  const out: WindowSnapshot[] = [];
  for (const key of ["primary", "secondary"]) {
    const limit = last.limits[key];
    const window = codexWindow(limit?.window_minutes);
    const used = percent(limit?.used_percent);
    if (!window || used === undefined) continue;
    const resetsAt = typeof limit.resets_at === "number" ? limit.resets_at * 1000 : typeof limit.resets_in_seconds === "number" ? last.at + limit.resets_in_seconds * 1000 : undefined;
    out.push({ window, usedPercent: used, resetsAt, source: "codex-rollout", seenAt: now });
  }
  return out;
}

/** The rollout file of codex thread `thread` under `codexHome`/sessions (newest day first), if any. */
export function codexRolloutFile(codexHome: string, thread: string): string | undefined {
  const suffix = `-${thread}.jsonl`;
  const walk = (dir: string, depth: number): string | undefined => {
    if (!existsSync(dir)) return undefined;
    const names = readdirSync(dir, { withFileTypes: true }).sort((a, b) => b.name.localeCompare(a.name));
    for (const entry of names) {
      if (entry.isFile() && entry.name.startsWith("rollout-") && entry.name.endsWith(suffix)) return join(dir, entry.name);
      if (entry.isDirectory() && depth < 3) {
        const found = walk(join(dir, entry.name), depth + 1);
        if (found) return found;
      }
    }
    return undefined;
  };
  return walk(join(codexHome, "sessions"), 0);
}

/** The windows a codex call's rollout reported last (its thread from `thread.started`); none without one. */
export function codexSnapshots(events: Json[], codexHome: string, now = Date.now()): WindowSnapshot[] {
  const thread = events.find((e) => e.type === "thread.started" && typeof e.thread_id === "string")?.thread_id as string | undefined;
  if (!thread || !/^[\w-]+$/.test(thread)) return [];
  try {
    const file = codexRolloutFile(codexHome, thread);
    return file ? codexRolloutSnapshots(readFileSync(file, "utf8"), now) : [];
  } catch {
    return [];
  }
}

/** A time as the probe may give it: ISO 8601 or epoch seconds. */
function probeTime(value: unknown, name: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  const ms = typeof value === "number" && Number.isFinite(value) && value > 0 ? value * 1000 : typeof value === "string" && /^\d{4}-\d\d-\d\dT/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) throw new Error(`${name}.resetsAt is not an ISO 8601 time or epoch seconds: ${JSON.stringify(value)}`);
  return ms;
}

/** The snapshots in a probe's output (see the top of this file); throws one line on anything else. */
export function probeSnapshots(stdout: string, now = Date.now()): WindowSnapshot[] {
  let value: unknown;
  try {
    value = JSON.parse(stdout);
  } catch {
    throw new Error(`printed no JSON object: ${JSON.stringify(stdout.trim().slice(0, 80))}`);
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) throw new Error(`printed no JSON object: ${JSON.stringify(stdout.trim().slice(0, 80))}`);
  const out: WindowSnapshot[] = [];
  for (const window of ["5h", "7d"] as const) {
    const entry = (value as Json)[window];
    if (entry === undefined) continue;
    const used = percent(entry?.usedPercent);
    if (used === undefined) throw new Error(`${window}.usedPercent is not a percentage: ${JSON.stringify(entry?.usedPercent)}`);
    out.push({ window, usedPercent: used, resetsAt: probeTime(entry.resetsAt, window), source: "probe", seenAt: now });
  }
  if (out.length === 0) throw new Error(`reported neither "5h" nor "7d"`);
  return out;
}

/** Runs LIMIT_PROBE (`sh -c`, 30 s at most): its snapshots, or the one-line reason it gave none. */
export function runProbe(command: string, cwd: string, now = Date.now()): { snapshots: WindowSnapshot[]; warning?: string } {
  const run = spawnSync("sh", ["-c", command], { cwd, encoding: "utf8", timeout: 30_000, stdio: ["ignore", "pipe", "pipe"] });
  if (run.error || run.status !== 0) {
    const why = run.error ? run.error.message : `exited with code ${run.status ?? run.signal}`;
    const last = (run.stderr ?? "").trim().split("\n").pop();
    return { snapshots: [], warning: `LIMIT_PROBE ${why}${last ? `: ${last.slice(0, 160)}` : ""}` };
  }
  try {
    return { snapshots: probeSnapshots(run.stdout, now) };
  } catch (error) {
    return { snapshots: [], warning: `LIMIT_PROBE ${(error as Error).message}` };
  }
}

/** Still telling: its reset is ahead (or, without one, it was seen within NO_RESET_TTL_MS). */
export const current = (s: WindowSnapshot, now: number): boolean => (s.resetsAt !== undefined ? s.resetsAt > now : now - s.seenAt < NO_RESET_TTL_MS);

/** The newest current snapshot of each window. */
export function newestSnapshots(snapshots: WindowSnapshot[], now = Date.now()): WindowSnapshot[] {
  const byWindow = new Map<WindowName, WindowSnapshot>();
  for (const s of snapshots) {
    if (!current(s, now)) continue;
    const known = byWindow.get(s.window);
    if (!known || s.seenAt >= known.seenAt) byWindow.set(s.window, s);
  }
  return [...byWindow.values()];
}

export interface CapHit {
  snapshot: WindowSnapshot;
  cap: number;
  /** 7d: the loop ends resumable; 5h: the call waits for the reset. */
  hard: boolean;
  /** "5h usage window at 85% (LIMIT_CAP_5H=80%)". */
  text: string;
}

/** A snapshot as a receipt's `window` (status "seen": the used share was read, nothing refused). */
export function snapshotWindow(s: WindowSnapshot): UsageWindow {
  const window: UsageWindow = { type: s.window, status: "seen", utilization: Math.round(s.usedPercent * 100) / 10_000, source: s.source };
  if (s.resetsAt !== undefined) window.resetsAt = new Date(s.resetsAt).toISOString();
  return window;
}

const shown = (n: number): string => String(Math.round(n * 100) / 100);

/** The cap the newest snapshots are at or over (the 7 d window's first), if any. */
export function capHit(caps: Caps, snapshots: WindowSnapshot[], now = Date.now()): CapHit | undefined {
  const newest = newestSnapshots(snapshots, now);
  for (const window of ["7d", "5h"] as const) {
    const cap = caps[window];
    const snapshot = newest.find((s) => s.window === window);
    if (cap === undefined || !snapshot || snapshot.usedPercent < cap) continue;
    return { snapshot, cap, hard: window === "7d", text: `${window} usage window at ${shown(snapshot.usedPercent)}% (${CAP_VARS[window]}=${shown(cap)}%, from ${snapshot.source})` };
  }
  return undefined;
}
