// Running an agent CLI once (stream, stderr, idle limit) and with retries (usage limits park the
// attempt instead of counting as a failure). Shared by the ralph and converge workflows.
import { spawn } from "node:child_process";
import { appendFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { PRESETS, displayEvent, queryBalance, responseText, streamFailure, type AgentSpec } from "./agent.ts";
import { codexEnv, codexProgress } from "./codex.ts"; // codex: progress is a completed item or turn, not any event
import { classifyFailure, POLICIES, type Failure, type FailureClass, type PolicyAction } from "./failures.ts";
import { streamPreset } from "./presets/index.ts";
import { capsBeforeCall, windowsAfterCall } from "./cap-gate.ts";
import { parkForLimit, sharedLimitUntil, usageLimit, type LimitPolicy, type UsageLimit } from "./limits.ts";
import { CallUsage } from "./report.ts";
import { addCost, receiptsCost, type Cost, type Receipt } from "./usage.ts";
import { duration } from "./util.ts";

type Json = Record<string, any>;

export interface AgentResult {
  /** Exit code, or null when killed by a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
  events: Json[];
  /** The assistant's response text (see responseText). */
  response: string;
  /** What this invocation used, as reported to loopx (usage.ts), and its cost in USD by kind. */
  receipts: Receipt[];
  cost?: Cost;
  balance?: number;
  /** Why this invocation failed; undefined when it succeeded. */
  failure?: string;
  /** The failure's class and evidence (failures.ts); undefined when it succeeded. */
  failureClass?: Failure;
  /** The last lines the agent wrote on stderr (at most STDERR_TAIL_LINES). */
  stderrTail: string[];
}

export interface RunAgentOptions {
  cwd: string;
  /** Raw stdout is appended here, and the agent's stderr goes here (the session log). */
  logFile?: string;
  /** Raw stdout of this invocation, overwritten (last_agent_output). */
  rawFile?: string;
  /** Called with each rendered line of the live view; default: stderr. */
  display?: (text: string) => void;
  /** End the agent when it makes no progress for this long (AGENT_IDLE_TIMEOUT): no stream event (codex: no completed item or turn); 0: never. */
  idleMs?: number;
  /** The variable that set idleMs, for the message. */
  idleVar?: string;
}

/** How long to wait for stdout to close after the agent exited. */
const STDOUT_GRACE_MS = 1000;
/** After a stream event that ends the call (StreamPreset.endsCall): the time the CLI gets to exit by itself. */
const END_GRACE_MS = 2000;
/** Between SIGTERM and SIGKILL when the workflow ends the agent itself (idle limit). */
const KILL_GRACE_MS = 5000;
/** Lines of the agent's stderr kept for a failure report, and the length of each. */
export const STDERR_TAIL_LINES = 10;
const STDERR_LINE_CHARS = 300;

/** The agent currently running (so a signal handler can wait for it). */
export let activeAgent: Promise<unknown> | undefined;

/** Known reasons for an agent to fail, read from what it printed, in words a user can act on. */
function knownCause(spec: AgentSpec, text: string): string | undefined {
  if (/cannot be used with root\/sudo privileges/.test(text)) {
    return "Claude Code refuses --dangerously-skip-permissions as root: set IS_SANDBOX=1 if this is a sandbox or container, or run as another user";
  }
  if (/Not logged in|Please run \/login|Invalid API key|authentication_failed|Failed to authenticate/i.test(text)) {
    const login = spec.type === "claude" ? "run `claude` once and /login, or set ANTHROPIC_API_KEY" : spec.type === "codex" ? "run `codex login`" : (streamPreset(spec.type)?.loginFix ?? `log in with ${spec.cli} first`);
    return `${spec.cli} is not logged in: ${login}`;
  }
  return undefined;
}

/** Invokes the agent once with `prompt` on stdin and streams its output. */
export async function runAgent(spec: AgentSpec, prompt: string, options: RunAgentOptions): Promise<AgentResult> {
  const display = options.display ?? ((text: string) => process.stderr.write(text.endsWith("\n") ? text : `${text}\n`));
  const before = queryBalance(spec, options.cwd);
  if (options.rawFile) writeFileSync(options.rawFile, "");
  const events: Json[] = [];
  const stderrTail: string[] = [];
  let stderrPending = "";
  let pending = "";
  let idle = false;
  let idleTimer: NodeJS.Timeout | undefined;
  let group: number | undefined;
  const endGroup = (signal: NodeJS.Signals): void => {
    try {
      if (group !== undefined) process.kill(-group, signal);
    } catch {
      // already gone
    }
  };
  const armIdle = (): void => {
    if (!options.idleMs) return;
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => {
      idle = true;
      endGroup("SIGTERM");
      setTimeout(() => endGroup("SIGKILL"), KILL_GRACE_MS).unref();
    }, options.idleMs);
  };
  let ending: NodeJS.Timeout | undefined;
  const endSoon = (): void => {
    ending ??= setTimeout(() => {
      endGroup("SIGTERM");
      setTimeout(() => endGroup("SIGKILL"), KILL_GRACE_MS).unref();
    }, END_GRACE_MS);
    ending.unref();
  };
  const keepStderr = (line: string): void => {
    if (line.trim() === "") return;
    stderrTail.push(line.length > STDERR_LINE_CHARS ? `${line.slice(0, STDERR_LINE_CHARS - 1)}…` : line);
    if (stderrTail.length > STDERR_TAIL_LINES) stderrTail.shift();
  };
  const handleLine = (line: string): void => {
    if (line.trim() === "") return;
    let event: Json | undefined;
    try {
      const parsed = JSON.parse(line);
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) event = parsed;
    } catch {
      // not JSON: shown as is
    }
    if (!event) return display(line);
    events.push(event);
    if (spec.type === "codex" ? codexProgress(event) : (streamPreset(spec.type)?.progress(event) ?? true)) armIdle();
    // An error the CLI would not end on by itself (opencode retries a context overflow forever).
    if (streamPreset(spec.type)?.endsCall?.(event)) endSoon();
    try {
      const text = displayEvent(spec.type, event, events);
      if (text !== undefined && text !== "") display(text);
    } catch {
      // the live view is cosmetic: it never breaks the run
    }
  };
  // The agent runs in its own process group, so that it can be ended with everything it started
  // (idle limit); a signal this script gets is passed on to that group (and the usage so far is
  // reported if the agent is slow to go: report.ts).
  const usage = new CallUsage(spec, events);
  // Set once a signal this script got is passed on: the call was interrupted, not failed.
  let interrupted = false;
  const forward = (signal: NodeJS.Signals): void => {
    interrupted = true;
    endGroup(signal);
    usage.reportIfStillRunning(() => endGroup("SIGKILL"));
  };
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((resolveExit) => {
    let child;
    try {
      const own = spec.type === "codex" && !spec.args.includes("--dangerously-bypass-approvals-and-sandbox") ? codexEnv() : undefined;
      // PWD names the agent's cwd: spawn() keeps this process's, and a CLI that takes PWD as its
      // project (opencode) would otherwise work in the directory loopx was started from, not the
      // worktree.
      const env = { ...(own ?? process.env), PWD: resolve(options.cwd) };
      child = spawn(spec.cli, PRESETS[spec.type].promptArg ? [...spec.args, prompt] : spec.args, { cwd: options.cwd, stdio: ["pipe", "pipe", "pipe"], detached: true, env });
    } catch (error) {
      resolveExit({ code: 127, signal: null, error: error as Error });
      return;
    }
    group = child.pid;
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, forward);
    armIdle();
    child.on("error", (error) => resolveExit({ code: 127, signal: null, error }));
    child.stdin!.on("error", () => {}); // an agent that exits without reading its prompt
    child.stdin!.end(PRESETS[spec.type].promptArg ? "" : prompt);
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (chunk: string) => {
      if (options.logFile) appendFileSync(options.logFile, chunk);
      if (options.rawFile) appendFileSync(options.rawFile, chunk);
      pending += chunk;
      let newline: number;
      while ((newline = pending.indexOf("\n")) >= 0) {
        handleLine(pending.slice(0, newline));
        pending = pending.slice(newline + 1);
      }
    });
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      if (options.logFile) appendFileSync(options.logFile, chunk);
      stderrPending += chunk;
      const lines = stderrPending.split("\n");
      stderrPending = lines.pop()!;
      lines.forEach(keepStderr);
    });
    // Normally stdout closes as the agent exits. A process the agent left behind may hold the
    // pipe open (a tool's background job): give it a moment, then stop waiting for it.
    let settled = false;
    const settle = (code: number | null, signal: NodeJS.Signals | null): void => {
      if (settled) return;
      settled = true;
      resolveExit({ code, signal });
    };
    child.on("exit", (code, signal) => {
      setTimeout(() => {
        child.stdout!.destroy();
        child.stderr!.destroy();
        settle(code, signal);
      }, STDOUT_GRACE_MS).unref();
    });
    child.on("close", (code, signal) => settle(code, signal));
  });
  activeAgent = exit;
  const { code, signal, error } = await exit;
  activeAgent = undefined;
  clearTimeout(idleTimer);
  clearTimeout(ending);
  usage.exited();
  for (const name of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.off(name, forward);
  if (pending !== "") handleLine(pending);
  keepStderr(stderrPending);
  if (options.logFile && events.length > 0) appendFileSync(options.logFile, "\n");

  let failure: string | undefined;
  const preset = PRESETS[spec.type];
  if (error) {
    failure = (error as NodeJS.ErrnoException).code === "ENOENT" ? `agent CLI not found on PATH: ${spec.cli} (set ${spec.prefix}CLI to another command)` : `cannot start ${spec.cli}: ${error.message}`;
  } else if (idle) {
    failure = `${spec.type === "codex" ? "no completed item or turn" : "no stream event"} for ${duration(options.idleMs!)} (${options.idleVar ?? "AGENT_IDLE_TIMEOUT"}): ended ${spec.cli} and its processes`;
  } else if (signal) failure = `${spec.cli} was killed by ${signal}`;
  else if (code !== 0) failure = `${spec.cli} exited with code ${code}`;
  else if (events.length === 0) {
    failure = `no JSON events on stdout: ${spec.cli} streams JSON only with \`${preset.streamArgs}\` (arguments now: \`${spec.args.join(" ")}\`; to add arguments to the preset, set ${spec.prefix}EXTRA_ARGS instead of ${spec.prefix}ARGS)`;
  } else failure = streamFailure(spec.type, events);
  if (failure && !error && !idle) {
    const result = [...events].reverse().find((e) => e.type === "result");
    const cause = knownCause(spec, `${stderrTail.join("\n")}\n${typeof result?.result === "string" ? result.result : ""}`);
    if (cause) failure += ` — ${cause}`;
  }

  const failureClass = failure ? classifyFailure(spec.type, { events, code, signal, idle, spawnError: error?.message, stderr: stderrTail }) : undefined;
  if (failureClass?.class === "auth" && !/not logged in/.test(failure!)) failure += ` — ${spec.cli} is not logged in or its key was refused: ${streamPreset(spec.type)?.loginFix ?? "log in first"}`;
  // An interrupted call's receipts carry no failure class: the user or loopx ended it.
  const { receipts, balance } = usage.settle(before, () => queryBalance(spec, options.cwd), interrupted ? undefined : failureClass?.class);
  return { code, signal, events, response: responseText(spec.type, events), receipts, cost: receiptsCost(receipts), balance, failure, failureClass, stderrTail };
}

