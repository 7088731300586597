import { formatUsd } from "./budget.js";
import { tokenSum, type Totals } from "./totals.js";

/**
 * Totals in words, for terminals (progress, `runs`, `runs show`, `runs tail`): billed and
 * estimated cost side by side, never added up — an estimate is labelled `est.` — and the tokens.
 */

/** "12.3k", "4.1M": a token count at a glance (the exact counts are in --json). */
export function formatTokens(tokens: number): string {
  if (tokens < 1000) return String(tokens);
  if (tokens < 1_000_000) return `${(tokens / 1000).toFixed(tokens < 10_000 ? 2 : 1)}k`;
  return `${(tokens / 1_000_000).toFixed(tokens < 10_000_000 ? 2 : 1)}M`;
}

/** The cost part alone: "$0.0369", "$0.50 est.", "$1.20 · $0.50 est.", "" without any cost. */
export function describeCost(totals: Totals): string {
  const { billed, estimate } = totals.costUsd;
  const parts: string[] = [];
  if (billed > 0) parts.push(formatUsd(billed));
  if (estimate > 0) parts.push(`${formatUsd(estimate)} est.`);
  return parts.join(" · ");
}

/** "$0.0369 · 12.3k tokens", "$0.50 est. · 900 tokens", "12.3k tokens". */
export function describeTotals(totals: Totals): string {
  const cost = describeCost(totals);
  const tokens = tokenSum(totals);
  return [cost, tokens > 0 || cost === "" ? `${formatTokens(tokens)} tokens` : ""].filter(Boolean).join(" · ");
}
