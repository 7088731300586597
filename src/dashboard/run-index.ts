import type { RecordEvent, RunEndEvent } from "../core/events.js";
import { addUsd, recordedReceipt, tokenSum, receiptTotals } from "../core/receipts.js";
import { FLAG, IterationNumbers } from "./iteration-numbers.js";
import { timelineOf, type Timeline } from "./timeline.js";

/**
 * What the dashboard keeps of one run's iterations (pure, no I/O): a few numbers per iteration in
 * typed arrays, and where its `iteration.end` line sits in the record — never the lines themselves.
 * A 100,000-iteration run costs about 3 MB however long its results are; a table page reads its
 * rows back from the record by offset (src/dashboard/records-watch.ts). The numbers are kept by
 * IterationNumbers (iteration-numbers.ts), the chart is computed in timeline.ts; this class reads
 * the record's events into them and answers for one iteration.
 */

export { FLAG };

/** Where a resume went on: above iteration `n` (its first) in `runs show`. */
export interface ResumeMark {
  n: number;
  time: string;
  target: string;
  pid: number;
  /** Where its line is in the record (bytes). */
  offset: number;
}

export class RunIndex {
  readonly targets: string[] = [];
  private readonly targetIds = new Map<string, number>();
  private readonly numbers = new IterationNumbers();
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

  /** Highest n seen. */
  get count(): number {
    return this.numbers.count;
  }

  /** Feeds one event of the record; `offset`/`length`: where its line is (bytes). */
  add(event: RecordEvent, offset: number, length: number): void {
    const numbers = this.numbers;
    switch (event.type) {
      case "iteration.start": {
        const i = numbers.slot(event.n);
        if (i < 0) return;
        numbers.target[i] = this.targetId(event.target);
        if (event.n <= this.highestStarted) this.retried.add(event.n);
        this.highestStarted = Math.max(this.highestStarted, event.n);
        return;
      }
      case "run.resume":
        this.resumes.push({ n: event.iterations + 1, time: event.time, target: event.target, pid: event.pid, offset });
        return;
      case "iteration.end": {
        const i = numbers.slot(event.n);
        if (i < 0) return;
        numbers.durationMs[i] = event.durationMs;
        numbers.target[i] = this.targetId(event.target);
        let flags = FLAG.ENDED;
        if (event.exitCode !== 0 || event.signal || event.error !== undefined) flags |= FLAG.FAILED;
        if (event.output?.goto !== undefined) flags |= FLAG.GOTO;
        if (event.output?.stop === true) flags |= FLAG.STOP;
        numbers.flag[i] = flags;
        numbers.endAt[i] = offset;
        numbers.endLength[i] = length;
        return;
      }
      case "run.end":
        this.markEnding(event);
        return;
      case "receipt": {
        const receipt = recordedReceipt(event);
        // Its iteration is the one running (at most one past the last ended): a stray n grows nothing.
        if (!receipt || typeof event.n !== "number" || event.n > numbers.count + 1) return;
        const i = numbers.slot(event.n);
        if (i < 0) return;
        const one = receiptTotals(receipt);
        numbers.billed[i] = addUsd(numbers.billed[i]!, one.costUsd.billed);
        numbers.estimate[i] = addUsd(numbers.estimate[i]!, one.costUsd.estimate);
        numbers.tokens[i]! += tokenSum(one);
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
    const numbers = this.numbers;
    if (i < 0 || i >= numbers.count || !numbers.ended(i)) return undefined;
    return { offset: numbers.endAt[i]!, length: numbers.endLength[i]! };
  }

  /** Iteration `n` as the table shows it before its line is read. */
  iteration(n: number): { n: number; target: string; durationMs: number | null; flags: number; retry: boolean; billed: number; estimate: number; tokens: number } | undefined {
    const i = n - 1;
    const numbers = this.numbers;
    if (i < 0 || i >= numbers.count) return undefined;
    const used = { billed: numbers.billed[i]!, estimate: numbers.estimate[i]!, tokens: numbers.tokens[i]! };
    const durationMs = numbers.ended(i) ? numbers.durationMs[i]! : null;
    return { n, target: this.targets[numbers.target[i]!] ?? "", durationMs, flags: numbers.flag[i]!, retry: this.retried.has(n), ...used };
  }

  /** The timeline chart's data (timeline.ts): `open` is the iteration still running, if any. */
  timeline(maxColumns: number, open?: { n: number; ms: number }): Timeline {
    return timelineOf(this.numbers, this.targets, maxColumns, open);
  }

  /** The iteration a time limit ended is marked as timed out. */
  private markEnding(end: RunEndEvent): void {
    if (end.reason !== "timed-out" || end.iterations < 1 || end.iterations > this.numbers.count) return;
    this.numbers.flag[end.iterations - 1]! |= FLAG.TIMEOUT;
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
}
