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
import { spawnSync } from "node:child_process";
import { codexErrorLine, codexFailure } from "./codex.ts";
import { failureText, streamError } from "./failures.ts";
import { STREAM_PRESETS, streamPreset, type StreamAgentType } from "./presets/index.ts";
import { splitArgs, type Vars } from "./util.ts";

// gemini, opencode, pi, qwen and copilot: one file each in presets/ (their stream, receipts, view).
export type AgentType = "claude" | "codex" | "amp" | "cline" | StreamAgentType;
export const AGENT_TYPES: AgentType[] = ["claude", "codex", "amp", "cline", ...(Object.keys(STREAM_PRESETS) as StreamAgentType[])];

interface Preset {
  cli: string;
  args: string;
  /** The arguments without which the CLI prints no JSON stream (named when a stream is missing). */
  streamArgs: string;
  /**
   * The arguments for an agent that must not change files (converge's judge): the CLI's own
   * read-only mode where it has one. Where it has none (amp, cline) the worker's arguments; the
   * caller then relies on checking the working tree.
   */
  readOnlyArgs: string;
  usageCmd?: string;
  /** The prompt goes as the last argument instead of on stdin. */
  promptArg?: boolean;
}

const [CLAUDE_STREAM, CODEX_STREAM] = ["-p --output-format stream-json --verbose", "exec --json"];

/** Each CLI's non-interactive, JSON-streaming invocation; the prompt goes to stdin. */
export const PRESETS: Record<AgentType, Preset> = {
  claude: {
    cli: "claude",
    args: `${CLAUDE_STREAM} --dangerously-skip-permissions`,
    streamArgs: CLAUDE_STREAM,
    // dontAsk: every tool not listed is refused, nobody is asked; reading and git inspection only.
    readOnlyArgs: `${CLAUDE_STREAM} --permission-mode dontAsk --allowedTools "Read,Grep,Glob,Bash(git status:*),Bash(git diff:*),Bash(git log:*),Bash(git show:*)"`,
  },
  // Unsandboxed like claude's: the loop commits, and codex's sandbox keeps .git read-only (README).
  codex: { cli: "codex", args: `${CODEX_STREAM} --dangerously-bypass-approvals-and-sandbox -`, streamArgs: CODEX_STREAM, readOnlyArgs: `${CODEX_STREAM} --sandbox read-only -` },
  amp: { cli: "amp", args: "-x --stream-json --dangerously-allow-all", streamArgs: "-x --stream-json", readOnlyArgs: "-x --stream-json", usageCmd: "amp usage" },
  cline: { cli: "cline", args: "--json -y", streamArgs: "--json", readOnlyArgs: "--json -y" },
  ...STREAM_PRESETS,
};

export interface AgentSpec {
  type: AgentType;
  cli: string;
  args: string[];
  /** The variable prefix the spec was read with (AGENT_, CONVERGE_JUDGE_, …), for messages. */
  prefix: string;
  /** A command printing the account balance (`$12.34` somewhere in its output), run before and after. */
  usageCmd?: string;
  /** A shell pipeline that reduces usageCmd's output to the bare number. */
  usageParser?: string;
  /** `<prefix>COST_KIND`: the kind of every cost this agent reports (else decided per agent: usage.ts). */
  costKind?: "billed" | "estimate";
}

/**
 * Reads an agent configuration from `vars`: `<prefix>TYPE` (claude, codex, amp, cline; default
 * `fallbackType`), then `<prefix>CLI`, `<prefix>ARGS` (replaces the preset's arguments),
 * `<prefix>EXTRA_ARGS` (appended to them), `<prefix>USAGE_CMD`, `<prefix>USAGE_PARSER`,
 * `<prefix>COST_KIND` (billed or estimate).
 * `readOnly` picks the preset's read-only arguments.
 */
