// One failure vocabulary for every agent CLI the workflows drive: why an agent call did not
// succeed, read from the CLI's STRUCTURED fields first (one row per CLI in FAILURE_READERS), and
// from its words only when those say nothing (TEXT_PATTERNS). Each failure keeps its class and
// its evidence (the field and its value, or the text that matched), and each class has a policy
// (POLICIES: what the loop does about it), which the workflow's config can override
// (FAILURE_POLICY_<CLASS>=stop|park|backoff|fresh|retry|fail). Shared by the ralph and converge
// workflows; documented in docs/workflows-failures.md.
//
// How each CLI says a call failed (recorded from the real CLIs against local stand-ins:
// test/fixtures/agents/streams/):
// - claude: exit 0 or 1 and a `result` with is_error, api_error_status, subtype; `assistant`
//   messages with `error` (authentication_failed, rate_limit, billing_error, server_error, …);
//   `system`/`api_retry` (error_status, retry_delay_ms); `rate_limit_event` rejected (resetsAt).
// - codex: `turn.failed` / `error` with the message (usage limits: "try again at 3:05 PM").
// - gemini: exit code = HTTP status & 0xff (401→145, 429→173, 500→244, 503→247), 41 bad auth
//   configuration, 53 turn limit; a `result` with status "error" and the API's error body.
// - opencode: exit 1 and one `error` event {name, data:{statusCode, isRetryable, responseHeaders}}.
// - pi: exit 0 (!) and the last assistant `message_end` with stopReason "error" and errorMessage
//   "<status> <message>".
// - qwen: exit 0 and a `result` with subtype "success", is_error false, and "[API Error: <status> …]"
//   as its text.
// - copilot: exit 1, `model.call_failure` {statusCode} per try, `session.error` {errorType, statusCode}.
import type { AgentType } from "./agent.ts";
import { codexResetTime } from "./codex.ts";

type Json = Record<string, any>;

export const FAILURE_CLASSES = ["auth", "usage_window", "rate_limit", "overload", "server", "context_overflow", "success_with_error", "hang", "budget", "tool_or_cli_crash", "unknown"] as const;
export type FailureClass = (typeof FAILURE_CLASSES)[number];

/**
 * What the loop does about a failed call:
 * - stop: end the loop at once, one line, no retry (nothing a retry could fix);
 * - park: wait for the window's reset (LIMIT_BACKOFF when no reset time is given), shared with
 *   the other loops on the account; the wait is no retry (bounded by MAX_LIMIT_WAIT);
 * - backoff: a retry after the CLI's retry hint or RETRY_BACKOFF, whichever is longer;
 * - fresh: one more attempt in a fresh session (nothing resumed), then the iteration fails;
 * - retry: a retry after RETRY_BACKOFF (MAX_RETRIES bounds them);
 * - fail: the iteration fails at once.
 */
export const POLICY_ACTIONS = ["stop", "park", "backoff", "fresh", "retry", "fail"] as const;
export type PolicyAction = (typeof POLICY_ACTIONS)[number];

export const POLICIES: Record<FailureClass, PolicyAction> = {
  auth: "stop",
  usage_window: "park",
  rate_limit: "park",
  overload: "backoff",
  server: "backoff",
  context_overflow: "fresh",
  success_with_error: "retry",
  hang: "retry",
  budget: "stop",
  tool_or_cli_crash: "retry",
  unknown: "retry",
};

export interface Failure {
  class: FailureClass;
  /** The field and its value (`result.api_error_status=401`), or the text that matched. */
  evidence: string;
  /** The HTTP status, when the CLI gave one. */
  status?: number;
  /** When the window resets (ms since 1970), when the CLI said. */
  resetsAt?: number;
  /** The window's name as the CLI gives it (five_hour, seven_day, …). */
  window?: string;
  /** How long the CLI said to wait before trying again. */
  retryAfterMs?: number;
}

/** What one finished call left behind, for classifying it. */
export interface CallOutcome {
  events: Json[];
  code: number | null;
  signal: string | null;
  /** The idle watchdog ended it. */
  idle?: boolean;
  /** It could not be started (spawn error). */
  spawnError?: string;
  stderr: string[];
}

