// What an agent call used, read from its stream, as loopx receipts (the format `receipt()` from
// "loopx" takes: README, "Receipts"). Pure: events in, receipts out; run-agent.ts reports them.
// Shared by the ralph and converge workflows.
//
// - claude: the `result` event — `total_cost_usd`, `usage`, `modelUsage` (one receipt per model;
//   `usage` is the same calls summed, so it is used only when there is no `modelUsage`). Without a
//   `result` (killed, hung, a subagent's budget tripped): the `assistant` events' `message.usage`,
//   the LAST event of each `message.id` (Claude repeats a message once per content block), tokens
//   only — Claude prints no cost before its result. The cost is an `estimate` on a subscription
//   (the init event's `apiKeySource` is "none": OAuth, `claude login`) and `billed` with an API
//   key ("ANTHROPIC_API_KEY", "apiKeyHelper", "/login managed key") or a cloud provider.
//   `rate_limit_event`s give the usage window (the last one of each `rateLimitType`).
// - amp: `assistant` messages carry `usage` (no model, no cost); the cost is the balance that
//   `amp usage` reports going down (AGENT_USAGE_CMD), `billed`.
// - cline: each request's say "api_req_started" carries `tokensIn`, `tokensOut`, `cacheWrites`,
//   `cacheReads` and `cost` (no model), `billed`; a message repeated as it updates (same `ts`)
//   counts once.
// `<prefix>COST_KIND` (billed | estimate) overrides the kind for any agent.
import type { CostKind, Receipt, ReceiptTokens, UsageWindow } from "loopx";
import type { AgentType } from "./agent.ts";

type Json = Record<string, any>;
// The receipt types loopx publishes (type-only: nothing is loaded at run time).
export type { CostKind, Receipt, UsageWindow };
type Tokens = ReceiptTokens;

export interface UsageContext {
  /** The environment the agent ran with (decides estimate vs billed when the stream does not). */
  env: Record<string, string | undefined>;
  /** AGENT_COST_KIND and the like: overrides the kind. */
  costKind?: CostKind;
  /** What the balance command measured this call cost (amp's `amp usage`, before minus after). */
  balanceCost?: number;
}

const AGENTS: Record<"claude" | "codex" | "amp" | "cline", string> = { claude: "claude-code", codex: "codex", amp: "amp", cline: "cline" };

// What loopx accepts (README, "Receipts"): a field the stream gives in another shape is left out
// rather than the whole receipt refused.
const count = (value: unknown): number | undefined => (typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : undefined);
const dollars = (value: unknown): number | undefined => (typeof value === "number" && Number.isFinite(value) && value >= 0 && value <= 1_000_000 ? value : undefined);
const label = (value: unknown): string | undefined => (typeof value === "string" && value.trim() !== "" && [...value].length <= 200 ? value : undefined);

/** Tokens with only the fields that are there (and a receipt of nothing is none at all). */
function tokens(input: unknown, output: unknown, cacheRead: unknown, cacheWrite: unknown, reasoning?: unknown): Tokens | undefined {
  const all: Tokens = { input: count(input), output: count(output), cacheRead: count(cacheRead), cacheWrite: count(cacheWrite), reasoning: count(reasoning) || undefined };
  for (const key of Object.keys(all) as Array<keyof Tokens>) if (all[key] === undefined) delete all[key];
  return Object.keys(all).length > 0 ? all : undefined;
}

function addTokens(into: Tokens, more: Tokens | undefined): void {
  for (const [key, value] of Object.entries(more ?? {}) as Array<[keyof Tokens, number]>) into[key] = (into[key] ?? 0) + value;
}

const truthy = (value: string | undefined): boolean => value !== undefined && value !== "" && value !== "0" && value.toLowerCase() !== "false";

/** estimate on a Claude subscription, billed with an API key or a cloud provider (Bedrock, Vertex, Foundry). */
export function claudeCostKind(init: Json | undefined, env: UsageContext["env"]): CostKind {
  const cloud = ["CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY"].some((name) => truthy(env[name]));
  if (cloud || truthy(env.ANTHROPIC_AUTH_TOKEN)) return "billed";
  const source = init?.apiKeySource;
  if (typeof source === "string") return source === "none" ? "estimate" : "billed";
  // No init event (the agent died first): what Claude Code itself would have used.
  return truthy(env.ANTHROPIC_API_KEY) ? "billed" : "estimate";
}

