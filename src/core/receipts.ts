import type { RecordEvent } from "./events.js";
import { TOKEN_FIELDS, type Receipt, type RunTotals, type Totals, type UsageWindow } from "./receipt-types.js";

// The totals' shapes are part of the event schema (run.end and gap carry them): core/events.ts.
export type { RunTotals, Totals };

/**
 * Totals of receipts (pure): per iteration, per run, per model. Each receipt is a delta, added
 * once; billed and estimated cost are kept apart and never summed into one number. Dollars are
 * added at a resolution of 1e-9 (nano-dollars), so that 0.1 + 0.2 is 0.3: totals are exact to the
 * cent however many receipts there are.
 */

/** The model key of a receipt that named no model. */
export const UNKNOWN_MODEL = "(unknown)";

export function emptyTotals(): Totals {
  return { costUsd: { billed: 0, estimate: 0 }, tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 }, receipts: 0 };
}

export function emptyRunTotals(): RunTotals {
  return { ...emptyTotals(), models: {} };
}

/** `a + b` in dollars, to the nano-dollar. */
export function addUsd(a: number, b: number): number {
  return Math.round(a * 1e9 + b * 1e9) / 1e9;
}

/** Adds totals `more` (a receipt's, or other totals) into `into`. */
export function addTotals(into: Totals, more: Totals): void {
  into.costUsd.billed = addUsd(into.costUsd.billed, more.costUsd.billed);
  into.costUsd.estimate = addUsd(into.costUsd.estimate, more.costUsd.estimate);
  for (const field of TOKEN_FIELDS) into.tokens[field] += more.tokens[field];
  into.receipts += more.receipts;
}

/** One receipt as totals. */
export function receiptTotals(receipt: Receipt): Totals {
  const totals = emptyTotals();
  if (receipt.cost) totals.costUsd[receipt.cost.kind] = receipt.cost.usd;
  for (const field of TOKEN_FIELDS) totals.tokens[field] = receipt.tokens?.[field] ?? 0;
  totals.receipts = 1;
  return totals;
}

/** Adds one receipt to a run's totals (and its model's). */
export function addReceipt(run: RunTotals, receipt: Receipt): void {
  const one = receiptTotals(receipt);
  addTotals(run, one);
  addTotals((run.models[receipt.model ?? UNKNOWN_MODEL] ??= emptyTotals()), one);
  if (receipt.window) newestWindow(run, receipt.window);
}

/** Adds a run's totals (a gap's, another run's) into `into`, model by model; its windows are the newer. */
export function addRunTotals(into: RunTotals, more: RunTotals): void {
  addTotals(into, more);
  for (const [model, totals] of Object.entries(more.models)) addTotals((into.models[model] ??= emptyTotals()), totals);
  for (const window of more.windows ?? []) newestWindow(into, window);
}

/** `window` as the newest of its type in the run's totals (a window seen later replaces the one before). */
function newestWindow(run: RunTotals, window: UsageWindow): void {
  const windows = (run.windows ??= []);
  const at = windows.findIndex((seen) => seen.type === window.type);
  if (at >= 0) windows[at] = { ...window };
  else windows.push({ ...window });
}

/** Every token of `totals`, added up (what `tokens` shows; --max-tokens counts all but cache reads: core/budget.ts). */
export function tokenSum(totals: Totals): number {
  let sum = 0;
  for (const field of TOKEN_FIELDS) sum += totals.tokens[field];
  return sum;
}

/** A receipt event's fields, read defensively from a record (which any process can write). */
export function recordedReceipt(event: RecordEvent): Receipt | undefined {
  if (event.type !== "receipt") return undefined;
  const cost = event.cost;
  const usable = (value: unknown) => typeof value === "number" && Number.isFinite(value) && value >= 0;
  const receipt: Receipt = {};
  if (cost && usable(cost.usd) && (cost.kind === "billed" || cost.kind === "estimate")) receipt.cost = { usd: cost.usd, kind: cost.kind };
  if (event.tokens && typeof event.tokens === "object") {
    receipt.tokens = {};
    for (const field of TOKEN_FIELDS) if (usable(event.tokens[field])) receipt.tokens[field] = event.tokens[field];
  }
  if (typeof event.model === "string") receipt.model = event.model;
  if (typeof event.provider === "string") receipt.provider = event.provider;
  if (typeof event.failure === "string") receipt.failure = event.failure;
  const window = recordedWindow(event.window);
  if (window) receipt.window = window;
  return receipt;
}

