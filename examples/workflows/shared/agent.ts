// Shared by the ralph and converge workflows (see util.ts for how each workflow gets its copy).
//
// Agent presets and their streaming formats, one NDJSON object per stdout line:
// - claude: `claude -p --output-format stream-json --verbose` — `system`/`init`, `assistant`
//   (message.content: `text` / `tool_use` blocks), `user` (tool_result blocks), and a final
//   `result` (`result`, `is_error`, `num_turns`, `total_cost_usd`).
// - amp: `amp -x --stream-json` — the same message shapes as Claude Code, plus a `user` message
//   that echoes the prompt; its `result` carries no cost (balance via `amp usage` instead).
// - codex: `codex exec --json` — `thread.started`, `turn.started`, `item.started` /
//   `item.updated` / `item.completed` (item.type `agent_message`, `reasoning`,
//   `command_execution`, `file_change`, …), `turn.completed` (usage), `turn.failed`, `error`.
// - cline: `cline --json` — ClineMessage objects: `type` "say" | "ask", `say`/`ask` subtype,
//   `text`; the prompt is echoed as say "task", the answer is say "text" / "completion_result",
//   and say "api_req_started" carries a JSON text with the request's `cost`.
import { spawn, spawnSync } from "node:child_process";
import { appendFileSync, closeSync, openSync, writeFileSync } from "node:fs";
import { splitArgs, type Vars } from "./util.ts";

export type AgentType = "claude" | "codex" | "amp" | "cline";
export const AGENT_TYPES: AgentType[] = ["claude", "codex", "amp", "cline"];

interface Preset {
  cli: string;
  args: string;
  usageCmd?: string;
}

/** Each CLI's non-interactive, JSON-streaming invocation; the prompt goes to stdin. */
export const PRESETS: Record<AgentType, Preset> = {
  claude: { cli: "claude", args: "-p --output-format stream-json --verbose --dangerously-skip-permissions" },
  codex: { cli: "codex", args: "exec --json --full-auto -" },
  amp: { cli: "amp", args: "-x --stream-json --dangerously-allow-all", usageCmd: "amp usage" },
  cline: { cli: "cline", args: "--json -y" },
};

export interface AgentSpec {
  type: AgentType;
  cli: string;
  args: string[];
  /** A command printing the account balance (`$12.34` somewhere in its output), run before and after. */
  usageCmd?: string;
  /** A shell pipeline that reduces usageCmd's output to the bare number. */
  usageParser?: string;
}

/**
 * Reads an agent configuration from `vars`: `<prefix>TYPE` (claude, codex, amp, cline; default
 * `fallbackType`), then `<prefix>CLI`, `<prefix>ARGS`, `<prefix>USAGE_CMD`, `<prefix>USAGE_PARSER`
 * override the preset one by one.
 */
export function agentSpec(vars: Vars, prefix: string, fallbackType = "claude"): AgentSpec {
  const type = (vars[`${prefix}TYPE`] || fallbackType) as AgentType;
  if (!AGENT_TYPES.includes(type)) throw new Error(`${prefix}TYPE must be one of ${AGENT_TYPES.join(", ")}, got ${JSON.stringify(type)}`);
  const preset = PRESETS[type];
  const argsText = vars[`${prefix}ARGS`] ?? preset.args;
  return {
    type,
    cli: vars[`${prefix}CLI`] || preset.cli,
    args: splitArgs(argsText),
    usageCmd: vars[`${prefix}USAGE_CMD`] ?? preset.usageCmd,
    usageParser: vars[`${prefix}USAGE_PARSER`] || undefined,
  };
}

type Json = Record<string, any>;

function contentBlocks(event: Json): Json[] {
  const content = event?.message?.content;
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? content.filter((b) => b && typeof b === "object") : [];
}

/**
 * The assistant's own response text, and nothing else: never the prompt echoed back (amp's `user`
 * message, cline's say "task"), never tool input or tool output.
 */