/** The usage windows Claude reported: the last `rate_limit_event` of each type. */
export function claudeWindows(events: Json[]): UsageWindow[] {
  const byType = new Map<string, UsageWindow>();
  for (const event of events) {
    const info = event.type === "rate_limit_event" ? event.rate_limit_info : undefined;
    if (!info || !label(info.rateLimitType) || !label(info.status)) continue;
    const window: UsageWindow = { type: info.rateLimitType, status: info.status, source: "claude-stream" };
    if (count(info.resetsAt) !== undefined) window.resetsAt = new Date(info.resetsAt * 1000).toISOString();
    if (dollars(info.utilization) !== undefined && info.utilization <= 1000) window.utilization = info.utilization;
    byType.delete(window.type);
    byType.set(window.type, window);
  }
  return [...byType.values()];
}

const messageTokens = (usage: Json | undefined): Tokens | undefined =>
  usage && typeof usage === "object" ? tokens(usage.input_tokens, usage.output_tokens, usage.cache_read_input_tokens, usage.cache_creation_input_tokens) : undefined;

/**
 * Tokens of the assistant messages, per model: the last event of each `message.id` (an event
 * without an id counts on its own); synthetic messages (Claude's own error text) used nothing.
 */
export function assistantTokens(events: Json[]): Map<string, Tokens> {
  const last = new Map<string, Json>();
  events.forEach((event, i) => {
    const message = event.type === "assistant" ? event.message : undefined;
    if (!message || typeof message !== "object" || message.model === "<synthetic>" || !message.usage) return;
    last.set(typeof message.id === "string" ? `id:${message.id}` : `at:${i}`, message);
  });
  const byModel = new Map<string, Tokens>();
  for (const message of last.values()) {
    const model = label(message.model) ?? "";
    const sum = byModel.get(model) ?? {};
    addTokens(sum, messageTokens(message.usage));
    byModel.set(model, sum);
  }
  for (const [model, sum] of byModel) if (Object.keys(sum).length === 0) byModel.delete(model);
  return byModel;
}

/** The receipts of Claude's last `result` event: one per model of `modelUsage`, else one from `usage`. */
function claudeResultReceipts(result: Json, kind: CostKind, fallbackModel: string | undefined): Receipt[] {
  const total = dollars(result.total_cost_usd);
  const models = result.modelUsage && typeof result.modelUsage === "object" ? Object.entries(result.modelUsage as Record<string, Json>) : [];
  if (models.length === 0) {
    const receipt: Receipt = { tokens: messageTokens(result.usage), model: fallbackModel };
    if (total !== undefined) receipt.cost = { usd: total, kind };
    return [receipt];
  }
  // One model: the total is its cost. Several: each one's own, when every one has it; else the
  // total once, on a receipt of its own.
  const single = models.length === 1;
  const perModel = !single && models.every(([, m]) => dollars(m?.costUSD) !== undefined);
  const receipts: Receipt[] = models.map(([model, m]) => {
    // Claude's output tokens include its thinking; loopx counts reasoning apart from output.
    const thinking = count(m.thinkingTokens) ?? 0;
    const output = count(m.outputTokens) !== undefined ? Math.max(0, m.outputTokens - thinking) : undefined;
    const receipt: Receipt = { model: label(model), tokens: tokens(m.inputTokens, output, m.cacheReadInputTokens, m.cacheCreationInputTokens, thinking) };
    const usd = perModel ? (m.costUSD as number) : single ? (total ?? dollars(m.costUSD)) : undefined;
    if (usd !== undefined) receipt.cost = { usd, kind };
    return receipt;
  });
  if (!single && !perModel && total !== undefined) receipts.push({ cost: { usd: total, kind } });
  return receipts;
}

/** Claude Code's receipts (see the top of this file). */
export function claudeReceipts(events: Json[], context: UsageContext): Receipt[] {
  const init = events.find((e) => e.type === "system" && e.subtype === "init");
  const kind = context.costKind ?? claudeCostKind(init, context.env);
  const resultAt = events.map((e) => e.type).lastIndexOf("result");
  const fallbackModel = label(init?.model);
  const receipts: Receipt[] = [];
  if (resultAt >= 0) receipts.push(...claudeResultReceipts(events[resultAt]!, kind, fallbackModel));
  // Messages after the last result (or all of them, without one) are in no result's totals.
  const counted = new Set(events.slice(0, resultAt + 1).map((e) => (e.type === "assistant" ? e.message?.id : undefined)).filter(Boolean));
  const after = events.slice(resultAt + 1).filter((e) => !(e.type === "assistant" && counted.has(e.message?.id)));
  for (const [model, sum] of assistantTokens(after)) receipts.push({ model: model || fallbackModel, tokens: sum });
  return finish(receipts, claudeWindows(events), { agent: AGENTS.claude, agentVersion: label(init?.claude_code_version), provider: "anthropic" });
}

