// Pi (`@mariozechner/pi-coding-agent`): `pi -p --mode json`, the prompt as the last argument. Its
// stream: `session`, `agent_start`, `turn_start`, `message_start` / `message_update` (deltas) /
// `message_end` {message: role, content[text | toolCall], usage, stopReason, errorMessage},
// `tool_execution_start` / `_end` {toolName, args, result, isError}, `turn_end`, `agent_end`, and
// `auto_retry_start` / `auto_retry_end` around its own retries (no progress: the idle watchdog
// does not count them). It exits 0 even when the turn failed (stopReason "error"). Usage: each
// assistant `message_end` {input (uncached), output, cacheRead, cacheWrite, cost.total USD}; the
// kind is `estimate` for a provider signed in with OAuth (~/.pi/agent/auth.json type "oauth"),
// else `billed`. Pi has no read-only mode: a reviewer gets `--tools read,grep,find,ls` (no bash,
// no edit, no write), and the caller checks the tree all the same.
import { join } from "node:path";
import { type Env, type Json, type StreamPreset, dollars, readJson, short, toolOutput, toolSummary, tokenFields, under } from "./common.ts";

const assistantEnds = (events: Json[]): Json[] => events.filter((e) => e.type === "message_end" && e.message?.role === "assistant");
const textOf = (message: Json): string =>
  (Array.isArray(message?.content) ? message.content : [])
    .filter((b: Json) => b?.type === "text" && typeof b.text === "string")
    .map((b: Json) => b.text)
    .join("\n");

function display(event: Json): string | undefined {
  if (event.type === "session") return `· session ${event.id ?? ""}`;
  if (event.type === "message_end" && event.message?.role === "assistant") {
    const m = event.message;
    const lines: string[] = [];
    for (const block of Array.isArray(m.content) ? m.content : []) {
      if (block?.type === "text" && block.text) lines.push(String(block.text).trimEnd());
      else if (block?.type === "thinking" && block.thinking) lines.push(`· thinking: ${short(block.thinking)}`);
      else if (block?.type === "toolCall") lines.push(`→ ${block.name}: ${toolSummary(block.arguments)}`);
    }
    if (m.stopReason === "error") lines.push(`✗ ${short(m.errorMessage)}`);
    return lines.length ? lines.join("\n") : undefined;
  }
  if (event.type === "tool_execution_end") {
    const content = Array.isArray(event.result?.content) ? event.result.content.map((c: Json) => c?.text ?? "").join("\n") : event.result;
    return toolOutput(event.isError ? "✗" : "←", content);
  }
  if (event.type === "auto_retry_start") return `· retry ${event.attempt}/${event.maxAttempts} in ${((event.delayMs ?? 0) / 1000).toFixed(1)}s: ${short(event.errorMessage)}`;
  return undefined;
}

function costKind(provider: unknown, env: Env): "billed" | "estimate" {
  const auth = readJson(join(env.PI_CODING_AGENT_DIR || under(env, ".pi", "agent"), "auth.json"));
  return typeof provider === "string" && auth?.[provider]?.type === "oauth" ? "estimate" : "billed";
}

export const pi: StreamPreset = {
  cli: "pi",
  args: "-p --mode json",
  streamArgs: "--mode json",
  readOnlyArgs: "-p --mode json --tools read,grep,find,ls",
  readOnlyEnforced: false,
  promptArg: true,
  loginFix: "run `pi` once and /login, or set the provider's API key (e.g. ANTHROPIC_API_KEY)",
  display,
  responseText: (events) => assistantEnds(events).map((e) => textOf(e.message)).filter(Boolean).join("\n"),
  finalAnswer: (events) => assistantEnds(events).map((e) => textOf(e.message)).filter(Boolean).at(-1) ?? "",
  progress: (event) => !/^auto_retry_|^agent_end$/.test(String(event.type)),
  receipts: (events, context) =>
    assistantEnds(events).map((e) => {
      const m = e.message;
      const u = m.usage ?? {};
      const usd = dollars(u.cost?.total);
      return {
        ...(typeof m.model === "string" ? { model: m.model } : {}),
        ...(typeof m.provider === "string" ? { provider: m.provider } : {}),
        tokens: tokenFields({ input: u.input, output: u.output, cacheRead: u.cacheRead, cacheWrite: u.cacheWrite }),
        ...(usd !== undefined && usd > 0 ? { cost: { usd, kind: context.costKind ?? costKind(m.provider, context.env) } } : {}),
      };
    }),
};
