import { closeSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import type { RunControls, RunPart } from "../core/run-part.js";
import { BudgetError, LoopxError } from "../core/errors.js";
import type { RecordEvent } from "../core/events.js";
import type { Receipt } from "../core/receipt-types.js";
import { budgetReached, BUDGET_EXIT_CODE, costNotCounted, notCountedNote, notCountedWarning, type Budget } from "../core/budget.js";
import { RECEIPTS_PATH_VAR, receiptsFileName } from "./send.js";
import { addReceipt, addRunTotals, emptyRunTotals, recordedReceipt, type RunTotals } from "../core/receipts.js";

/**
 * Receipts read as they come, for the parts of a run that need the running totals while it goes
 * (a budget, the progress line) — records on or off. Only a run with such a part has it: it
 * creates the run's receipts file in LOOPX_TMPDIR and gives its path to scripts in
 * LOOPX_RUN_RECEIPTS (receipts/send.ts appends there too), then reads the new bytes once after
 * each script ends and once when the run ends (what a killed script sent in its grace period).
 * With a budget it holds back the next script once a budget is reached and ends the run "budget".
 */
export class LiveReceipts implements RunPart {
  private fd: number | undefined;
  private offset = 0;
  private partial: Buffer = Buffer.alloc(0);
  /** One read buffer for the run (a script's receipts are a few hundred bytes each). */
  private readonly buffer = Buffer.allocUnsafe(16384);
  private run = "";
  private listener: ((receipt: Receipt, n: number | undefined) => void) | undefined;
  private warn: ((message: string) => void) | undefined;
  /** The run was told its budget does not count its receipts' cost (said once). */
  private toldNotCounted = false;
  readonly totals: RunTotals;

  /** `scratch`: the run's LOOPX_TMPDIR once it exists; `initial`: a resumed run's totals so far. */
  constructor(
    private readonly scratch: () => string | undefined,
    private readonly budget: Budget | undefined,
    initial?: RunTotals,
  ) {
    this.totals = emptyRunTotals();
    if (initial) addRunTotals(this.totals, initial);
  }

  begin(controls: RunControls): Record<string, string> | undefined {
    this.run = controls.id;
    this.warn = (message) => controls.warn(message);
    const dir = this.scratch();
    if (dir === undefined) return undefined;
    const path = join(dir, receiptsFileName(controls.id));
    try {
      this.fd = openSync(path, "wx+", 0o600);
    } catch (error) {
      if (this.budget) throw new LoopxError(`cannot create the run's receipts file ${path} (for its budget): ${(error as Error).message}`);
      return undefined;
    }
    return { [RECEIPTS_PATH_VAR]: path };
  }

  /** For the summary line: the run's estimates its --max-cost did not count, in words; "" when none. */
  get notCounted(): string {
    return notCountedNote(this.budget, this.totals);
  }

  /** Hears each receipt as it is read, with its iteration (another part's view of them: telemetry). */
  listen(listener: (receipt: Receipt, n: number | undefined) => void): void {
    this.listener = listener;
  }

  onEvent(event: { type: string }): void {
    if (event.type === "iteration.end") this.read();
  }

  get beforeScript(): RunPart["beforeScript"] {
    const budget = this.budget;
    if (!budget) return undefined;
    return (_next, controls) => {
      const reached = budgetReached(budget, this.totals);
      if (reached === undefined) return;
      void controls.cancel({ reason: "budget", exitCode: BUDGET_EXIT_CODE, message: reached, error: new BudgetError(reached, BUDGET_EXIT_CODE) });
    };
  }

  end(): void {
    this.read();
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  /** Adds the receipts written since the last read (whole lines; a line being written waits). */
  private read(): void {
    if (this.fd === undefined) return;
    const chunks = [this.partial];
    for (;;) {
      const bytes = readSync(this.fd, this.buffer, 0, this.buffer.length, this.offset);
      if (bytes <= 0) break;
      this.offset += bytes;
      chunks.push(Buffer.from(this.buffer.subarray(0, bytes)));
      if (bytes < this.buffer.length) break; // the end of what is written now
    }
    if (chunks.length === 1) return;
    const data = Buffer.concat(chunks);
    const end = data.lastIndexOf(0x0a);
    this.partial = data.subarray(end + 1);
    if (end < 0) return;
    for (const line of data.toString("utf8", 0, end).split("\n")) {
      let event: RecordEvent;
      try {
        event = JSON.parse(line) as RecordEvent;
      } catch {
        continue; // not a receipt loopx wrote: any process of the user's can write here
      }
      const receipt = event.run === this.run ? recordedReceipt(event) : undefined;
      if (!receipt) continue;
      addReceipt(this.totals, receipt);
      this.listener?.(receipt, (event as { n?: number }).n);
      if (this.budget && !this.toldNotCounted && costNotCounted(this.budget, receipt)) {
        this.toldNotCounted = true;
        this.warn?.(notCountedWarning(this.budget, this.totals));
      }
    }
  }
}