const CONTEXT_TEXT = /context[ _-]?(length|window)|prompt is too long|maximum context|too many tokens|input (token count \(\d+\) )?(is too long|exceeds)|token limit exceeded/i;
const USAGE_WINDOW_TEXT = /usage limit|session limit|weekly limit|monthly (usage )?limit|hit your limit|quota (exceeded|exhausted)|exceeded your current quota|premium requests/i;
const oneLine = (text: unknown, max = 200): string => {
  const line = String(text ?? "").replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

/** The class of an HTTP status (with the message, for the 400s and 429s that say more). */
export function statusClass(status: number, message = ""): FailureClass {
  if (CONTEXT_TEXT.test(message)) return "context_overflow";
  if (status === 401 || status === 403) return "auth";
  if (status === 429) return USAGE_WINDOW_TEXT.test(message) ? "usage_window" : "rate_limit";
  if (status === 503 || status === 529) return "overload";
  if (status >= 500 && status <= 599) return "server";
  if (status === 402) return "budget";
  return "unknown";
}

function fromStatus(status: number, field: string, message = "", extra: Partial<Failure> = {}): Failure {
  const cls = statusClass(status, message);
  const resetsAt = cls === "usage_window" ? (extra.resetsAt ?? resetInText(message)) : extra.resetsAt;
  return { class: cls, evidence: `${field}=${status}${message ? ` (${oneLine(message, 120)})` : ""}`, status, ...extra, ...(resetsAt !== undefined ? { resetsAt } : {}) };
}

/**
 * A usage window's reset named in the API's words, "resets at 2030-01-01T00:00:00Z" (the CLIs
 * pass the API's message on, not a field of it): an ISO time with its zone only, since a time
 * without one could be any zone's. A reset already past parks no time.
 */
function resetInText(text: string): number | undefined {
  const at = /\breset(?:s|ting)?\b[^.\n]{0,40}?\b(?:at|on)\s+(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2}))/i.exec(text)?.[1];
  const time = at === undefined ? NaN : Date.parse(at.replace(" ", "T"));
  return Number.isFinite(time) ? time : undefined;
}

const lastOf = (events: Json[], match: (e: Json) => boolean): Json | undefined => [...events].reverse().find(match);
const num = (value: unknown): number | undefined => (typeof value === "number" && Number.isFinite(value) ? value : typeof value === "string" && /^\d+$/.test(value) ? Number(value) : undefined);