/** A receipt event's usage window, read as defensively: a type and a status, and what else is well formed. */
function recordedWindow(value: unknown): UsageWindow | undefined {
  const window = value as Partial<Record<keyof UsageWindow, unknown>> | null | undefined;
  if (!window || typeof window !== "object" || typeof window.type !== "string" || typeof window.status !== "string") return undefined;
  const read: UsageWindow = { type: window.type, status: window.status };
  if (typeof window.resetsAt === "string") read.resetsAt = window.resetsAt;
  if (typeof window.utilization === "number" && Number.isFinite(window.utilization)) read.utilization = window.utilization;
  if (typeof window.source === "string") read.source = window.source;
  return read;
}

/**
 * A usage window in words, as `runs show` and the dashboard say it ("five_hour allowed_warning 42%
 * until 19:00:00"). Self-contained: the dashboard ships its source (dashboard/server.ts).
 */
export function windowWords(window: { type?: unknown; status?: unknown; utilization?: unknown; resetsAt?: unknown }, localTime: (iso: string) => string): string {
  const used = typeof window.utilization === "number" ? ` ${Math.round(window.utilization * 100)}%` : "";
  const until = typeof window.resetsAt === "string" ? ` until ${localTime(window.resetsAt)}` : "";
  return `${window.type} ${window.status}${used}${until}`;
}

/** What a record's receipts add up to: the run's totals, and each iteration's (by its n). */
export interface RecordTotals {
  run: RunTotals;
  iterations: Map<number, Totals>;
}

/**
 * The totals of a record's events, every sitting of the run included (a resumed run goes on from
 * them), and the receipts a capped record dropped (counted in its `gap` lines).
 */
export function recordTotals(events: Iterable<RecordEvent>): RecordTotals {
  const run = emptyRunTotals();
  const iterations = new Map<number, Totals>();
  for (const event of events) {
    if (event.type === "gap" && event.receipts) addRunTotals(run, event.receipts);
    const receipt = recordedReceipt(event);
    if (!receipt) continue;
    addReceipt(run, receipt);
    const n = (event as { n?: unknown }).n;
    if (typeof n === "number") {
      const one = iterations.get(n) ?? emptyTotals();
      addTotals(one, receiptTotals(receipt));
      iterations.set(n, one);
    }
  }
  return { run, iterations };
}

/** Dollars as loopx shows them: cents from a dollar up, 4 decimals below (the exact amounts are in --json). */
export function formatUsd(usd: number): string {
  if (usd === 0) return "$0";
  if (usd >= 1) return `$${usd.toFixed(2)}`;
  // Four decimals, trailing zeros beyond the cents dropped: $0.0123, $0.40.
  return usd < 0.00005 ? "<$0.0001" : `$${usd.toFixed(4).replace(/(\.\d\d\d?)0+$/, "$1").replace(/(\.\d\d)0$/, "$1")}`;
}

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

/** "12.3k tokens", "1 token". */
function tokenWord(tokens: number): string {
  return `${formatTokens(tokens)} token${tokens === 1 ? "" : "s"}`;
}

/** "$0.0369 · 12.3k tokens", "$0.50 est. · 900 tokens", "12.3k tokens", "$0.50" (no tokens reported). */
export function describeTotals(totals: Totals): string {
  const cost = describeCost(totals);
  const tokens = tokenSum(totals);
  return [cost, tokens > 0 || cost === "" ? tokenWord(tokens) : ""].filter(Boolean).join(" · ");
}
