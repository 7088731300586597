import type { ReceiptEvent } from "../core/events.js";
import { TOKEN_FIELDS } from "../core/receipt-types.js";
import { describeCost, describeTotals, formatUsd, tokenSum, UNKNOWN_MODEL, windowWords, type RunTotals, type Totals } from "../core/receipts.js";
import { shownText } from "../core/untrusted-text.js";

/**
 * Receipts in words for `runs show` and `runs tail` (pure): a receipt line under its iteration,
 * and the run's totals — billed and estimated cost side by side, never added up. Model names and
 * the rest come from scripts: untrusted, shown escaped.
 */

const TOKEN_WORDS: Record<(typeof TOKEN_FIELDS)[number], string> = {
  input: "input",
  output: "output",
  cacheRead: "cache read",
  cacheWrite: "cache write",
  reasoning: "reasoning",
};

/** "  receipt 19:55:02 · $0.0123 · 1.34k tokens · claude-sonnet-4-5 · claude-code 2.1.197 · five_hour allowed_warning 42% until 19:00:00" */
export function describeReceipt(event: ReceiptEvent, localTime: (iso: string) => string): string {
  const parts: string[] = [];
  const cost = event.cost;
  if (cost && typeof cost.usd === "number") parts.push(cost.kind === "estimate" ? `${formatUsd(cost.usd)} est.` : formatUsd(cost.usd));
  const tokens = event.tokens ? TOKEN_FIELDS.reduce((sum, field) => sum + (Number(event.tokens![field]) || 0), 0) : 0;
  if (event.tokens) parts.push(`${tokens} token${tokens === 1 ? "" : "s"}`);
  const who = [event.model, event.provider, [event.agent, event.agentVersion].filter(Boolean).join(" ")].filter((text) => typeof text === "string" && text !== "");
  parts.push(...(who as string[]));
  if (typeof event.failure === "string" && event.failure !== "") parts.push(`failed: ${event.failure}`);
  if (event.window && typeof event.window === "object") parts.push(windowWords(event.window, localTime));
  return shownText(`  receipt ${localTime(event.time).slice(11)} · ${parts.join(" · ")}`);
}

/** "input 3000 · output 300 · cache read 5000" (the kinds the run used). */
function tokenWords(totals: Totals): string {
  const used = TOKEN_FIELDS.filter((field) => totals.tokens[field] > 0);
  return used.map((field) => `${TOKEN_WORDS[field]} ${totals.tokens[field]}`).join(" · ");
}

/** The totals lines of `runs show`'s header: the run's, then one per model when there are several. */
export function totalsLines(totals: RunTotals): string[] {
  const cost = describeCost(totals);
  const tokens = tokenSum(totals);
  // No tokens reported (cost-only receipts): no "0 tokens".
  const tokenPart = tokens > 0 ? `${tokens} token${tokens === 1 ? "" : "s"} (${tokenWords(totals)})` : cost ? "" : "0 tokens";
  const head = `used ${[cost || "no cost reported", tokenPart].filter(Boolean).join(" · ")} · ${totals.receipts} receipt${totals.receipts === 1 ? "" : "s"}`;
  const models = Object.entries(totals.models);
  if (models.length < 2 && (models[0]?.[0] ?? UNKNOWN_MODEL) === UNKNOWN_MODEL) return [head];
  return [head, ...models.map(([model, one]) => shownText(`  ${model}: ${describeTotals(one)}`))];
}
