import { addUsd, formatUsd, tokenSum, type RunTotals } from "./receipts.js";

/**
 * Budgets (loopx's own addition, pure): `--max-cost <usd>` (billed cost; estimates too with
 * `--count-estimates`) and `--max-tokens <n>` (every token). A run whose totals reach a budget
 * starts no further script and ends "budget" with exit code BUDGET_EXIT_CODE.
 */

/** The exit code of a run that reached its budget (not 0: CI must see it; not 1, 124 or 128+N). */
export const BUDGET_EXIT_CODE = 3;

export interface Budget {
  /** USD; billed cost counts, estimates only with countEstimates. */
  maxCost?: number;
  countEstimates?: boolean;
  /** Tokens of every kind, added up. */
  maxTokens?: number;
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
    const tokens = tokenSum(totals);
    if (tokens >= budget.maxTokens) return `budget reached: --max-tokens ${budget.maxTokens}, the run used ${tokens} tokens`;
  }
  return undefined;
}