export function responseText(type: AgentType, events: Json[]): string {
  const parts: string[] = [];
  for (const event of events) {
    if (type === "claude" || type === "amp") {
      if (event.type !== "assistant") continue;
      for (const block of contentBlocks(event)) if (block.type === "text" && typeof block.text === "string") parts.push(block.text);
    } else if (type === "codex") {
      if (event.type === "item.completed" && event.item?.type === "agent_message" && typeof event.item.text === "string") parts.push(event.item.text);
    } else if (type === "cline") {
      if (event.partial === true) continue;
      if (event.type === "say" && (event.say === "text" || event.say === "completion_result") && typeof event.text === "string") parts.push(event.text);
      else if (event.type === "ask" && event.ask === "completion_result" && typeof event.text === "string") parts.push(event.text);
      else if (event.type === "run_result" && typeof event.text === "string") parts.push(event.text);
    }
  }
  return parts.join("\n");
}

/** The cost the agent reported for this invocation, if it reports one. */
export function reportedCost(type: AgentType, events: Json[]): number | undefined {
  if (type === "claude" || type === "amp") {
    for (let i = events.length - 1; i >= 0; i--) {
      const e = events[i]!;
      if (e.type === "result" && typeof e.total_cost_usd === "number") return e.total_cost_usd;
    }
    return undefined;
  }
  if (type === "cline") {
    let total: number | undefined;
    for (const e of events) {
      if (e.type !== "say" || e.say !== "api_req_started" || typeof e.text !== "string") continue;
      try {
        const info = JSON.parse(e.text);
        if (typeof info?.cost === "number") total = (total ?? 0) + info.cost;
      } catch {
        // not JSON: no cost in it
      }
    }
    return total;
  }
  return undefined;
}

/** Why a finished invocation counts as failed, judged from its stream (exit code aside). */
export function streamFailure(type: AgentType, events: Json[]): string | undefined {
  if (events.length === 0) return "no JSON events on stdout";
  if (type === "claude" || type === "amp") {
    const result = [...events].reverse().find((e) => e.type === "result");
    if (!result) return "the stream has no result event";
    if (result.is_error === true) return `the agent reported an error (${result.subtype ?? "is_error"}): ${String(result.result ?? "").slice(0, 200)}`;
  } else if (type === "codex") {
    const failed = events.find((e) => e.type === "turn.failed" || e.type === "error");
    if (failed) return `the agent reported an error: ${failed.error?.message ?? failed.message ?? "turn failed"}`;
    if (!events.some((e) => e.type === "turn.completed")) return "the stream has no turn.completed event";
  } else if (type === "cline") {
    const error = events.find((e) => e.type === "say" && (e.say === "error" || e.say === "api_req_failed"));
    if (error && responseText(type, events) === "") return `the agent reported an error: ${String(error.text ?? "").slice(0, 200)}`;
  }
  return undefined;
}

const short = (text: unknown, max = 160): string => {
  const one = String(text ?? "").replace(/\s+/g, " ").trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
};

function toolSummary(input: Json | undefined): string {
  if (!input || typeof input !== "object") return "";
  for (const key of ["command", "file_path", "path", "pattern", "url", "query", "description", "prompt"]) {
    if (typeof input[key] === "string") return short(input[key], 120);
  }
  return short(JSON.stringify(input), 120);
}

