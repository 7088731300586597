// Gemini CLI (`@google/gemini-cli`): `gemini --output-format stream-json --approval-mode yolo`,
// the prompt on stdin. Its stream: `init` {session_id, model}, `message` {role, content, delta}
// (the assistant's text arrives in pieces), `tool_use` {tool_name, tool_id, parameters},
// `tool_result` {tool_id, status, output}, and a closing `result` {status, stats, error}.
// Retries print nothing on stdout (any event is progress). Usage: `result.stats.models`, per model
// (keyed by the model the API named), input_tokens / cached / input (the uncached part) /
// output_tokens / total_tokens: tokens only, Gemini prints no cost. Read-only: `--approval-mode
// plan` (the CLI's plan mode: reads, no edits, no shell).
import { existsSync } from "node:fs";
import { type Json, type StreamPreset, short, toolOutput, toolSummary, tokenFields, under } from "./common.ts";

/** The runs of assistant text, each run's pieces joined (a run ends at any other event). */
function textRuns(events: Json[]): string[] {
  const runs: string[] = [];
  let open = false;
  for (const event of events) {
    if (event.type === "message" && event.role === "assistant" && typeof event.content === "string") {
      if (open && event.delta === true) runs[runs.length - 1] += event.content;
      else runs.push(event.content);
      open = true;
    } else open = false;
  }
  return runs.filter((run) => run.trim() !== "");
}

/** The assistant text that ended right before `event` (the pieces since the last other event). */
function textBefore(earlier: Json[], event: Json): string {
  const at = earlier.lastIndexOf(event);
  const before = at >= 0 ? earlier.slice(0, at) : earlier;
  let text = "";
  for (let i = before.length - 1; i >= 0 && before[i]!.type === "message" && before[i]!.role === "assistant"; i--) text = String(before[i]!.content ?? "") + text;
  return text.trimEnd();
}

function display(event: Json, earlier: Json[]): string | undefined {
  const lines: string[] = [];
  if (event.type !== "message") {
    const text = textBefore(earlier, event);
    if (text) lines.push(text);
  }
  if (event.type === "init") lines.push(`· session ${event.session_id ?? ""}${event.model ? ` (${event.model})` : ""}`);
  else if (event.type === "tool_use") lines.push(`→ ${event.tool_name}: ${toolSummary(event.parameters)}`);
  else if (event.type === "tool_result") lines.push(toolOutput(event.status === "success" ? "←" : "✗", event.output ?? event.error?.message));
  else if (event.type === "result") {
    const stats = event.stats ?? {};
    const bits = [event.status === "success" ? "done" : "error"];
    if (typeof stats.input_tokens === "number") bits.push(`${stats.input_tokens} in / ${stats.output_tokens ?? 0} out tokens`);
    if (typeof stats.duration_ms === "number") bits.push(`${(stats.duration_ms / 1000).toFixed(1)}s`);
    lines.push(`${event.status === "success" ? "✓" : "✗"} result: ${bits.join(", ")}${event.error?.message ? `: ${short(event.error.message)}` : ""}`);
  }
  return lines.length ? lines.join("\n") : undefined;
}

export const gemini: StreamPreset = {
  cli: "gemini",
  args: "--output-format stream-json --approval-mode yolo --skip-trust",
  streamArgs: "--output-format stream-json",
  readOnlyArgs: "--output-format stream-json --approval-mode plan --skip-trust",
  readOnlyEnforced: true,
  loginFix: "set GEMINI_API_KEY (or run `gemini` once and sign in with Google)",
  preflight: (env) => {
    if (env.GEMINI_API_KEY || env.GOOGLE_API_KEY || env.GOOGLE_GENAI_USE_VERTEXAI || env.GOOGLE_GENAI_USE_GCA || env.GOOGLE_APPLICATION_CREDENTIALS) return undefined;
    if (existsSync(under(env, ".gemini", "oauth_creds.json"))) return undefined;
    return "gemini has no credentials (no GEMINI_API_KEY, no Google sign-in in ~/.gemini)";
  },
  display,
  responseText: (events) => textRuns(events).join("\n"),
  finalAnswer: (events) => textRuns(events).at(-1) ?? "",
  progress: () => true,
  receipts: (events) => {
    const result = [...events].reverse().find((e) => e.type === "result");
    const models: Json = result?.stats?.models ?? {};
    return Object.entries(models).map(([model, m]: [string, Json]) => {
      const reasoning = Math.max(0, (m.total_tokens ?? 0) - (m.input_tokens ?? 0) - (m.output_tokens ?? 0));
      const input = typeof m.input === "number" ? m.input : Math.max(0, (m.input_tokens ?? 0) - (m.cached ?? 0));
      return { model, provider: "google", tokens: tokenFields({ input, output: m.output_tokens, cacheRead: m.cached, reasoning }) };
    });
  },
};
