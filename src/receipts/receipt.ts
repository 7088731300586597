import { TOKEN_FIELDS, type CostKind, type Receipt, type ReceiptTokens, type UsageWindow } from "../core/receipt-types.js";

/**
 * A receipt as a script gives it, checked (pure; loaded by a script's `import "loopx"`, so no
 * imports beyond types). Every problem is one TypeError whose message names the field
 * (`tokens.input must be a non-negative integer, got -1`); nothing is dropped or fixed silently,
 * so what is recorded is exactly what was reported.
 */

/** Bytes of a receipt as JSON, at most (and of `loopx receipt --json`'s text); text fields, characters at most. */
export const RECEIPT_MAX_BYTES = 4096;
const RECEIPT_TEXT_CHARS = 200;
/** One receipt's cost, at most (USD): a typo of a few zeros is refused, not recorded. */
const RECEIPT_MAX_USD = 1_000_000;

const COST_KINDS: readonly CostKind[] = ["billed", "estimate"];
const TEXT_FIELDS = ["model", "provider", "agent", "agentVersion", "failure"] as const;
const FIELDS = new Set(["cost", "tokens", "window", ...TEXT_FIELDS]);

function fail(field: string, what: string, value: unknown): never {
  throw new TypeError(`${field} must be ${what}, got ${shown(value)}`);
}

function shown(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === "number" || typeof value === "boolean" || value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

function object(value: unknown, field: string, known: ReadonlySet<string>): Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) fail(field, "an object", value);
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!known.has(key)) throw new TypeError(`${field === "receipt" ? "" : `${field}.`}${key} is not a receipt field (${[...known].join(", ")})`);
  }
  return record;
}

function text(value: unknown, field: string): string {
  if (typeof value !== "string" || value.trim() === "") fail(field, "a non-empty string", value);
  const chars = [...(value as string)];
  if (chars.length > RECEIPT_TEXT_CHARS) throw new TypeError(`${field} is over ${RECEIPT_TEXT_CHARS} characters`);
  return value as string;
}

function amount(value: unknown, field: string, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value > max) fail(field, `a number from 0 to ${max}`, value);
  return value as number;
}

function count(value: unknown, field: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) fail(field, "a non-negative integer", value);
  return value as number;
}

function cost(value: unknown): { usd: number; kind: CostKind } {
  const record = object(value, "cost", new Set(["usd", "kind"]));
  const usd = amount(record.usd, "cost.usd", RECEIPT_MAX_USD);
  if (!COST_KINDS.includes(record.kind as CostKind)) fail("cost.kind", `"billed" or "estimate"`, record.kind);
  return { usd, kind: record.kind as CostKind };
}

function tokens(value: unknown): ReceiptTokens {
  const record = object(value, "tokens", new Set(TOKEN_FIELDS));
  const checked: ReceiptTokens = {};
  for (const field of TOKEN_FIELDS) if (record[field] !== undefined) checked[field] = count(record[field], `tokens.${field}`);
  return checked;
}

function usageWindow(value: unknown): UsageWindow {
  const record = object(value, "window", new Set(["type", "status", "resetsAt", "utilization", "source"]));
  const checked: UsageWindow = { type: text(record.type, "window.type"), status: text(record.status, "window.status") };
  if (record.resetsAt !== undefined) {
    const time = typeof record.resetsAt === "string" && /^\d{4}-\d\d-\d\dT/.test(record.resetsAt) ? Date.parse(record.resetsAt) : Number.NaN;
    if (Number.isNaN(time)) fail("window.resetsAt", "an ISO 8601 time", record.resetsAt);
    checked.resetsAt = new Date(time).toISOString();
  }
  if (record.utilization !== undefined) checked.utilization = amount(record.utilization, "window.utilization", 1000);
  if (record.source !== undefined) checked.source = text(record.source, "window.source");
  return checked;
}

/** The receipt in `value`, checked and copied field by field (nothing else is kept); throws a TypeError naming the field. */
export function parseReceipt(value: unknown): Receipt {
  const record = object(value, "receipt", FIELDS);
  const receipt: Receipt = {};
  if (record.cost !== undefined) receipt.cost = cost(record.cost);
  if (record.tokens !== undefined) receipt.tokens = tokens(record.tokens);
  for (const field of TEXT_FIELDS) if (record[field] !== undefined) receipt[field] = text(record[field], field);
  if (record.window !== undefined) receipt.window = usageWindow(record.window);
  if (!receipt.cost && !receipt.tokens && !receipt.window) throw new TypeError("receipt is empty: give cost, tokens or window");
  if (Buffer.byteLength(JSON.stringify(receipt)) > RECEIPT_MAX_BYTES) throw new TypeError(`receipt is over ${RECEIPT_MAX_BYTES} bytes as JSON`);
  return receipt;
}
