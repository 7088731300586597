/**
 * What a receipt holds (`loopx receipt`, `receipt()`) and what receipts add up to: the
 * shapes the record's receipt events, the totals (core/receipts.ts) and their readers share.
 */

/** `billed`: what an API-key call is charged; `estimate`: a list-price estimate nobody pays per call (a subscription). */
export type CostKind = "billed" | "estimate";

/** Token counts of a receipt; every one optional (absent: not reported). */
export interface ReceiptTokens {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
  reasoning?: number;
}

/** The token fields of a receipt, in the order loopx shows them. */
export const TOKEN_FIELDS = ["input", "output", "cacheRead", "cacheWrite", "reasoning"] as const satisfies ReadonlyArray<keyof ReceiptTokens>;

/** A usage window's state as the agent reported it (Claude's `rate_limit_event`, Codex's limits). */
export interface UsageWindow {
  /** `five_hour`, `seven_day`, ... as the agent names it. */
  type: string;
  /** `allowed`, `allowed_warning`, `rejected`, ... as the agent names it. */
  status: string;
  /** When the window resets (ISO 8601). */
  resetsAt?: string;
  /** The share of the window used, when given (0.42 = 42 %). */
  utilization?: number;
  /** Where the reading came from (`claude-stream`, `codex-rollout`, `probe`, ...), when said. */
  source?: string;
}

/** One receipt as a script gives it: cost, tokens, who did the work, the usage window. */
export interface Receipt {
  cost?: { usd: number; kind: CostKind };
  tokens?: ReceiptTokens;
  model?: string;
  provider?: string;
  agent?: string;
  agentVersion?: string;
  window?: UsageWindow;
  /** The agent call failed: its class as the workflow names it (`auth`, `usage_window`, `server`, ...); OTel's `error.type`. */
  failure?: string;
}

type TokenTotals = Record<(typeof TOKEN_FIELDS)[number], number>;

/** Receipts added up (core/receipts.ts adds them): billed and estimated cost apart, tokens by kind. */
export interface Totals {
  costUsd: Record<CostKind, number>;
  tokens: TokenTotals;
  /** Receipts counted. */
  receipts: number;
}

/** A run's totals, and the same per model (`(unknown)` for receipts that named none). */
export interface RunTotals extends Totals {
  models: Record<string, Totals>;
  /** The newest usage window of each `type` its receipts reported (five_hour, 7d, …), in the order first seen. */
  windows?: UsageWindow[];
}
