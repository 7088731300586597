import type { RunSummary } from "./run-state.js";
import { describeCost } from "../core/receipts.js";
import { formatTable } from "./table-layout.js";
import { formatLocalTime, formatRunDuration, tokensCell } from "./wording.js";

/**
 * The table of `loopx runs` (one row per run) and the duration bars of `loopx runs show`
 * (run-detail-table.ts), laid out in characters (pure). Cells come from records: shown escaped.
 */

/**
 * The table of `loopx runs`, newest first (the caller's order); the PROJECT column with `project`.
 * `idPrefix`: the length of each id's shortest unique prefix, shown in bold.
 */
export function formatRunList(summaries: RunSummary[], options: { project?: boolean; idPrefix?: Map<string, number> } = {}): string {
  // COST and TOKENS only when a listed run had receipts: a user of none sees the table as before.
  // BRANCH only when a listed run had its own worktree (--worktree).
  const costs = summaries.some((run) => run.totals);
  const branches = summaries.some((run) => run.worktree);
  const rows = [["ID", "STATE", "STARTED", "DURATION", "ITER", ...(costs ? ["COST", "TOKENS"] : []), "TARGET", ...(branches ? ["BRANCH"] : []), ...(options.project === false ? [] : ["PROJECT"])]];
  for (const run of summaries) {
    const used = costs ? [run.totals ? describeCost(run.totals) || "-" : "", tokensCell(run.totals)] : [];
    rows.push([
      run.id,
      run.state,
      formatLocalTime(run.start),
      formatRunDuration(run),
      String(run.iterations),
      ...used,
      run.target,
      ...(branches ? [run.worktree?.branch ?? "-"] : []),
      ...(options.project === false ? [] : [run.project]),
    ]);
  }
  const table = formatTable(rows);
  const prefixes = options.idPrefix;
  if (!prefixes) return table;
  // After the layout (widths count characters, not escape sequences); ids are [0-9a-z] only.
  return table
    .split("\n")
    .map((line, i) => {
      const run = summaries[i - 1];
      const length = run && prefixes.get(run.id);
      return run && length && line.startsWith(run.id) ? `\x1b[1m${line.slice(0, length)}\x1b[22m${line.slice(length)}` : line;
    })
    .join("\n");
}

/** A proportional bar: `width` cells for `max`. */
export function durationBar(ms: number, max: number, width = 20): string {
  const filled = max <= 0 ? 0 : Math.max(ms > 0 ? 1 : 0, Math.round((ms / max) * width));
  const key = width * 1000 + filled;
  let bar = bars.get(key);
  if (bar === undefined) bars.set(key, (bar = "█".repeat(filled) + "·".repeat(width - filled)));
  return bar;
}
/** Bars by width and fill: one string each, however many rows show them. */
const bars = new Map<number, string>();