/** A human-readable rendering of one stream event for the live view, or undefined to skip it. */
export function displayEvent(type: AgentType, event: Json): string | undefined {
  if (type === "claude" || type === "amp") {
    if (event.type === "system" && event.subtype === "init") return `· session ${event.session_id ?? ""}${event.model ? ` (${event.model})` : ""}`;
    if (event.type === "assistant") {
      const lines: string[] = [];
      for (const block of contentBlocks(event)) {
        if (block.type === "text" && block.text) lines.push(String(block.text).trimEnd());
        else if (block.type === "tool_use") lines.push(`→ ${block.name}: ${toolSummary(block.input)}`);
        else if (block.type === "thinking" && block.thinking) lines.push(`· thinking: ${short(block.thinking)}`);
      }
      return lines.length ? lines.join("\n") : undefined;
    }
    if (event.type === "user") {
      const lines: string[] = [];
      for (const block of contentBlocks(event)) {
        if (block.type !== "tool_result") continue;
        const content = Array.isArray(block.content) ? block.content.map((c: Json) => c?.text ?? "").join(" ") : block.content;
        lines.push(`  ${block.is_error ? "✗" : "←"} ${short(content, 120)}`);
      }
      return lines.length ? lines.join("\n") : undefined; // an echoed prompt is not shown again
    }
    if (event.type === "result") {
      const bits = [event.subtype ?? (event.is_error ? "error" : "done")];
      if (typeof event.num_turns === "number") bits.push(`${event.num_turns} turns`);
      if (typeof event.total_cost_usd === "number") bits.push(`$${event.total_cost_usd.toFixed(6)}`);
      if (typeof event.duration_ms === "number") bits.push(`${(event.duration_ms / 1000).toFixed(1)}s`);
      return `${event.is_error ? "✗" : "✓"} result: ${bits.join(", ")}`;
    }
    return undefined;
  }
  if (type === "codex") {
    const item = event.item as Json | undefined;
    if (event.type === "thread.started") return `· thread ${event.thread_id ?? ""}`;
    if (event.type === "item.started" && item?.type === "command_execution") return `→ $ ${short(item.command, 120)}`;
    if (event.type === "item.completed" && item) {
      if (item.type === "agent_message") return String(item.text ?? "").trimEnd();
      if (item.type === "reasoning") return `· thinking: ${short(item.text)}`;
      if (item.type === "command_execution") return `  ${item.exit_code === 0 ? "←" : "✗"} exit ${item.exit_code ?? "?"}: ${short(item.aggregated_output, 120)}`;
      if (item.type === "file_change") return `→ files: ${(item.changes ?? []).map((c: Json) => `${c.kind ?? "edit"} ${c.path}`).join(", ")}`;
      if (item.type === "error") return `✗ ${short(item.message)}`;
      return `· ${item.type}`;
    }
    if (event.type === "turn.completed") {
      const u = event.usage ?? {};
      return `✓ turn completed: ${u.input_tokens ?? "?"} in / ${u.output_tokens ?? "?"} out tokens`;
    }
    if (event.type === "turn.failed" || event.type === "error") return `✗ ${short(event.error?.message ?? event.message)}`;
    return undefined;
  }
  // cline
  if (event.partial === true) return undefined;
  if (event.type === "run_result") return String(event.text ?? "");
  if (event.type === "say") {
    switch (event.say) {
      case "task":
      case "api_req_finished":
        return undefined;
      case "api_req_started": {
        try {
          const info = JSON.parse(event.text ?? "{}");
          return typeof info.cost === "number" ? `· request: $${info.cost.toFixed(6)}` : undefined;
        } catch {
          return undefined;
        }
      }
      case "text":
      case "completion_result":
        return String(event.text ?? "").trimEnd();
      case "reasoning":
        return `· thinking: ${short(event.text)}`;
      case "command":
        return `→ $ ${short(event.text, 120)}`;
      case "command_output":
        return `  ← ${short(event.text, 120)}`;
      case "tool":
        return `→ tool: ${short(event.text, 120)}`;
      case "error":
      case "api_req_failed":
        return `✗ ${short(event.text)}`;
      default:
        return event.text ? `· ${event.say}: ${short(event.text)}` : undefined;
    }
  }
  if (event.type === "ask") return event.text ? `? ${event.ask}: ${short(event.text)}` : undefined;
  return undefined;
}

/** Runs the usage command (and parser) and returns the first dollar amount, if any. */
export function queryBalance(spec: AgentSpec, cwd: string): number | undefined {
  if (!spec.usageCmd) return undefined;
  const command = spec.usageParser ? `${spec.usageCmd} | ${spec.usageParser}` : spec.usageCmd;
  const result = spawnSync("/bin/sh", ["-c", command], { cwd, encoding: "utf8", timeout: 30_000, stdio: ["ignore", "pipe", "ignore"] });
  if (result.status !== 0 || !result.stdout) return undefined;
  const match = spec.usageParser ? result.stdout.match(/-?[0-9]+(?:\.[0-9]+)?/) : result.stdout.match(/\$\s*([0-9][0-9,]*(?:\.[0-9]+)?)/);
  if (!match) return undefined;
  const value = Number((match[1] ?? match[0]).replace(/,/g, ""));
  return Number.isFinite(value) ? value : undefined;
}

export interface AgentResult {
  /** Exit code, or null when killed by a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
  events: Json[];
  /** The assistant's response text (see responseText). */
  response: string;
  /** Cost of this invocation in USD, when the agent reports it or a usage command measures it. */
  cost?: number;
  balance?: number;
  /** Why this invocation failed; undefined when it succeeded. */
  failure?: string;
}