export function agentSpec(vars: Vars, prefix: string, fallbackType = "claude", readOnly = false): AgentSpec {
  const type = (vars[`${prefix}TYPE`] || fallbackType) as AgentType;
  if (!AGENT_TYPES.includes(type)) throw new Error(`${prefix}TYPE must be one of ${AGENT_TYPES.join(", ")}, got ${JSON.stringify(type)}`);
  const preset = PRESETS[type];
  const argsText = vars[`${prefix}ARGS`] ?? (readOnly ? preset.readOnlyArgs : preset.args);
  const costKind = vars[`${prefix}COST_KIND`] || undefined;
  if (costKind !== undefined && costKind !== "billed" && costKind !== "estimate") throw new Error(`${prefix}COST_KIND must be billed or estimate, got ${JSON.stringify(costKind)}`);
  return {
    type,
    cli: vars[`${prefix}CLI`] || preset.cli,
    args: [...splitArgs(argsText), ...splitArgs(vars[`${prefix}EXTRA_ARGS`] ?? "")],
    prefix,
    usageCmd: vars[`${prefix}USAGE_CMD`] ?? preset.usageCmd,
    usageParser: vars[`${prefix}USAGE_PARSER`] || undefined,
    costKind,
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
  const preset = streamPreset(type);
  if (preset) return preset.responseText(events);
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

/**
 * The agent's final answer: what it ended with, not everything it said along the way. Claude and
 * amp: the `result` event's text (else the last assistant message); codex: the last agent
 * message; cline: the completion result (else the last text).
 */
export function finalAnswer(type: AgentType, events: Json[]): string {
  const last = <T>(items: T[]): T | undefined => items[items.length - 1];
  const preset = streamPreset(type);
  if (preset) return preset.finalAnswer(events);
  if (type === "claude" || type === "amp") {
    const result = last(events.filter((e) => e.type === "result"));
    if (result && typeof result.result === "string") return result.result;
    const message = last(events.filter((e) => e.type === "assistant" && contentBlocks(e).some((b) => b.type === "text")));
    return message ? responseText(type, [message]) : "";
  }
  if (type === "codex") return last(events.filter((e) => e.type === "item.completed" && e.item?.type === "agent_message"))?.item?.text ?? "";
  const final = events.filter((e) => e.partial !== true && (e.say === "completion_result" || e.ask === "completion_result" || e.type === "run_result"));
  if (final.length) return String(last(final)!.text ?? "");
  return String(last(events.filter((e) => e.partial !== true && e.type === "say" && e.say === "text"))?.text ?? "");
}

/**
 * True when `tag` stands on a line of its own in `answer`, outside code blocks: a tag quoted,
 * negated or mentioned mid-sentence ("I will not print <promise>COMPLETE</promise> yet") is not
 * a signal.
 */
export function signalled(answer: string, tag: string): boolean {
  let fenced = false;
  for (const raw of answer.split(/\r?\n/)) {
    const line = raw.trim();
    if (/^(```|~~~)/.test(line)) fenced = !fenced;
    else if (!fenced && line === tag) return true;
  }
  return false;
}

/** Why a finished invocation counts as failed, judged from its stream (exit code aside). */
export function streamFailure(type: AgentType, events: Json[]): string | undefined {
  if (events.length === 0) return "no JSON events on stdout";
  if (streamPreset(type)) {
    const error = streamError(type, events, 0);
    return error ? `the agent reported an error: ${failureText(error)}` : undefined;
  }
  if (type === "claude" || type === "amp") {
    const result = [...events].reverse().find((e) => e.type === "result");
    if (!result) return "the stream has no result event";
    if (result.is_error === true) {
      const kind = result.subtype && result.subtype !== "success" ? result.subtype : typeof result.api_error_status === "number" ? `API status ${result.api_error_status}` : "is_error";
      return `the agent reported an error (${kind}): ${String(result.result ?? "").slice(0, 200)}`;
    }
  } else if (type === "codex") {
    return codexFailure(events);
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

/** Lines of tool output shown in the live view; the rest is counted (the log has it all). */
const TOOL_OUTPUT_LINES = 8;

/** A tool's output, line by line (indented, each cut to a screen line), at most TOOL_OUTPUT_LINES. */
function toolOutput(mark: string, text: unknown, prefix = ""): string[] {
  const all = String(text ?? "").replace(/\s+$/, "").split(/\r?\n/);
  const shown = all.slice(0, TOOL_OUTPUT_LINES).map((line, i) => `  ${i === 0 ? `${mark} ${prefix}` : "  "}${short(line, 120)}`.trimEnd());
  if (all.length > TOOL_OUTPUT_LINES) shown.push(`    … ${all.length - TOOL_OUTPUT_LINES} more lines`);
  return shown;
}

function toolSummary(input: Json | undefined): string {
  if (!input || typeof input !== "object") return "";
  for (const key of ["command", "file_path", "path", "pattern", "url", "query", "description", "prompt"]) {
    if (typeof input[key] === "string") return short(input[key], 120);
  }
  return short(JSON.stringify(input), 120);
}

/** A human-readable rendering of one stream event for the live view, or undefined to skip it. */
export function displayEvent(type: AgentType, event: Json, earlier: Json[] = []): string | undefined {
  const preset = streamPreset(type);
  if (preset) return preset.display(event, earlier);
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
        const content = Array.isArray(block.content) ? block.content.map((c: Json) => c?.text ?? "").join("\n") : block.content;
        lines.push(...toolOutput(block.is_error ? "✗" : "←", content));
      }
      return lines.length ? lines.join("\n") : undefined; // an echoed prompt is not shown again
    }
    if (event.type === "result") {
      // Claude reports an API error as subtype "success" with is_error: true.
      const bits = [event.is_error ? (event.subtype && event.subtype !== "success" ? event.subtype : "error") : (event.subtype ?? "done")];
      if (event.is_error && typeof event.api_error_status === "number") bits.push(`API status ${event.api_error_status}`);
      if (typeof event.num_turns === "number") bits.push(`${event.num_turns} turns`);
      if (typeof event.total_cost_usd === "number") bits.push(`$${event.total_cost_usd.toFixed(6)}`);
      if (typeof event.duration_ms === "number") bits.push(`${(event.duration_ms / 1000).toFixed(1)}s`);
      const why = event.is_error && typeof event.result === "string" && event.result ? `: ${short(event.result)}` : "";
      return `${event.is_error ? "✗" : "✓"} result: ${bits.join(", ")}${why}`;
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
      if (item.type === "command_execution") return toolOutput(item.exit_code === 0 ? "←" : "✗", item.aggregated_output, `exit ${item.exit_code ?? "?"}: `).join("\n");
      if (item.type === "file_change") return `→ files: ${(item.changes ?? []).map((c: Json) => `${c.kind ?? "edit"} ${c.path}`).join(", ")}`;
      if (item.type === "error") return `· warning: ${short(item.message)}`; // codex: a non-fatal error item
      return `· ${item.type}`;
    }
    if (event.type === "turn.completed") {
      const u = event.usage ?? {};
      return `✓ turn completed: ${u.input_tokens ?? "?"} in / ${u.output_tokens ?? "?"} out tokens`;
    }
    if (event.type === "turn.failed" || event.type === "error") return codexErrorLine(event, earlier);
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
        return toolOutput("←", event.text).join("\n");
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
