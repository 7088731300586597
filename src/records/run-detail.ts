import type { GapEvent, NoteEvent, RecordEvent, RunHookEvent, RunResumeEvent, WarningEvent } from "../core/events.js";
import { addReceipt, addRunTotals, addTotals, emptyRunTotals, emptyTotals, receiptTotals, recordedReceipt, type RunTotals } from "../core/receipts.js";
import { describeNext, exitOf, resultExcerpt, stderrLines } from "./wording.js";
import { DetailRows } from "./detail-rows.js";

/**
 * What `runs show` (and its --markdown) needs of a record, gathered event by event (pure): a
 * 100,000-iteration record is read without keeping its events. Laid out in run-detail-table.ts.
 */

/**
 * What `runs show` needs of a record, gathered event by event (a 100,000-iteration record is read
 * without keeping its events): the rows, the notes and gaps, and the events a summary needs.
 */
export class RunDetail {
  rows = new DetailRows();
  readonly notes: NoteEvent[] = [];
  readonly gaps: GapEvent[] = [];
  /** The run's receipts added up, every sitting and what a capped record dropped included. */
  readonly totals: RunTotals = emptyRunTotals();
  readonly warnings: WarningEvent[] = [];
  /** Where the run was resumed (`runs show` marks it above the first iteration of each sitting). */
  readonly resumes: RunResumeEvent[] = [];
  /** The end-of-run hook's outcomes (one per ending: a resumed run's hook runs again), shown last. */
  readonly hooks: RunHookEvent[] = [];
  /**
   * The run's own events (run.start, run.resume, pause/continue/stop, run.end), in record order:
   * with the last iteration.start/end, enough for summarizeRun.
   */
  private readonly runEvents: RecordEvent[] = [];
  private lastStart: RecordEvent | undefined;
  private lastEnd: RecordEvent | undefined;
  lastTime = "";

  add(event: RecordEvent): void {
    this.lastTime = event.time;
    switch (event.type) {
      case "iteration.start": {
        // A resumed run runs the interrupted iteration again: one row, the latest try, marked as a retry.
        const earlier = this.rows.find(event.n);
        if (earlier >= 0) this.rows.retry(earlier, event.target, event.time);
        else this.rows.add(event.n, event.target, event.time);
        this.lastStart = event;
        break;
      }
      case "iteration.end": {
        this.lastEnd = event;
        const i = this.rows.find(event.n);
        if (i < 0 || this.rows.ended(i)) break;
        const result = event.output ? resultExcerpt(event.output.result) : resultExcerpt(event.error);
        this.rows.end(i, event.durationMs, exitOf(event), describeNext(event.output), result, event.stderr ? stderrLines(event) : undefined);
        break;
      }
      case "note":
        this.notes.push(event);
        break;
      case "gap":
        this.gaps.push(event);
        if (event.receipts) addRunTotals(this.totals, event.receipts);
        break;
      case "receipt": {
        const receipt = recordedReceipt(event);
        if (!receipt) break;
        addReceipt(this.totals, receipt);
        const i = event.n === undefined ? -1 : this.rows.find(event.n);
        if (i >= 0) addTotals(this.rows.totalsOf(i, emptyTotals), receiptTotals(receipt));
        break;
      }
      case "warning":
        this.warnings.push(event);
        break;
      case "run.resume":
        this.resumes.push(event);
        this.runEvents.push(event);
        break;
      case "run.hook":
        this.hooks.push(event);
        break;
      default:
        this.runEvents.push(event);
    }
  }

  /** The same detail from iteration `after` + 1 on (`runs show --last`). */
  from(after: number): RunDetail {
    const detail = new RunDetail();
    detail.rows = this.rows.after(after);
    detail.notes.push(...this.notes.filter((note) => note.n === undefined || note.n > after));
    detail.gaps.push(...this.gaps.filter((gap) => gap.after >= after));
    addRunTotals(detail.totals, this.totals);
    detail.warnings.push(...this.warnings.filter((warning) => warning.n > after));
    detail.resumes.push(...this.resumes.filter((resume) => resume.iterations >= after));
    detail.hooks.push(...this.hooks);
    detail.lastTime = this.lastTime;
    return detail;
  }

  /** The events summarizeRun reads, in record order (a run.end stays last). */
  forSummary(): RecordEvent[] {
    const last = [this.lastStart, this.lastEnd].filter((event): event is RecordEvent => event !== undefined);
    const end = this.runEvents.at(-1)?.type === "run.end" ? this.runEvents.length - 1 : this.runEvents.length;
    return [...this.runEvents.slice(0, end), ...last, ...this.runEvents.slice(end)];
  }
}
