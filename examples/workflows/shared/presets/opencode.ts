// opencode (`opencode-ai`): `opencode run --format json`, the prompt as the last argument. Its
// stream: `step_start`, `text` {part.text} (a whole text part), `tool_use` {part.tool,
// part.state{status, input, output, metadata.exit}}, `step_finish` {part.reason, part.tokens,
// part.cost} once per model call, and on failure one `error` event. No closing result: the last
// step_finish has reason "stop". Retries leave no trace (any event is progress). An `error`
// event ends the call (see endsCall). Usage: each
// step_finish's tokens (input is the uncached part; output excludes reasoning) and cost in USD
// (from the model's price in the config). The kind: `estimate` when the provider signed in with
// OAuth (a subscription; auth.json type "oauth"), else `billed`. Read-only: `--agent plan`
// (opencode's plan agent: edits and shell commands denied).
import { join } from "node:path";
import { type Env, type Json, type StreamPreset, dollars, modelArg, readJson, short, toolOutput, toolSummary, tokenFields, under } from "./common.ts";

const texts = (events: Json[]): string[] => events.filter((e) => e.type === "text" && typeof e.part?.text === "string" && e.part.text.trim() !== "").map((e) => e.part.text);

function display(event: Json): string | undefined {
  const part = event.part ?? {};
  if (event.type === "text") return String(part.text ?? "").trimEnd() || undefined;
  if (event.type === "reasoning") return `· thinking: ${short(part.text)}`;
  if (event.type === "tool_use") {
    const state = part.state ?? {};
    const call = `→ ${part.tool}: ${toolSummary(state.input)}`;
    if (state.status !== "completed" && state.status !== "error") return call;
    const exit = state.metadata?.exit;
    return `${call}\n${toolOutput(state.status === "error" || (typeof exit === "number" && exit !== 0) ? "✗" : "←", state.output ?? state.error)}`;
  }
  if (event.type === "step_finish") {
    const t = part.tokens ?? {};
    return `· step ${part.reason ?? "done"}: ${t.input ?? "?"} in / ${t.output ?? "?"} out tokens${typeof part.cost === "number" ? `, $${part.cost.toFixed(6)}` : ""}`;
  }
  if (event.type === "error") return `✗ ${short(event.error?.data?.message ?? event.error?.message ?? event.error?.name)}`;
  return undefined;
}

/** The model: `-m provider/model` in the arguments, else `model` in the config opencode reads. */
function model(args: string[], env: Env): string | undefined {
  const named = modelArg(args);
  if (named) return named;
  const config = env.OPENCODE_CONFIG_CONTENT ? safeParse(env.OPENCODE_CONFIG_CONTENT) : readJson(env.OPENCODE_CONFIG || under(env, ".config", "opencode", "opencode.json"));
  return typeof config?.model === "string" ? config.model : undefined;
}

function safeParse(text: string): Json | undefined {
  try {
    return JSON.parse(text) as Json;
  } catch {
    return undefined;
  }
}

/** estimate when the provider's credentials are OAuth (a subscription), else billed. */
function costKind(provider: string | undefined, env: Env): "billed" | "estimate" {
  const auth = readJson(join(env.XDG_DATA_HOME || under(env, ".local", "share"), "opencode", "auth.json"));
  return provider && auth?.[provider]?.type === "oauth" ? "estimate" : "billed";
}

export const opencode: StreamPreset = {
  cli: "opencode",
  args: "run --format json",
  streamArgs: "run --format json",
  readOnlyArgs: "run --format json --agent plan",
  readOnlyEnforced: true,
  promptArg: true,
  loginFix: "run `opencode auth login`, or give the provider an apiKey in opencode.json",
  display,
  responseText: (events) => texts(events).join("\n"),
  finalAnswer: (events) => texts(events).at(-1) ?? "",
  progress: () => true,
  // Its `error` event ends a run — except a context overflow, after which opencode compacts and
  // retries without end (recorded: 16 overflows in 400 s): the call is over at the first one.
  endsCall: (event) => event.type === "error",
  receipts: (events, context) => {
    const name = model(context.args, context.env);
    const provider = name?.includes("/") ? name.split("/")[0] : undefined;
    const kind = context.costKind ?? costKind(provider, context.env);
    return events
      .filter((e) => e.type === "step_finish" && e.part?.tokens)
      .map((e) => {
        const t = e.part.tokens;
        const usd = dollars(e.part.cost);
        return {
          ...(name ? { model: name.includes("/") ? name.slice(name.indexOf("/") + 1) : name } : {}),
          ...(provider ? { provider } : {}),
          tokens: tokenFields({ input: t.input, output: t.output, cacheRead: t.cache?.read, cacheWrite: t.cache?.write, reasoning: t.reasoning }),
          ...(usd !== undefined && usd > 0 ? { cost: { usd, kind } } : {}),
        };
      });
  },
};
