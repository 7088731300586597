import type { RecordEvent } from "../core/events.js";
import { readLines } from "./follow.js";
import { parseRecord } from "./parse.js";
import { recordPath } from "./paths.js";
import { readRecordText } from "./store.js";

/**
 * A whole record read as `parseRecord(readRecordText(…))` would read it, but in chunks of a few
 * hundred kilobytes: its text is never held at once (a 100,000-iteration record is 38 MB), and
 * lines `keep` turns down are never parsed. `runs show` reads its table this way.
 */

export interface StreamedRecord {
  /** Bytes in the record: 0 for an empty one. */
  bytes: number;
  /** Set when a line was written by a newer loopx (parse.ts). */
  newerVersion?: number;
}

/**
 * Each event of record `id` to `take`, in record order. `keep`, when given, is asked of a line's
 * text before it is parsed: false skips it (it must be false only for lines that cannot hold an
 * event the caller wants). A record that cannot be opened throws as readRecordText does.
 */
export function streamRecord(dir: string, id: string, take: (event: RecordEvent) => void, keep?: (line: string) => boolean): StreamedRecord {
  const skip = keep && ((line: string) => !keep(line));
  let newerVersion: number | undefined;
  const newer = (version: number) => void (newerVersion = Math.max(newerVersion ?? 0, version));
  const read = readLines(recordPath(dir, id), 0, Infinity, (event) => take(event), undefined, false, skip, newer);
  if (!read) {
    // Gone or unreadable: the error readRecordText gives (or, just made readable, its text).
    const text = readRecordText(dir, id);
    const record = parseRecord(text, take);
    return { bytes: text.length, ...(record.newerVersion === undefined ? {} : { newerVersion: record.newerVersion }) };
  }
  // A last line without its newline (a record cut mid-write, or written by hand) is read too.
  if (read.rest.length > 0) {
    const record = parseRecord(read.rest.toString("utf8"), take);
    if (record.newerVersion !== undefined) newer(record.newerVersion);
  }
  return { bytes: read.end, ...(newerVersion === undefined ? {} : { newerVersion }) };
}

/** How every line of this loopx's own format starts (records/writer.ts: JSON.stringify of an event). */
const OWN_LINE = '{"v":1,"type":"';

/**
 * True unless `line` is certainly an event of this format that is neither a receipt nor a gap (what
 * a run's receipt totals are made of): one of ours, with no escape anywhere (so no string hides a
 * quote or spells a type in escapes), no `"v"` after its first (a later key would win) and no
 * `"receipt"` or `"gap"` in it. Such a line adds nothing to the totals and is not newer: unparsed.
 */
function mayHoldTotals(line: string): boolean {
  return !line.startsWith(OWN_LINE) || line.includes("\\") || line.includes('"receipt"') || line.includes('"gap"') || line.includes('"v"', OWN_LINE.length);
}

/**
 * What `runs show --json --last N`'s totals line is made of: the record's receipts and gaps (with
 * any line that might be one), its other lines never parsed. A newer record is said as
 * streamRecord says it.
 */
export function totalsEvents(dir: string, id: string): { events: RecordEvent[]; newerVersion?: number } {
  const events: RecordEvent[] = [];
  const record = streamRecord(dir, id, (event) => void events.push(event), mayHoldTotals);
  return record.newerVersion === undefined ? { events } : { events, newerVersion: record.newerVersion };
}
