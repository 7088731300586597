/**
 * What the shipped workflows report as receipts, read from each agent's stream (the pure half of
 * examples/workflows/shared/usage.ts). The Claude fixtures extend the real recording
 * (fixtures/agents/claude-code-stream-json.sample.ndjson, Claude Code 2.1.328) — same event
 * shapes, usage numbers of their own:
 * - claude-api-key-models.ndjson: an API-key session (`apiKeySource` "ANTHROPIC_API_KEY"), two
 *   models (a subagent on haiku), a message repeated per content block, `usage` and `modelUsage`
 *   in the result, a five-hour window with utilization;
 * - claude-oauth.ndjson: a subscription session (`apiKeySource` "none"), one model, windows of two
 *   types (and a typeless `allowed` event, as the real CLI prints for subscribers);
 * - claude-no-result.ndjson: a call killed before its result: repeated message ids with growing
 *   usage, a subagent's messages, a synthetic message.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../helpers.js";
import { ampStream, clineStream, claudeLimitStream } from "../../fixtures/agents/support.js";
import { addCost, agentReceipts, claudeCostKind, costText, receiptsCost } from "../../../examples/workflows/shared/usage.ts";

const events = (text: string): Array<Record<string, any>> => text.trim().split("\n").map((line) => JSON.parse(line));
const fixture = (name: string) => events(readFileSync(join(ROOT, "test", "fixtures", "agents", name), "utf8"));
const CLAUDE = { agent: "claude-code", agentVersion: "2.1.328", provider: "anthropic" };
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

describe("claude", () => {
  it("API key: one billed receipt per model of modelUsage (usage not added again), the window on the first", () => {
    const receipts = agentReceipts("claude", fixture("claude-api-key-models.ndjson"), { env: {} });
    expect(receipts).toEqual([
      {
        model: "claude-sonnet-4-5",
        cost: { usd: 0.033675, kind: "billed" },
        tokens: { input: 1500, output: 480, cacheRead: 61000, cacheWrite: 500, reasoning: 120 }, // thinking apart from output
        window: { type: "five_hour", status: "allowed", resetsAt: iso(1764100800), utilization: 0.42, source: "claude-stream" },
        ...CLAUDE,
      },
      { model: "claude-haiku-4-5", cost: { usd: 0.0011, kind: "billed" }, tokens: { input: 800, output: 60, cacheRead: 0, cacheWrite: 0 }, ...CLAUDE },
    ]);
    expect(receiptsCost(receipts)).toEqual({ billed: 0.033675 + 0.0011 });
  });

  it("subscription (apiKeySource none): the cost is an estimate; each window type once, the last of it", () => {
    const receipts = agentReceipts("claude", fixture("claude-oauth.ndjson"), { env: { ANTHROPIC_API_KEY: "" } });
    expect(receipts).toEqual([
      {
        model: "claude-opus-4-5",
        cost: { usd: 0.0523, kind: "estimate" },
        tokens: { input: 12, output: 940, cacheRead: 18000, cacheWrite: 4200 },
        window: { type: "five_hour", status: "allowed_warning", resetsAt: iso(1764100800), utilization: 0.91, source: "claude-stream" },
        ...CLAUDE,
      },
      { window: { type: "seven_day", status: "allowed", resetsAt: iso(1764600000), source: "claude-stream" }, ...CLAUDE },
    ]);
  });

  it("no result: the assistant messages' usage, the last event of each message.id, per model, no cost", () => {
    const receipts = agentReceipts("claude", fixture("claude-no-result.ndjson"), { env: {} });
    expect(receipts).toEqual([
      { model: "claude-sonnet-4-5", tokens: { input: 950, output: 285, cacheRead: 41000, cacheWrite: 300 }, ...CLAUDE },
      { model: "claude-haiku-4-5", tokens: { input: 400, output: 52 }, ...CLAUDE },
    ]);
    expect(receiptsCost(receipts)).toBeUndefined();
  });

  it("messages after the last result are added once; those before it are in its totals", () => {
    const all = fixture("claude-oauth.ndjson");
    const late = { type: "assistant", message: { id: "msg_late", model: "claude-opus-4-5", usage: { input_tokens: 5, output_tokens: 7 } } };
    const again = structuredClone(all.find((e) => e.type === "assistant")!);
    const receipts = agentReceipts("claude", [...all, again, late], { env: {} });
    expect(receipts.map((r) => [r.tokens, r.window?.type])).toEqual([
      [{ input: 12, output: 940, cacheRead: 18000, cacheWrite: 4200 }, "five_hour"],
      [{ input: 5, output: 7 }, "seven_day"],
    ]);
  });

  it("a usage window rejected: the window, the zero cost, nothing else", () => {
    const receipts = agentReceipts("claude", events(claudeLimitStream(1764100800)), { env: {} });
    expect(receipts).toEqual([{ model: "claude-opus-5-5", cost: { usd: 0, kind: "billed" }, window: { type: "five_hour", status: "rejected", resetsAt: iso(1764100800), source: "claude-stream" }, ...CLAUDE }]);
  });

  it("estimate or billed: the init event first, then the environment; COST_KIND overrides both", () => {
    expect(claudeCostKind({ apiKeySource: "none" }, {})).toBe("estimate");
    for (const source of ["ANTHROPIC_API_KEY", "apiKeyHelper", "/login managed key"]) expect(claudeCostKind({ apiKeySource: source }, {})).toBe("billed");
    expect(claudeCostKind({ apiKeySource: "none" }, { CLAUDE_CODE_USE_BEDROCK: "1" })).toBe("billed");
    expect(claudeCostKind({ apiKeySource: "none" }, { ANTHROPIC_AUTH_TOKEN: "t" })).toBe("billed");
    expect(claudeCostKind(undefined, { ANTHROPIC_API_KEY: "sk-ant-api03-x" })).toBe("billed");
    expect(claudeCostKind(undefined, { CLAUDE_CODE_OAUTH_TOKEN: "sk-ant-oat01-x" })).toBe("estimate");
    const receipts = agentReceipts("claude", fixture("claude-oauth.ndjson"), { env: {}, costKind: "billed" });
    expect(receipts[0]!.cost).toEqual({ usd: 0.0523, kind: "billed" });
  });

  it("the real recording as is: its one model, the result's total", () => {
    const receipts = agentReceipts("claude", fixture("claude-code-stream-json.sample.ndjson"), { env: {} });
    expect(receipts).toEqual([{ model: "claude-opus-5-5", cost: { usd: 0.00028000000000000003, kind: "billed" }, tokens: { input: 20, output: 10, cacheRead: 0, cacheWrite: 0 }, ...CLAUDE }]);
  });
});

describe("amp and cline", () => {
  it("amp: the assistant messages' tokens (no model, no cost in the stream); the balance it spent, billed", () => {
    const stream = events(ampStream("the prompt", "Done."));
    expect(agentReceipts("amp", stream, { env: {} })).toEqual([{ tokens: { input: 12783, output: 8 }, agent: "amp" }]);
    expect(agentReceipts("amp", stream, { env: {}, balanceCost: 0.25 })).toEqual([
      { tokens: { input: 12783, output: 8 }, agent: "amp" },
      { cost: { usd: 0.25, kind: "billed" }, agent: "amp" },
    ]);
  });

  it("cline: one receipt per request, a request repeated as it updates (same ts) once, partial ones skipped", () => {
    const stream = events(clineStream("the prompt", "Done.", 0.0125));
    const request = stream.find((e) => e.say === "api_req_started")!;
    const updated = { ...request, text: JSON.stringify({ request: "…", tokensIn: 1300, tokensOut: 95, cacheReads: 200, cacheWrites: 10, cost: 0.0131 }) };
    const partial = { ...request, ts: 1, partial: true };
    expect(agentReceipts("cline", [...stream, updated, partial], { env: {} })).toEqual([
      { tokens: { input: 1300, output: 95, cacheRead: 200, cacheWrite: 10 }, cost: { usd: 0.0131, kind: "billed" }, agent: "cline" },
    ]);
  });

  it("a field in a shape loopx refuses is left out, never the whole receipt", () => {
    const events = fixture("claude-oauth.ndjson");
    const result = events.find((e) => e.type === "result")!;
    result.modelUsage = { ["m".repeat(201)]: { ...result.modelUsage["claude-opus-4-5"], inputTokens: 1.5, outputTokens: -3 } };
    const [first] = agentReceipts("claude", events, { env: {} });
    expect(first).toMatchObject({ cost: { usd: 0.0523, kind: "estimate" }, tokens: { cacheRead: 18000, cacheWrite: 4200 } });
    expect(first!.model).toBeUndefined();
    expect(first!.tokens).not.toHaveProperty("input");
    expect(first!.tokens).not.toHaveProperty("output");
  });

  it("costs add kind by kind and are shown apart", () => {
    expect(addCost({ billed: 0.1 }, { estimate: 0.2 })).toEqual({ billed: 0.1, estimate: 0.2 });
    expect(addCost(undefined, undefined)).toBeUndefined();
    expect(costText({ billed: 0.1, estimate: 0.2 }, (n) => `$${n.toFixed(2)}`)).toBe("$0.10 billed, $0.20 estimate");
  });
});
