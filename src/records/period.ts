import { addRunTotals, describeTotals, emptyRunTotals, recordTotals, type RunTotals, type Totals } from "../core/receipts.js";
import type { RecordEvent } from "../core/events.js";
import { shownText } from "../core/untrusted-text.js";
import { parseRecord } from "./parse.js";
import { formatLocalTime } from "./wording.js";
import type { RunSummary } from "./run-state.js";

/**
 * Receipt totals across runs (`loopx runs --since 24h`): what every loop of the period used, per
 * project and per model — "what did my loops use today". Billed and estimated cost stay apart.
 */

/** States whose record ends without a run.end written by loopx itself (which carries the totals). */
const OPEN_STATES = new Set(["running", "paused", "stopping", "crashed", "killed"]);

/**
 * A run's totals when its run.end does not hold them (still running, or closed by its guardian):
 * the whole record, added up. A run loopx ended itself already has them (or had no receipts).
 */
export function addRecordTotals(summary: RunSummary, readText: () => string): void {
  if (summary.totals || !OPEN_STATES.has(summary.state)) return;
  try {
    const totals = recordTotals(parseRecord(readText()).events).run;
    if (totals.receipts > 0) summary.totals = totals;
  } catch {
    // pruned or unreadable while we read: shown without totals
  }
}

/**
 * `loopx runs show --json`'s last line, when the run had receipts: its totals (every sitting, and
 * what a capped record dropped), per model and per iteration.
 */
export function runTotalsLine(run: string, events: RecordEvent[]): (RunTotals & { type: "totals"; run: string; iterations: Record<string, Totals> }) | undefined {
  const { run: totals, iterations } = recordTotals(events);
  if (totals.receipts === 0) return undefined;
  return { type: "totals", run, ...totals, iterations: Object.fromEntries([...iterations].sort(([a], [b]) => a - b)) };
}

/** `loopx runs --since … --json`'s last line: the period's totals, per project and model. */
export interface PeriodTotals {
  type: "totals";
  since: string;
  runs: number;
  totals: RunTotals;
  projects: Record<string, RunTotals>;
}

export function periodTotals(summaries: RunSummary[], since: number): PeriodTotals {
  const period: PeriodTotals = { type: "totals", since: new Date(since).toISOString(), runs: summaries.length, totals: emptyRunTotals(), projects: {} };
  for (const run of summaries) {
    if (!run.totals) continue;
    addRunTotals(period.totals, run.totals);
    addRunTotals((period.projects[run.project] ??= emptyRunTotals()), run.totals);
  }
  return period;
}

/** The lines under `loopx runs --since …`: the period's total, then each project's and each model's. */
export function formatPeriodTotals(period: PeriodTotals): string {
  if (period.totals.receipts === 0) return `no receipts in these ${period.runs} runs\n`;
  // In local time, as the table's start column is (--json keeps the ISO time).
  const lines = [`total since ${formatLocalTime(period.since)}: ${describeTotals(period.totals)}`];
  for (const [project, totals] of Object.entries(period.projects)) {
    lines.push(`  ${project}: ${describeTotals(totals)}`);
    for (const [model, one] of Object.entries(totals.models)) lines.push(`    ${model}: ${describeTotals(one)}`);
  }
  return lines.map((line) => `${shownText(line)}\n`).join("");
}