export interface RunAgentOptions {
  cwd: string;
  /** Raw stdout is appended here, and the agent's stderr goes here (the session log). */
  logFile?: string;
  /** Raw stdout of this invocation, overwritten (last_agent_output). */
  rawFile?: string;
  /** Called with each rendered line of the live view; default: stderr. */
  display?: (text: string) => void;
}

/** How long to wait for stdout to close after the agent exited. */
const STDOUT_GRACE_MS = 1000;

/** The agent currently running (so a signal handler can wait for it). */
export let activeAgent: Promise<unknown> | undefined;

/** Invokes the agent once with `prompt` on stdin and streams its output. */
export async function runAgent(spec: AgentSpec, prompt: string, options: RunAgentOptions): Promise<AgentResult> {
  const display = options.display ?? ((text: string) => process.stderr.write(text.endsWith("\n") ? text : `${text}\n`));
  const before = queryBalance(spec, options.cwd);
  if (options.rawFile) writeFileSync(options.rawFile, "");
  const errFd = options.logFile ? openSync(options.logFile, "a") : "ignore";
  const events: Json[] = [];
  let pending = "";
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
    try {
      const text = displayEvent(spec.type, event);
      if (text !== undefined && text !== "") display(text);
    } catch {
      // the live view is cosmetic: it never breaks the run
    }
  };
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((resolveExit) => {
    let child;
    try {
      child = spawn(spec.cli, spec.args, { cwd: options.cwd, stdio: ["pipe", "pipe", errFd] });
    } catch (error) {
      resolveExit({ code: 127, signal: null, error: error as Error });
      return;
    }
    child.on("error", (error) => resolveExit({ code: 127, signal: null, error }));
    child.stdin!.on("error", () => {}); // an agent that exits without reading its prompt
    child.stdin!.end(prompt);
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
        settle(code, signal);
      }, STDOUT_GRACE_MS).unref();
    });
    child.on("close", (code, signal) => settle(code, signal));
  });
  activeAgent = exit;
  const { code, signal, error } = await exit;
  activeAgent = undefined;
  if (typeof errFd === "number") closeSync(errFd);
  if (pending !== "") handleLine(pending);
  if (options.logFile && events.length > 0) appendFileSync(options.logFile, "\n");

  let failure: string | undefined;
  if (error) failure = `cannot start ${spec.cli}: ${error.message}`;
  else if (signal) failure = `${spec.cli} was killed by ${signal}`;
  else if (code !== 0) failure = `${spec.cli} exited with code ${code}`;
  else failure = streamFailure(spec.type, events);

  let cost = reportedCost(spec.type, events);
  let balance: number | undefined;
  if (before !== undefined) {
    balance = queryBalance(spec, options.cwd);
    if (balance !== undefined && cost === undefined) cost = Math.max(0, before - balance);
  }
  return { code, signal, events, response: responseText(spec.type, events), cost, balance, failure };
}

export interface RetriedResult extends AgentResult {
  /** Attempts after the first (this result may itself be a failure). */
  retries: number;
  /** Cost summed over every attempt. */
  totalCost?: number;
  failures: string[];
}

/**
 * The reference's retry strategy: on failure, count it; retry the same prompt while the count is
 * below maxRetries; give up once it reaches maxRetries. `onFailure` logs each failed attempt.
 */
export async function runAgentWithRetries(
  spec: AgentSpec,
  prompt: string,
  options: RunAgentOptions,
  maxRetries: number,
  onFailure: (attempt: number, failure: string) => void,
  /** True once the run is being interrupted: no further attempt starts. */
  stopping: () => boolean = () => false,
): Promise<RetriedResult> {
  const failures: string[] = [];
  let totalCost: number | undefined;
  for (;;) {
    const result = await runAgent(spec, prompt, options);
    if (result.cost !== undefined) totalCost = (totalCost ?? 0) + result.cost;
    if (!result.failure) return { ...result, retries: failures.length, totalCost, failures };
    failures.push(result.failure);
    onFailure(failures.length, result.failure);
    if (failures.length >= maxRetries || stopping()) return { ...result, retries: failures.length - 1, totalCost, failures };
  }
}
