import type { RecordEvent, RunEndEvent } from "../core/events.js";
import { addUsd, recordedReceipt, tokenSum, receiptTotals } from "../core/receipts.js";

/**
 * What the dashboard keeps of one run's iterations (pure, no I/O): a few numbers per iteration in
 * typed arrays, and where its `iteration.end` line sits in the record — never the lines themselves.
 * A 100,000-iteration run costs about 3 MB however long its results are; a table page reads its
 * rows back from the record by offset (src/dashboard/records-watch.ts).
 */

/** Bits of an iteration's `flags`. */
export const FLAG = {
  ENDED: 1,
  /** Exit code other than 0, a signal, or an error. */
  FAILED: 2,
  /** The iteration the run's time limit ended. */
  TIMEOUT: 4,
  GOTO: 8,
  STOP: 16,
} as const;

/** Where a resume went on: above iteration `n` (its first) in `runs show`. */
export interface ResumeMark {
  n: number;
  time: string;
  target: string;
  pid: number;
  /** Where its line is in the record (bytes). */
  offset: number;
}

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

const INITIAL = 64;

export class RunIndex {
  readonly targets: string[] = [];
  private readonly targetIds = new Map<string, number>();
  /** Highest n seen. */
  count = 0;
  private durationMs = new Float64Array(INITIAL);
  private target = new Uint16Array(INITIAL);
  private flag = new Uint8Array(INITIAL);
  private endAt = new Float64Array(INITIAL);
  private endLength = new Uint32Array(INITIAL);
  /** What each iteration's receipts add up to: billed and estimated USD (apart), tokens. */
  private billed = new Float64Array(INITIAL);
  private estimate = new Float64Array(INITIAL);
  private tokens = new Float64Array(INITIAL);
  /** Where the notes of iteration n are: offset, length, offset, length, ... */
  private readonly noteLines = new Map<number, number[]>();
  /** The run's resumes, in record order. */
  readonly resumes: ResumeMark[] = [];
  /**
   * Iterations a resume ran again (their first try did not finish): the table marks them, as
   * `runs show` does. Seen here from a second iteration.start; a record read in bulk skips those
   * lines, and its reader marks them from the lines before each resume (records-watch.ts).
   */
  readonly retried = new Set<number>();
  private highestStarted = 0;

  /** Feeds one event of the record; `offset`/`length`: where its line is (bytes). */
  add(event: RecordEvent, offset: number, length: number): void {
    switch (event.type) {
      case "iteration.start": {
        const i = this.slot(event.n);
        if (i < 0) return;
        this.target[i] = this.targetId(event.target);
        if (event.n <= this.highestStarted) this.retried.add(event.n);
        this.highestStarted = Math.max(this.highestStarted, event.n);
        return;
      }
      case "run.resume":
        this.resumes.push({ n: event.iterations + 1, time: event.time, target: event.target, pid: event.pid, offset });
        return;
      case "iteration.end": {
        const i = this.slot(event.n);
        if (i < 0) return;
        this.durationMs[i] = event.durationMs;
        this.target[i] = this.targetId(event.target);
        let flags = FLAG.ENDED;
        if (event.exitCode !== 0 || event.signal || event.error !== undefined) flags |= FLAG.FAILED;
        if (event.output?.goto !== undefined) flags |= FLAG.GOTO;
        if (event.output?.stop === true) flags |= FLAG.STOP;
        this.flag[i] = flags;
        this.endAt[i] = offset;
        this.endLength[i] = length;
        return;
      }
      case "run.end":
        this.markEnding(event);
        return;
      case "receipt": {
        const receipt = recordedReceipt(event);
        // Its iteration is the one running (at most one past the last ended): a stray n grows nothing.
        if (!receipt || typeof event.n !== "number" || event.n > this.count + 1) return;
        const i = this.slot(event.n);
        if (i < 0) return;
        const one = receiptTotals(receipt);
        this.billed[i] = addUsd(this.billed[i]!, one.costUsd.billed);
        this.estimate[i] = addUsd(this.estimate[i]!, one.costUsd.estimate);
        this.tokens[i]! += tokenSum(one);
        return;
      }
      case "note": {
        if (typeof event.n !== "number") return;
        const lines = this.noteLines.get(event.n);
        if (lines) lines.push(offset, length);
        else this.noteLines.set(event.n, [offset, length]);
        return;
      }
    }
  }

