// Qwen Code (`@qwen-code/qwen-code`, a Gemini CLI fork): `qwen -o stream-json --yolo`, the prompt
// on stdin. Its stream has Claude Code's shapes: `system`/`init` {session_id, model}, `assistant`
// {message.content: text | tool_use, usage}, `user` (tool_result blocks), `result` {subtype,
// is_error, result, usage}. An API error is a "success" result whose text is "[API Error: …]"
// (failures.ts reads it). Usage: the result's `usage` {input_tokens (cached included),
// output_tokens, cache_read_input_tokens}: tokens only, no cost. Read-only: `--approval-mode plan`.
import { existsSync } from "node:fs";
import { type Json, type StreamPreset, short, toolOutput, toolSummary, tokenFields, under } from "./common.ts";

const blocks = (event: Json): Json[] => (Array.isArray(event?.message?.content) ? event.message.content : typeof event?.message?.content === "string" ? [{ type: "text", text: event.message.content }] : []);
const texts = (events: Json[]): string[] =>
  events
    .filter((e) => e.type === "assistant")
    .map((e) =>
      blocks(e)
        .filter((b) => b.type === "text" && typeof b.text === "string")
        .map((b) => b.text)
        .join("\n"),
    )
    .filter((t) => t.trim() !== "");

function display(event: Json): string | undefined {
  if (event.type === "system" && event.subtype === "init") return `· session ${event.session_id ?? ""}${event.model ? ` (${event.model})` : ""}`;
  const lines: string[] = [];
  if (event.type === "assistant") {
    for (const b of blocks(event)) {
      if (b.type === "text" && b.text) lines.push(String(b.text).trimEnd());
      else if (b.type === "tool_use") lines.push(`→ ${b.name}: ${toolSummary(b.input)}`);
      else if (b.type === "thinking" && b.thinking) lines.push(`· thinking: ${short(b.thinking)}`);
    }
  } else if (event.type === "user") {
    for (const b of blocks(event)) if (b.type === "tool_result") lines.push(toolOutput(b.is_error ? "✗" : "←", Array.isArray(b.content) ? b.content.map((c: Json) => c?.text ?? "").join("\n") : b.content));
  } else if (event.type === "result") {
    const u = event.usage ?? {};
    const failed = event.is_error === true || /^\s*\[API Error/.test(String(event.result ?? ""));
    lines.push(`${failed ? "✗" : "✓"} result: ${failed ? "error" : (event.subtype ?? "done")}, ${u.input_tokens ?? "?"} in / ${u.output_tokens ?? "?"} out tokens${failed ? `: ${short(event.result)}` : ""}`);
  }
  return lines.length ? lines.join("\n") : undefined;
}

export const qwen: StreamPreset = {
  cli: "qwen",
  args: "-o stream-json --yolo",
  streamArgs: "-o stream-json",
  readOnlyArgs: "-o stream-json --approval-mode plan",
  readOnlyEnforced: true,
  loginFix: "set OPENAI_API_KEY (with --auth-type openai) or run `qwen` once and sign in",
  preflight: (env) => {
    if (env.OPENAI_API_KEY || env.DASHSCOPE_API_KEY || env.QWEN_API_KEY || existsSync(under(env, ".qwen", "oauth_creds.json")) || existsSync(under(env, ".qwen", "settings.json"))) return undefined;
    return "qwen has no credentials (no OPENAI_API_KEY, no sign-in or settings in ~/.qwen)";
  },
  display,
  responseText: (events) => texts(events).join("\n"),
  finalAnswer: (events) => {
    const result = [...events].reverse().find((e) => e.type === "result");
    return typeof result?.result === "string" ? result.result : (texts(events).at(-1) ?? "");
  },
  progress: () => true,
  receipts: (events) => {
    const init = events.find((e) => e.type === "system" && e.subtype === "init");
    const result = [...events].reverse().find((e) => e.type === "result");
    const u = result?.usage;
    if (!u) return [];
    const cached = u.cache_read_input_tokens ?? 0;
    return [{ ...(typeof init?.model === "string" ? { model: init.model } : {}), tokens: tokenFields({ input: Math.max(0, (u.input_tokens ?? 0) - cached), output: u.output_tokens, cacheRead: u.cache_read_input_tokens }) }];
  },
};
