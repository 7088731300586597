import { EVENT_VERSION, type ReceiptEvent } from "../core/events.js";
import { appendLine, ownRecordPath } from "../records/note.js";
import { parseReceipt } from "./receipt.js";

/**
 * Receipts from scripts (loopx's own addition): `receipt(r)` from "loopx", `loopx receipt` from
 * bash. Like a note, a receipt is one `receipt` event appended with one write(2) to the run's
 * record (LOOPX_RUN_RECORD) — and, when a part of the run reads receipts as they come (a budget,
 * the progress line), to the run's receipts file (LOOPX_RUN_RECEIPTS), which works with records
 * off. Nothing goes through loopx while the script runs; a run whose scripts send nothing pays
 * nothing, and a run where nobody reads receipts live has no receipts file at all.
 */

/** The variable a run gives its scripts when one of its parts reads receipts as they come. */
export const RECEIPTS_PATH_VAR = "LOOPX_RUN_RECEIPTS";

/** The receipts file's name in the run's LOOPX_TMPDIR: tells the run it belongs to. */
export function receiptsFileName(run: string): string {
  return `.receipts-${run}.jsonl`;
}

/** The receipt event for `value` (checked: throws a TypeError naming the field). */
function receiptEvent(value: unknown, env: Record<string, string | undefined>, now = new Date()): ReceiptEvent {
  const receipt = parseReceipt(value);
  const event: ReceiptEvent = { v: EVENT_VERSION, type: "receipt", time: now.toISOString(), run: env.LOOPX_RUN_ID ?? "" };
  const n = Number(env.LOOPX_ITERATION);
  if (Number.isInteger(n) && n > 0) event.n = n;
  if (env.LOOPX_WORKFLOW) event.workflow = env.LOOPX_WORKFLOW;
  return Object.assign(event, receipt);
}

/**
 * Reports what this script's work used to the run it belongs to. Throws a TypeError naming the
 * field for a malformed receipt (nothing is written); returns false, writing nothing, outside a
 * run (or with neither a record nor a live reader); true once it is kept somewhere.
 */
export function receipt(value: unknown, env: Record<string, string | undefined> = process.env): boolean {
  const event = receiptEvent(value, env);
  const line = `${JSON.stringify(event)}\n`;
  const record = ownRecordPath(env);
  let kept = record !== undefined && appendLine(record, line);
  const live = env[RECEIPTS_PATH_VAR];
  // A nested run's script inherits the outer run's variable, never its LOOPX_RUN_ID.
  if (live && event.run && live.endsWith(`/${receiptsFileName(event.run)}`)) kept = appendLine(live, line) || kept;
  return kept;
}