/** amp's receipts: its assistant messages' tokens, and the balance it spent. */
export function ampReceipts(events: Json[], context: UsageContext): Receipt[] {
  const receipts: Receipt[] = [];
  for (const [model, sum] of assistantTokens(events)) receipts.push({ model: model || undefined, tokens: sum });
  if (context.balanceCost !== undefined) receipts.push({ cost: { usd: context.balanceCost, kind: context.costKind ?? "billed" } });
  return finish(receipts, [], { agent: AGENTS.amp });
}

/** cline's receipts: one per API request (say "api_req_started", the last version of each `ts`). */
export function clineReceipts(events: Json[], context: UsageContext): Receipt[] {
  const requests = new Map<unknown, Json>();
  events.forEach((event, i) => {
    if (event.type !== "say" || event.say !== "api_req_started" || event.partial === true || typeof event.text !== "string") return;
    try {
      const info = JSON.parse(event.text);
      if (info && typeof info === "object") requests.set(event.ts ?? `at:${i}`, info);
    } catch {
      // not JSON: nothing to count
    }
  });
  const receipts: Receipt[] = [...requests.values()].map((info) => {
    const receipt: Receipt = { tokens: tokens(info.tokensIn, info.tokensOut, info.cacheReads, info.cacheWrites) };
    if (dollars(info.cost) !== undefined) receipt.cost = { usd: info.cost, kind: context.costKind ?? "billed" };
    return receipt;
  });
  if (receipts.length === 0 && context.balanceCost !== undefined) receipts.push({ cost: { usd: context.balanceCost, kind: context.costKind ?? "billed" } });
  return finish(receipts, [], { agent: AGENTS.cline });
}

/** The windows go on the receipts (one each), the agent's name on all; empty receipts are dropped. */
function finish(receipts: Receipt[], windows: UsageWindow[], who: Pick<Receipt, "agent" | "agentVersion" | "provider">): Receipt[] {
  const kept = receipts.filter((r) => r.cost !== undefined || r.tokens !== undefined);
  windows.forEach((window, i) => {
    if (kept[i]) kept[i]!.window = window;
    else kept.push({ window });
  });
  return kept.map((r) => {
    const out: Receipt = { ...r, ...who };
    for (const key of Object.keys(out) as Array<keyof Receipt>) if (out[key] === undefined) delete out[key];
    return out;
  });
}

/** The receipts of one agent call, whichever agent it was. */
export function agentReceipts(type: AgentType, events: Json[], context: UsageContext): Receipt[] {
  if (type === "claude") return claudeReceipts(events, context);
  if (type === "amp") return ampReceipts(events, context);
  if (type === "cline") return clineReceipts(events, context);
  return [];
}

/** Money, billed and estimated apart: they are never summed into one number. */
export interface Cost {
  billed?: number;
  estimate?: number;
}

/** The cost in receipts (undefined when none carries one). */
export function receiptsCost(receipts: Receipt[]): Cost | undefined {
  let out: Cost | undefined;
  for (const r of receipts) if (r.cost) (out ??= {})[r.cost.kind] = (out[r.cost.kind] ?? 0) + r.cost.usd;
  return out;
}

/** a + b, kind by kind; undefined + undefined is undefined. */
export function addCost(a: Cost | undefined, b: Cost | undefined): Cost | undefined {
  if (!a || !b) return a ?? (b ? { ...b } : undefined);
  const out: Cost = { ...a };
  for (const kind of ["billed", "estimate"] as const) if (b[kind] !== undefined) out[kind] = (out[kind] ?? 0) + b[kind]!;
  return out;
}

/** `$0.250000 billed`, `$0.010000 billed, $0.200000 estimate`. */
export function costText(cost: Cost, usd: (amount: number) => string): string {
  return (["billed", "estimate"] as const)
    .filter((kind) => cost[kind] !== undefined)
    .map((kind) => `${usd(cost[kind]!)} ${kind}`)
    .join(", ");
}