export interface RetriedResult extends AgentResult {
  /** Attempts after the first (this result may itself be a failure); waits for a usage limit do not count. */
  retries: number;
  /** Cost summed over every attempt, by kind. */
  totalCost?: Cost;
  failures: string[];
  /**
   * Set when the run must end resumable because of a usage limit (MAX_LIMIT_WAIT exceeded) or a
   * usage-window cap (LIMIT_CAP_7D): the reason. The workflow exits 75 with `loopx runs resume`.
   */
  limitExceeded?: string;
  /** Set when the failure's policy is `stop` (auth, budget): the loop ends at once, no retry. */
  stopped?: Failure;
}

export interface RetryOptions {
  maxRetries: number;
  /**
   * RETRY_BACKOFF: the wait after the first failed attempt; each further one doubles it (at most
   * MAX_RETRY_WAIT_MS), and each wait is jittered to 50-100 % of that, so that loops failing
   * together do not retry together. 0: retry at once.
   */
  backoffMs?: number;
  /** Logs each failed attempt, with the agent's last stderr lines and the wait before the next (0: none follows, or no wait). */
  onFailure: (attempt: number, failure: string, stderrTail: string[], waitMs: number) => void;
  /** True once the run is being interrupted: no further attempt or wait starts. */
  stopping?: () => boolean;
  /** Usage limits: park and run the same attempt again (absent: a limit is a plain failure). */
  limits?: LimitPolicy;
  /** The policy per failure class (failures.ts POLICIES, overridden by FAILURE_POLICY_<CLASS>). */
  policies?: Record<FailureClass, PolicyAction>;
  /** Says what a failed attempt was and what the policy does about it (session log, record note). */
  onClassified?: (attempt: number, failure: Failure, action: PolicyAction, waitMs: number, final?: boolean) => void;
}