/** A retry hint from response headers: retry-after-ms, else retry-after (seconds or a date). */
function retryAfter(headers: Json | undefined, now = Date.now()): number | undefined {
  if (!headers || typeof headers !== "object") return undefined;
  const get = (name: string) => Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  const ms = num(get("retry-after-ms"));
  if (ms !== undefined) return ms;
  const after = get("retry-after");
  if (num(after) !== undefined) return num(after)! * 1000;
  const date = typeof after === "string" ? Date.parse(after) : NaN;
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

/**
 * "Please retry in 37.5s", "retryDelay":"37s", "Suggested retry after 7s." (Gemini CLI's words for
 * the google.rpc.RetryInfo of a 429): Google's and others' hints in words.
 */
function retryInText(text: string): number | undefined {
  const match = /retry (?:in|after) ([\d.]+)\s*(ms|s)\b|"retryDelay"\s*:\s*"([\d.]+)s"/i.exec(text);
  if (!match) return undefined;
  return match[3] !== undefined ? Number(match[3]) * 1000 : Number(match[1]) * (match[2] === "ms" ? 1 : 1000);
}

const CLAUDE_ERRORS: Record<string, FailureClass> = {
  authentication_failed: "auth",
  oauth_org_not_allowed: "auth",
  billing_error: "budget",
  rate_limit: "rate_limit",
  overloaded: "overload",
  server_error: "server",
};

/** Claude Code (claude) and amp (the same shapes). */
function claudeFailure(events: Json[]): Failure | undefined {
  const result = lastOf(events, (e) => e.type === "result");
  const rejected = events.find((e) => e.type === "rate_limit_event" && e.rate_limit_info?.status === "rejected")?.rate_limit_info;
  if (rejected) {
    const resetsAt = num(rejected.resetsAt) !== undefined ? rejected.resetsAt * 1000 : undefined;
    const cls: FailureClass = resetsAt !== undefined ? "usage_window" : "rate_limit";
    return { class: cls, evidence: `rate_limit_event.status=rejected${rejected.rateLimitType ? ` rateLimitType=${rejected.rateLimitType}` : ""}`, status: 429, resetsAt, window: rejected.rateLimitType };
  }
  const text = typeof result?.result === "string" ? result.result : "";
  const retry = lastOf(events, (e) => e.type === "system" && e.subtype === "api_retry");
  const retryAfterMs = num(retry?.retry_delay_ms);
  if (result?.is_error === true && num(result.api_error_status) !== undefined) return fromStatus(result.api_error_status, "result.api_error_status", text, { retryAfterMs });
  if (result?.is_error === true && /^error_max_(turns|budget)/.test(String(result.subtype))) return { class: "budget", evidence: `result.subtype=${result.subtype}` };
  if (result?.is_error === true && typeof result.terminal_reason === "string" && /prompt_too_long|context/.test(result.terminal_reason)) return { class: "context_overflow", evidence: `result.terminal_reason=${result.terminal_reason}` };
  const flagged = lastOf(events, (e) => e.type === "assistant" && typeof e.error === "string");
  if (result?.is_error === true && flagged && CLAUDE_ERRORS[flagged.error]) return { class: CLAUDE_ERRORS[flagged.error]!, evidence: `assistant.error=${flagged.error}`, retryAfterMs };
  if (result?.is_error === true && num(retry?.error_status) !== undefined) return fromStatus(retry!.error_status, "system.api_retry.error_status", text, { retryAfterMs });
  if (result?.is_error === true) return textFailure(text, "result.result") ?? { class: "success_with_error", evidence: `result.is_error=true${result.subtype ? ` subtype=${result.subtype}` : ""}: ${oneLine(text, 120)}` };
  return undefined;
}

/** codex exec --json: the failure's message is its only field; statuses and limits are read from it. */
function codexFailureClass(events: Json[]): Failure | undefined {
  const failed = lastOf(events, (e) => e.type === "turn.failed");
  const error = lastOf(events, (e) => e.type === "error" && !/^Reconnecting\b/.test(String(e.message ?? "")));
  const message = String(failed?.error?.message ?? error?.message ?? "");
  if (!failed && !error) return undefined;
  const field = failed ? "turn.failed.error.message" : "error.message";
  const info = failed?.error?.codex_error_info ?? error?.codex_error_info;
  if (/usage_limit_reached|usage limit/i.test(message) || info === "usage_limit_exceeded") {
    return { class: "usage_window", evidence: `${field}: ${oneLine(message, 120)}`, status: 429, resetsAt: codexResetTime(message) };
  }
  if (typeof info === "string" && /context_window/.test(info)) return { class: "context_overflow", evidence: `codex_error_info=${info}` };
  const status = /\b(?:status:?|status code)\s*(\d{3})\b/i.exec(message)?.[1] ?? /\b(401|403|429|500|502|503|504|529)\b/.exec(message)?.[1];
  if (status) return fromStatus(Number(status), field, message);
  return textFailure(message, field);
}

/** Gemini CLI: the API's error body in the result, else the exit code (HTTP status & 0xff). */
function geminiFailure(events: Json[], outcome: CallOutcome): Failure | undefined {
  const result = lastOf(events, (e) => e.type === "result");
  const message = String(result?.error?.message ?? "");
  const retryAfterMs = retryInText(message);
  const code = num(result?.error?.code) ?? num(/"code"\s*:\s*(\d{3})/.exec(message)?.[1]) ?? num(/\[API Error:[^\d]*(\d{3})\b/.exec(message)?.[1]);
  if (code !== undefined && code >= 400) return fromStatus(code, "result.error.code", message, { retryAfterMs });
  const exit = outcome.code;
  if (exit === 41) return { class: "auth", evidence: "exit=41 (gemini: auth configuration)" };
  if (exit === 53) return { class: "budget", evidence: "exit=53 (gemini: turn limit)" };
  const statuses = [400, 401, 403, 404, 429, 500, 502, 503, 504, 529];
  const status = exit !== null && exit > 0 ? statuses.find((s) => (s & 0xff) === exit) : undefined;
  if (status !== undefined) return fromStatus(status, `exit=${exit} (HTTP status & 0xff)`, message, { retryAfterMs });
  if (result?.status === "error") return textFailure(message, "result.error.message") ?? { class: exit === 0 ? "success_with_error" : "unknown", evidence: `result.status=error: ${oneLine(message, 120)}` };
  return undefined;
}

/** opencode run --format json: one `error` event. */
function opencodeFailure(events: Json[]): Failure | undefined {
  const event = lastOf(events, (e) => e.type === "error");
  if (!event) return undefined;
  const error = event.error ?? {};
  const data = error.data ?? {};
  const message = String(data.message ?? error.message ?? "");
  const status = num(data.statusCode);
  const retryAfterMs = retryAfter(data.responseHeaders);
  if (status !== undefined) return fromStatus(status, `error.data.statusCode`, `${message} ${String(data.responseBody ?? "")}`, { retryAfterMs });
  if (/ProviderAuthError|AuthError/.test(String(error.name))) return { class: "auth", evidence: `error.name=${error.name}` };
  if (/ContextOverflow|OutputLength/.test(String(error.name))) return { class: "context_overflow", evidence: `error.name=${error.name}` };
  return textFailure(message, "error.data.message") ?? { class: "unknown", evidence: `error.name=${error.name ?? "?"}: ${oneLine(message, 120)}` };
}

/** pi --mode json: the last assistant message stopped with "error"; its message starts with the status. */
function piFailure(events: Json[]): Failure | undefined {
  const end = lastOf(events, (e) => (e.type === "message_end" || e.type === "turn_end") && e.message?.role === "assistant");
  const message = end?.message;
  if (message?.stopReason !== "error") return undefined;
  const text = String(message.errorMessage ?? "");
  const status = num(/^\s*(\d{3})\b/.exec(text)?.[1]);
  if (status !== undefined) return fromStatus(status, "message.stopReason=error errorMessage", text, { retryAfterMs: retryInText(text) });
  return textFailure(text, "message.errorMessage") ?? { class: "success_with_error", evidence: `message.stopReason=error: ${oneLine(text, 120)}` };
}

/** qwen -o stream-json: a "success" result whose text is "[API Error: 401 …]". */
function qwenFailure(events: Json[]): Failure | undefined {
  const result = lastOf(events, (e) => e.type === "result");
  if (!result) return undefined;
  const text = typeof result.result === "string" ? result.result : typeof result.error?.message === "string" ? result.error.message : "";
  const api = /^\s*\[API Error:\s*(?:[^\d\]]*?)(\d{3})?\b([^\]]*)/.exec(text);
  if (api?.[1]) return fromStatus(Number(api[1]), `result.result "[API Error: ${api[1]}…]"${result.is_error ? "" : " (reported as success)"}`, text);
  if (api || result.is_error === true) return textFailure(text, "result.result") ?? { class: "success_with_error", evidence: `result: ${oneLine(text, 120)}` };
  return undefined;
}

const COPILOT_ERRORS: Record<string, FailureClass> = { authentication: "auth", rate_limit: "rate_limit", context_length: "context_overflow", quota: "usage_window" };

/** copilot --output-format json: session.error {errorType, statusCode}. */
function copilotFailure(events: Json[]): Failure | undefined {
  const error = lastOf(events, (e) => e.type === "session.error");
  const data = error?.data ?? error;
  if (!data) return undefined;
  const message = String(data.message ?? "");
  const status = num(data.statusCode);
  if (status !== undefined) return fromStatus(status, `session.error.statusCode`, message);
  const type = String(data.errorType ?? "");
  if (COPILOT_ERRORS[type]) return { class: COPILOT_ERRORS[type]!, evidence: `session.error.errorType=${type}` };
  return textFailure(message, "session.error.message") ?? { class: "unknown", evidence: `session.error.errorType=${type || "?"}: ${oneLine(message, 120)}` };
}

/** cline --json: say "error" / "api_req_failed" text. */
function clineFailure(events: Json[]): Failure | undefined {
  const error = lastOf(events, (e) => e.type === "say" && (e.say === "error" || e.say === "api_req_failed"));
  if (!error) return undefined;
  const text = String(error.text ?? "");
  const status = num(/\b(401|403|429|500|502|503|504|529)\b/.exec(text)?.[1]);
  return status !== undefined ? fromStatus(status, `say.${error.say}`, text) : textFailure(text, `say.${error.say}`);
}

/** The table: each CLI's reader of its structured fields. Adding a CLI adds one row. */
export const FAILURE_READERS: Record<AgentType, (events: Json[], outcome: CallOutcome) => Failure | undefined> = {
  claude: claudeFailure,
  amp: claudeFailure,
  codex: codexFailureClass,
  cline: clineFailure,
  gemini: geminiFailure,
  opencode: opencodeFailure,
  pi: piFailure,
  qwen: qwenFailure,
  copilot: copilotFailure,
};

/** The fallback: a CLI's words, when its fields said nothing. The first pattern that matches wins. */
export const TEXT_PATTERNS: Array<[FailureClass, RegExp]> = [
  ["context_overflow", CONTEXT_TEXT],
  ["usage_window", USAGE_WINDOW_TEXT],
  ["auth", /not logged in|please run \/login|\/login|invalid (api[ _-]?)?key|api key (is )?(missing|not (set|found|valid))|unauthori[sz]ed|authentication (failed|required|error)|token (has )?expired|log ?in (first|required)|no credentials|"type"\s*:\s*"(authentication|permission)_error"/i],
  ["rate_limit", /rate[ _-]?limit|too many requests|\b429\b/i],
  ["overload", /overloaded|service unavailable|\b(503|529)\b/i],
  // The API's error body passed on as text: OpenAI's and Anthropic's `type` of a server fault.
  ["server", /internal server error|bad gateway|gateway timeout|\b50[0-4]\b|"type"\s*:\s*"(server|api)_error"/i],
];

/** The class a text says, with the matched words as the evidence. */
export function textFailure(text: string, field = "text"): Failure | undefined {
  for (const [cls, pattern] of TEXT_PATTERNS) {
    const match = pattern.exec(text);
    if (match) return { class: cls, evidence: `${field} matched "${match[0]}": ${oneLine(text, 120)}`, retryAfterMs: retryInText(text) };
  }
  return undefined;
}

/**
 * Why a call failed, as a class with its evidence — the caller knows it failed (`failure` is the
 * one-line reason it has). Order: could not start, the idle watchdog, the CLI's structured fields,
 * its words (stream, then stderr), then what the exit says.
 */
export function classifyFailure(type: AgentType, outcome: CallOutcome): Failure {
  if (outcome.spawnError) return { class: "tool_or_cli_crash", evidence: `spawn: ${outcome.spawnError}` };
  if (outcome.idle) return { class: "hang", evidence: "idle watchdog: no progress in the stream" };
  const structured = FAILURE_READERS[type](outcome.events, outcome);
  if (structured) return structured;
  const stderr = outcome.stderr.join("\n");
  const words = textFailure(stderr, "stderr");
  if (words) return words;
  if (outcome.signal) return { class: "tool_or_cli_crash", evidence: `killed by ${outcome.signal}` };
  if (outcome.code !== 0 && outcome.code !== null) return { class: outcome.events.length === 0 ? "tool_or_cli_crash" : "unknown", evidence: `exit=${outcome.code}${stderr ? `: ${oneLine(outcome.stderr[outcome.stderr.length - 1], 120)}` : ""}` };
  return { class: outcome.events.length === 0 ? "tool_or_cli_crash" : "success_with_error", evidence: outcome.events.length === 0 ? "exit=0, no JSON events" : "exit=0, the stream says the call did not finish" };
}

/**
 * The failure a stream reports although the call may have exited 0 (pi, qwen, claude's is_error):
 * such a call failed, whatever its exit code says. Undefined when the stream shows no failure.
 */
export function streamError(type: AgentType, events: Json[], code: number | null): Failure | undefined {
  const failure = FAILURE_READERS[type](events, { events, code, signal: null, stderr: [] });
  return failure && code === 0 && failure.class === "unknown" ? { ...failure, class: "success_with_error" } : failure;
}

/** The policy per class: POLICIES, overridden by FAILURE_POLICY_<CLASS> (upper case) in `vars`. Throws naming a bad value. */
export function failurePolicies(vars: Record<string, string | undefined>): Record<FailureClass, PolicyAction> {
  const out = { ...POLICIES };
  for (const cls of FAILURE_CLASSES) {
    const name = `FAILURE_POLICY_${cls.toUpperCase()}`;
    const value = vars[name]?.trim();
    if (!value) continue;
    if (!(POLICY_ACTIONS as readonly string[]).includes(value)) throw new Error(`${name} must be one of ${POLICY_ACTIONS.join(", ")}, got ${JSON.stringify(value)}`);
    out[cls] = value as PolicyAction;
  }
  return out;
}

/** `auth (result.api_error_status=401 (…))` for messages and logs. */
export const failureText = (failure: Failure): string => `${failure.class} (${failure.evidence})`;
