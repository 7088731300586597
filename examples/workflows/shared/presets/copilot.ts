// GitHub Copilot CLI (`@github/copilot`): `copilot --output-format json --allow-all-tools -p
// <prompt>` (the prompt as the last argument). Its stream: one object per line {type, data}:
// `assistant.message` {content, toolRequests}, `assistant.message_delta`, `tool.execution_start`
// {toolName, arguments}, `tool.execution_complete` {success, result}, `assistant.turn_start` /
// `_end`, `model.call_failure` {statusCode} and `assistant.turn_retry` per failed try (no
// progress), `session.error` {errorType, statusCode}, many `session.*` housekeeping events (no
// progress), and a closing `result` {exitCode, usage: {premiumRequests, …}}.
// Usage: Copilot prints NO token counts in its JSON (1.0.x); a receipt says nothing then, and
// the premium requests it reports are shown, not counted. There is no read-only mode: a reviewer
// gets `--deny-tool write --deny-tool shell`, and the caller checks the tree all the same.
import { existsSync } from "node:fs";
import { type Json, type StreamPreset, short, toolOutput, toolSummary, under } from "./common.ts";

const data = (event: Json): Json => event.data ?? event;
const texts = (events: Json[]): string[] => events.filter((e) => e.type === "assistant.message" && typeof data(e).content === "string" && data(e).content.trim() !== "").map((e) => data(e).content);

function display(event: Json): string | undefined {
  const d = data(event);
  if (event.type === "assistant.message") {
    const lines = typeof d.content === "string" && d.content.trim() ? [d.content.trimEnd()] : [];
    for (const request of Array.isArray(d.toolRequests) ? d.toolRequests : []) lines.push(`→ ${request.name}: ${toolSummary(typeof request.arguments === "string" ? safe(request.arguments) : request.arguments)}`);
    return lines.length ? lines.join("\n") : undefined;
  }
  if (event.type === "tool.execution_complete") {
    const result = d.result?.content ?? d.result?.detailedContent ?? d.result;
    return toolOutput(d.success === false ? "✗" : "←", typeof result === "string" ? result : JSON.stringify(result ?? ""));
  }
  if (event.type === "model.call_failure") return `· call failed${d.statusCode ? ` (${d.statusCode})` : ""}: ${short(d.errorMessage ?? d.message)}`;
  if (event.type === "session.error") return `✗ ${d.errorType ?? "error"}${d.statusCode ? ` ${d.statusCode}` : ""}: ${short(d.message)}`;
  if (event.type === "result") {
    const u = d.usage ?? {};
    return `${d.exitCode === 0 ? "✓" : "✗"} result: exit ${d.exitCode ?? "?"}${typeof u.premiumRequests === "number" ? `, ${u.premiumRequests} premium requests` : ""}`;
  }
  return undefined;
}

function safe(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export const copilot: StreamPreset = {
  cli: "copilot",
  args: "--output-format json --allow-all-tools --no-color -p",
  streamArgs: "--output-format json",
  readOnlyArgs: "--output-format json --allow-all-tools --deny-tool write --deny-tool shell --no-color -p",
  readOnlyEnforced: false,
  promptArg: true,
  loginFix: "run `copilot` once and /login, or set GH_TOKEN / COPILOT_GITHUB_TOKEN (or COPILOT_PROVIDER_API_KEY for your own provider)",
  preflight: (env) => {
    if (env.COPILOT_GITHUB_TOKEN || env.GH_TOKEN || env.GITHUB_TOKEN || env.COPILOT_PROVIDER_API_KEY || env.COPILOT_OFFLINE) return undefined;
    if (existsSync(under(env, ".copilot", "config.json"))) return undefined;
    return "copilot is not signed in (no GH_TOKEN, no ~/.copilot/config.json)";
  },
  display,
  responseText: (events) => texts(events).join("\n"),
  finalAnswer: (events) => texts(events).at(-1) ?? "",
  progress: (event) => /^(assistant\.(message|message_delta|turn_start|turn_end)|tool\.|result$)/.test(String(event.type)),
  receipts: () => [],
};
