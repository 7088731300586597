import type { RecordEvent } from "../core/events.js";
import { recordTotals } from "../core/receipts.js";

/**
 * Compaction of a record past its size cap (LOOPX_RECORD_MAX_BYTES, records/writer.ts): its head
 * and its tail kept in whole iterations, one `gap` line for what was dropped between them.
 */

/** Default of LOOPX_RECORD_MAX_BYTES: what one record may grow to before it is compacted. */
export const RECORD_MAX_BYTES = 8 * 1024 * 1024;
/** The smallest cap LOOPX_RECORD_MAX_BYTES may set. */
const RECORD_MIN_BYTES = 16 * 1024;

/** LOOPX_RECORD_MAX_BYTES, or the default when unset or not a whole number of at least 16 KiB. */
export function recordMaxBytes(env: Record<string, string | undefined>): number {
  const value = env.LOOPX_RECORD_MAX_BYTES;
  const bytes = value !== undefined && /^[0-9]+$/.test(value) ? Number(value) : Number.NaN;
  return Number.isSafeInteger(bytes) && bytes >= RECORD_MIN_BYTES ? bytes : RECORD_MAX_BYTES;
}

/**
 * A record cut down to about half of `maxBytes`: its first quarter (run.start and the first
 * iterations) and its last quarter (the latest iterations), both in whole iterations, with one
 * `gap` line between them counting the iterations and bytes dropped (an earlier gap included).
 * `base`: the fields of the gap event (v, time, run).
 */
export function compactRecord(text: string, maxBytes: number, base: { v: 1; time: string; run: string }): string {
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  const quarter = maxBytes / 4;
  const isStart = (line: string) => line.includes('"type":"iteration.start"');
  // Head: whole iterations up to a quarter of the cap (the run.start line always).
  let headEnd = 1;
  let bytes = Buffer.byteLength(lines[0] ?? "") + 1;
  for (let i = 1; i < lines.length; i++) {
    bytes += Buffer.byteLength(lines[i]!) + 1;
    // An earlier gap ends the head: it is merged into the new one.
    if (bytes > quarter || lines[i]!.includes('"type":"gap"')) break;
    // An iteration ends where the next one (or an earlier gap) begins.
    if (i + 1 < lines.length && (isStart(lines[i + 1]!) || lines[i + 1]!.includes('"type":"gap"'))) headEnd = i + 1;
  }
  // Tail: whole iterations within the last quarter.
  let tailStart = lines.length;
  bytes = 0;
  for (let i = lines.length - 1; i >= headEnd; i--) {
    bytes += Buffer.byteLength(lines[i]!) + 1;
    if (bytes > quarter) break;
    if (isStart(lines[i]!)) tailStart = i;
  }
  if (tailStart <= headEnd) return `${lines.join("\n")}\n`;
  let iterations = 0;
  let dropped = 0;
  let after = 0;
  for (const line of lines.slice(0, headEnd)) {
    const n = /"type":"iteration\.start".*?"n":(\d+)/.exec(line);
    if (n) after = Number(n[1]);
  }
  // Receipts dropped (an earlier gap's included) are kept as their totals: a run's totals stay whole.
  const receipts = recordTotals(lines.slice(headEnd, tailStart).flatMap((line) => (line.includes('"type":"receipt"') || line.includes('"type":"gap"') ? parsedLine(line) : []))).run;
  for (const line of lines.slice(headEnd, tailStart)) {
    if (!line.includes('"type":"gap"')) dropped += Buffer.byteLength(line) + 1;
    if (isStart(line)) iterations++;
    else if (line.includes('"type":"gap"')) {
      try {
        const gap = JSON.parse(line) as { iterations?: number; bytes?: number };
        iterations += gap.iterations ?? 0;
        dropped += gap.bytes ?? 0;
      } catch {
        // a torn line: nothing to add
      }
    }
  }
  const gap = { ...base, type: "gap", after, iterations, bytes: dropped, ...(receipts.receipts > 0 ? { receipts } : {}) };
  return `${[...lines.slice(0, headEnd), JSON.stringify(gap), ...lines.slice(tailStart)].join("\n")}\n`;
}

function parsedLine(line: string): RecordEvent[] {
  try {
    return [JSON.parse(line) as RecordEvent];
  } catch {
    return []; // a torn line: nothing to add
  }
}
