import { addUsd } from "../core/receipts.js";
import { FLAG, type IterationNumbers } from "./iteration-numbers.js";

/** The run page's timeline chart, computed from a run's IterationNumbers (pure, no I/O). */

export interface Timeline {
  /** Iterations in the run (the highest n seen). */
  count: number;
  /** Iterations per column (1 up to `columns` iterations). */
  perColumn: number;
  /** Targets in order of first appearance; a column's `target` indexes it. */
  targets: string[];
  /** Longest duration of any column (ms), the chart's scale. */
  maxMs: number;
  /**
   * One entry per column: [first n, last n, longest ms, mean ms, most frequent target, failures,
   * timeouts, gotos, stops, open (1 while its iteration runs), billed USD, estimated USD, tokens]
   * (the last three: what its iterations' receipts add up to).
   */
  columns: number[][];
}

/**
 * One column per iteration up to `maxColumns` iterations, beyond that consecutive iterations share
 * a column (its longest and mean duration, its most frequent target, how many failed / timed out /
 * went to another target / said stop). An iteration still running counts with its duration so far
 * (`open`: its n and how long it has been running).
 */
export function timelineOf(numbers: IterationNumbers, targets: string[], maxColumns: number, open?: { n: number; ms: number }): Timeline {
  const count = numbers.count;
  const columnsWanted = Math.max(1, Math.min(count, maxColumns));
  const perColumn = Math.max(1, Math.ceil(count / columnsWanted));
  const columns: number[][] = [];
  let maxMs = 0;
  const votes = new Map<number, number>();
  for (let from = 0; from < count; from += perColumn) {
    const to = Math.min(count, from + perColumn);
    let longest = 0;
    let total = 0;
    let measured = 0;
    let failed = 0;
    let timeouts = 0;
    let gotos = 0;
    let stops = 0;
    let running = 0;
    let billed = 0;
    let estimate = 0;
    let tokens = 0;
    votes.clear();
    for (let i = from; i < to; i++) {
      const flags = numbers.flag[i]!;
      billed = addUsd(billed, numbers.billed[i]!);
      estimate = addUsd(estimate, numbers.estimate[i]!);
      tokens += numbers.tokens[i]!;
      let ms: number;
      if (flags & FLAG.ENDED) ms = numbers.durationMs[i]!;
      else if (open && i === open.n - 1) {
        ms = Math.max(0, open.ms);
        running = 1;
      } else continue;
      longest = Math.max(longest, ms);
      total += ms;
      measured++;
      if (flags & FLAG.FAILED) failed++;
      if (flags & FLAG.TIMEOUT) timeouts++;
      if (flags & FLAG.GOTO) gotos++;
      if (flags & FLAG.STOP) stops++;
      const target = numbers.target[i]!;
      votes.set(target, (votes.get(target) ?? 0) + 1);
    }
    let target = 0;
    let best = -1;
    for (const [candidate, n] of votes) if (n > best) [target, best] = [candidate, n];
    maxMs = Math.max(maxMs, longest);
    columns.push([from + 1, to, Math.round(longest), Math.round(measured ? total / measured : 0), target, failed, timeouts, gotos, stops, running, billed, estimate, tokens]);
  }
  return { count, perColumn, targets, maxMs: Math.round(maxMs), columns };
}