/** The limit to park for, from the failure's class when the agent's own reader (limits.ts) knows none. */
function limitOf(failure: Failure, message: string): UsageLimit {
  const resetsAt = failure.resetsAt ?? (failure.retryAfterMs !== undefined ? Date.now() + failure.retryAfterMs : undefined);
  return { resetsAt, kind: failure.window ?? failure.class, message: message.replace(/\s+/g, " ").slice(0, 200) };
}

/**
 * The reference's retry strategy, with a policy per failure class (failures.ts): `stop` ends the
 * loop at once; `park` waits for a usage window (not a failure: the attempt waits for the reset,
 * bounded by MAX_LIMIT_WAIT, and runs again); `fail` gives up; `fresh` runs once more in a fresh
 * session, then gives up; `backoff` and `retry` count the failure and retry the same prompt
 * while the count is below maxRetries (`backoff` waits at least the CLI's retry hint). Before
 * every attempt, a limit another loop on this account has seen is waited out, without calling
 * the agent.
 */
export async function runAgentWithRetries(spec: AgentSpec, prompt: string, options: RunAgentOptions, retry: RetryOptions): Promise<RetriedResult> {
  const stopping = retry.stopping ?? (() => false);
  const policies = retry.policies ?? POLICIES;
  const failures: string[] = [];
  let totalCost: Cost | undefined;
  let limitsInARow = 0;
  let freshTaken = false;
  for (;;) {
    if (retry.limits) {
      const shared = sharedLimitUntil(retry.limits);
      if (shared) {
        const parked = await parkForLimit(retry.limits, shared, stopping, limitsInARow);
        if (parked !== "resumed") return { ...interruptedResult(), retries: failures.length, totalCost, failures, limitExceeded: parked === "exceeded" ? retry.limits.exceeded : undefined };
      }
      const capped = await capsBeforeCall(retry.limits, stopping, limitsInARow + 1);
      if (capped.action === "again") {
        limitsInARow += 1;
        continue;
      }
      if (capped.action !== "go") {
        const reason = capped.action === "pause" ? capped.reason : capped.action === "exceeded" ? retry.limits.exceeded : undefined;
        return { ...interruptedResult(reason), retries: failures.length, totalCost, failures, limitExceeded: reason };
      }
    }
    const result = await runAgent(spec, prompt, options);
    if (retry.limits) windowsAfterCall(retry.limits, spec.type, result.events);
    totalCost = addCost(totalCost, result.cost);
    if (!result.failure) return { ...result, retries: failures.length, totalCost, failures };
    const failure = result.failureClass ?? { class: "unknown" as const, evidence: result.failure };
    let action = policies[failure.class];
    if (action === "park" && (!retry.limits || stopping())) action = "backoff";
    if (action === "park" && retry.limits) {
      retry.onClassified?.(failures.length + 1, failure, action, 0);
      limitsInARow += 1;
      const limit = usageLimit(spec.type, result.events) ?? limitOf(failure, result.failure);
      const parked = await parkForLimit(retry.limits, limit, stopping, limitsInARow, true);
      if (parked === "resumed") continue;
      return { ...result, retries: failures.length, totalCost, failures, limitExceeded: parked === "exceeded" ? retry.limits.exceeded : undefined };
    }
    limitsInARow = 0;
    failures.push(result.failure);
    const last = action === "stop" || action === "fail" || (action === "fresh" && freshTaken) || failures.length >= retry.maxRetries;
    if (action === "fresh") freshTaken = true;
    const hint = action === "backoff" ? (failure.retryAfterMs ?? 0) : 0;
    const waitMs = last || action === "fresh" ? 0 : Math.max(hint, retryWaitMs(failures.length, retry.backoffMs ?? 0, Math.random()));
    if (action === "stop") {
      retry.onClassified?.(failures.length, failure, action, 0, true);
      return { ...result, retries: failures.length - 1, totalCost, failures, stopped: failure };
    }
    retry.onFailure(failures.length, result.failure, result.stderrTail, last ? 0 : waitMs);
    retry.onClassified?.(failures.length, failure, action, waitMs, last);
    if (last || stopping() || !(await waitUnlessStopping(waitMs, stopping))) return { ...result, retries: failures.length - 1, totalCost, failures };
  }
}