  /** Where the notes scripts added to iteration `n` are. */
  notes(n: number): Array<{ offset: number; length: number }> {
    const lines = this.noteLines.get(n) ?? [];
    const out: Array<{ offset: number; length: number }> = [];
    for (let i = 0; i < lines.length; i += 2) out.push({ offset: lines[i]!, length: lines[i + 1]! });
    return out;
  }

  /** Where iteration `n`'s `iteration.end` line is, if it ended. */
  endLine(n: number): { offset: number; length: number } | undefined {
    const i = n - 1;
    if (i < 0 || i >= this.count || !(this.flag[i]! & FLAG.ENDED)) return undefined;
    return { offset: this.endAt[i]!, length: this.endLength[i]! };
  }

  /** Iteration `n` as the table shows it before its line is read. */
  iteration(n: number): { n: number; target: string; durationMs: number | null; flags: number; retry: boolean; billed: number; estimate: number; tokens: number } | undefined {
    const i = n - 1;
    if (i < 0 || i >= this.count) return undefined;
    const ended = (this.flag[i]! & FLAG.ENDED) !== 0;
    const used = { billed: this.billed[i]!, estimate: this.estimate[i]!, tokens: this.tokens[i]! };
    return { n, target: this.targets[this.target[i]!] ?? "", durationMs: ended ? this.durationMs[i]! : null, flags: this.flag[i]!, retry: this.retried.has(n), ...used };
  }

  /**
   * The timeline chart's data: one column per iteration up to `maxColumns` iterations, beyond that
   * consecutive iterations share a column (its longest and mean duration, its most frequent target,
   * how many failed / timed out / went to another target / said stop). An iteration still running
   * counts with its duration so far (`open`: its n and how long it has been running).
   */
  timeline(maxColumns: number, open?: { n: number; ms: number }): Timeline {
    const count = this.count;
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
        const flags = this.flag[i]!;
        billed = addUsd(billed, this.billed[i]!);
        estimate = addUsd(estimate, this.estimate[i]!);
        tokens += this.tokens[i]!;
        let ms: number;
        if (flags & FLAG.ENDED) ms = this.durationMs[i]!;
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
        const target = this.target[i]!;
        votes.set(target, (votes.get(target) ?? 0) + 1);
      }
      let target = 0;
      let best = -1;
      for (const [candidate, n] of votes) if (n > best) [target, best] = [candidate, n];
      maxMs = Math.max(maxMs, longest);
      columns.push([from + 1, to, Math.round(longest), Math.round(measured ? total / measured : 0), target, failed, timeouts, gotos, stops, running, billed, estimate, tokens]);
    }
    return { count, perColumn, targets: this.targets, maxMs: Math.round(maxMs), columns };
  }

  /** The iteration a time limit ended is marked as timed out. */
  private markEnding(end: RunEndEvent): void {
    if (end.reason !== "timed-out" || end.iterations < 1 || end.iterations > this.count) return;
    this.flag[end.iterations - 1]! |= FLAG.TIMEOUT;
  }

  private targetId(name: string): number {
    let id = this.targetIds.get(name);
    if (id === undefined) {
      id = this.targets.length;
      this.targets.push(name);
      this.targetIds.set(name, id);
    }
    return id;
  }

  /** Index of iteration `n`, growing the arrays as needed; -1 for an n no loop writes. */
  private slot(n: number): number {
    if (!Number.isInteger(n) || n < 1 || n > 2 ** 31) return -1;
    const i = n - 1;
    if (i >= this.flag.length) {
      let size = this.flag.length;
      while (size <= i) size *= 2;
      this.durationMs = grow(this.durationMs, new Float64Array(size));
      this.target = grow(this.target, new Uint16Array(size));
      this.flag = grow(this.flag, new Uint8Array(size));
      this.endAt = grow(this.endAt, new Float64Array(size));
      this.endLength = grow(this.endLength, new Uint32Array(size));
      this.billed = grow(this.billed, new Float64Array(size));
      this.estimate = grow(this.estimate, new Float64Array(size));
      this.tokens = grow(this.tokens, new Float64Array(size));
    }
    this.count = Math.max(this.count, n);
    return i;
  }
}

function grow<T extends Float64Array | Uint16Array | Uint8Array | Uint32Array>(from: T, to: T): T {
  to.set(from as never);
  return to;
}
