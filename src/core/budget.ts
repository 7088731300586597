import { addUsd, formatUsd, type RunTotals, type Totals } from "./receipts.js";
import type { Receipt } from "./receipt-types.js";

/**
 * Budgets (loopx's own addition, pure): `--max-cost <usd>` (billed cost; estimates too with
 * `--count-estimates`) and `--max-tokens <n>` (the tokens a run's work is made of: input, cache
 * writes, output and reasoning — not cache reads). A run whose totals reach a budget starts no
 * further script and ends "budget" with exit code BUDGET_EXIT_CODE.
 */

/** The exit code of a run that reached its budget (not 0: CI must see it; not 1, 124 or 128+N). */
export const BUDGET_EXIT_CODE = 3;

export interface Budget {
  /** USD; billed cost counts, estimates only with countEstimates. */
  maxCost?: number;
  countEstimates?: boolean;
  /** Tokens: input, cache writes, output and reasoning added up (budgetTokens); cache reads are not counted. */
  maxTokens?: number;
}

/**
 * The run's budget from its options (`--max-cost` / `--count-estimates` / `--max-tokens`, RunOptions
 * the same, or the ones a record kept), or undefined when it has none. The one place a budget is
 * made: the engine's receipts part and `runs resume`'s refusal of a spent run both use it.
 */
export function budgetOf(options: { maxCost?: unknown; countEstimates?: unknown; maxTokens?: unknown }): Budget | undefined {
  const { maxCost, countEstimates, maxTokens } = options;
  if (typeof maxCost !== "number" && typeof maxTokens !== "number") return undefined;
  return {
    ...(typeof maxCost === "number" ? { maxCost } : {}),
    ...(countEstimates === true ? { countEstimates: true } : {}),
    ...(typeof maxTokens === "number" ? { maxTokens } : {}),
  };
}

/**
 * The tokens --max-tokens counts: every kind but cache reads. An agent reads its whole context
 * from the prompt cache again on every turn (100k+ tokens a turn for Claude Code, most of its
 * tokens, billed at a tenth of input): counted, they would spend a budget on the same context
 * over and over, so a budget would mean "turns × context" rather than the work done.
 */
function budgetTokens(totals: Totals): number {
  const { input, cacheWrite, output, reasoning } = totals.tokens;
  return input + cacheWrite + output + reasoning;
}

/** The cost a budget counts. */
function countedCost(totals: RunTotals, countEstimates: boolean | undefined): number {
  return countEstimates ? addUsd(totals.costUsd.billed, totals.costUsd.estimate) : totals.costUsd.billed;
}

/** The one line naming the budget reached and the total, or undefined while within every budget. */
export function budgetReached(budget: Budget, totals: RunTotals): string | undefined {
  if (budget.maxCost !== undefined) {
    const cost = countedCost(totals, budget.countEstimates);
    if (cost >= budget.maxCost) {
      const what = budget.countEstimates ? "billed + estimated" : "billed";
      const aside = !budget.countEstimates && totals.costUsd.estimate > 0 ? ` (estimates not counted: ${formatUsd(totals.costUsd.estimate)})` : "";
      return `budget reached: --max-cost ${formatUsd(budget.maxCost)}${budget.countEstimates ? " --count-estimates" : ""}, the run used ${formatUsd(cost)} ${what}${aside}`;
    }
  }
  if (budget.maxTokens !== undefined) {
    const tokens = budgetTokens(totals);
    if (tokens >= budget.maxTokens) {
      const reads = totals.tokens.cacheRead > 0 ? `; cache reads not counted: ${totals.tokens.cacheRead}` : "";
      return `budget reached: --max-tokens ${budget.maxTokens}, the run used ${tokens} tokens (input, cache write, output, reasoning${reads})`;
    }
  }
  return undefined;
}

/** A receipt whose cost --max-cost does not count: an estimate, without --count-estimates. */
export function costNotCounted(budget: Budget, receipt: Receipt): boolean {
  return budget.maxCost !== undefined && !budget.countEstimates && receipt.cost?.kind === "estimate";
}

/** The one warning on the run's first receipt whose cost the budget does not count. */
export function notCountedWarning(budget: Budget, totals: RunTotals): string {
  return `--max-cost ${formatUsd(budget.maxCost ?? 0)} counts billed cost only: the ${formatUsd(totals.costUsd.estimate)} this run reported so far as an estimate (a subscription's, say) does not count toward it unless you add --count-estimates`;
}

/** What the summary line adds when the run's estimates were not counted by its --max-cost; "" otherwise. */
export function notCountedNote(budget: Budget | undefined, totals: RunTotals): string {
  if (!budget || budget.maxCost === undefined || budget.countEstimates || totals.costUsd.estimate <= 0) return "";
  return ` (estimates not counted by --max-cost ${formatUsd(budget.maxCost)}: add --count-estimates)`;
}