/** The longest wait between two failed attempts (RETRY_BACKOFF doubles up to this). */
export const MAX_RETRY_WAIT_MS = 5 * 60_000;

/** The wait after `failures` failed attempts in a row: exponential from `baseMs`, capped, jittered by `random` (0..1) to 50-100 %. */
export function retryWaitMs(failures: number, baseMs: number, random: number): number {
  if (baseMs <= 0) return 0;
  const full = Math.min(MAX_RETRY_WAIT_MS, baseMs * 2 ** Math.max(0, failures - 1));
  return Math.round(full * (0.5 + random / 2));
}

/** Waits `ms`, looking at `stopping` 4 times a second; false when it stopped the wait. */
async function waitUnlessStopping(ms: number, stopping: () => boolean): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (stopping()) return false;
    await new Promise((resolve) => setTimeout(resolve, Math.min(250, until - Date.now())));
  }
  return !stopping();
}

/** The result of an attempt that never called the agent: interrupted while parked, or held by a usage limit or cap (`reason`). */
function interruptedResult(reason?: string): AgentResult {
  return { code: null, signal: null, events: [], response: "", receipts: [], failure: reason ?? "interrupted while waiting for a usage limit", stderrTail: [] };
}

/** " in 7.4s" for a failed attempt's message, "" when the next attempt starts at once. */
export function retryIn(waitMs: number): string {
  return waitMs > 0 ? ` in ${(waitMs / 1000).toFixed(1)}s` : "";
}
