import { EVENT_VERSION, type NoteEvent } from "../core/events.js";
// Not node:fs / node:path imports: a script's `import "loopx"` loads this module (lazy-fs.ts).
import { lazyFs as fs } from "../os/lazy-fs.js";
import { recordFileName } from "./paths.js";

/**
 * Notes in a run's record (loopx's own addition): a script adds a line of its own to the record
 * of the run it belongs to — "waiting for a usage limit until 19:55", "plan complete" — which
 * `loopx runs show` / `runs tail` show in place. The run gives its scripts the record's path in
 * LOOPX_RUN_RECORD (only when it writes a record); the script appends one `note` event with one
 * write(2) in append mode, as loopx appends its own events, so nothing goes through loopx while
 * the run goes on, and a run whose scripts write no notes pays nothing.
 */

/** The variable a recorded run gives its scripts: the absolute path of its record. */
export const RECORD_PATH_VAR = "LOOPX_RUN_RECORD";

/** Characters of a note's text kept (one line); bytes of its `data` as JSON. */
const NOTE_TEXT_CHARS = 1000;
const NOTE_DATA_BYTES = 4096;

/** The note event for `text` (whitespace runs become one space) and optional JSON `data`. */
function noteEvent(text: string, data: Record<string, unknown> | undefined, env: Record<string, string | undefined>, now = new Date()): NoteEvent {
  if (typeof text !== "string") throw new TypeError(`note() needs a text, got ${typeof text}`);
  const line = [...text.replace(/\s+/g, " ").trim()];
  const event: NoteEvent = {
    v: EVENT_VERSION,
    type: "note",
    time: now.toISOString(),
    run: env.LOOPX_RUN_ID ?? "",
    text: line.length > NOTE_TEXT_CHARS ? `${line.slice(0, NOTE_TEXT_CHARS - 1).join("")}…` : line.join(""),
  };
  const n = Number(env.LOOPX_ITERATION);
  if (Number.isInteger(n) && n > 0) event.n = n;
  if (env.LOOPX_WORKFLOW) event.workflow = env.LOOPX_WORKFLOW;
  if (data !== undefined) {
    if (data === null || typeof data !== "object" || Array.isArray(data)) throw new TypeError("note() data must be a plain object");
    const json = JSON.stringify(data);
    if (Buffer.byteLength(json) > NOTE_DATA_BYTES) throw new TypeError(`note() data is over ${NOTE_DATA_BYTES} bytes as JSON`);
    event.data = JSON.parse(json) as Record<string, unknown>;
  }
  return event;
}

/**
 * Adds a note to the record of the run this script belongs to. Returns false, writing nothing,
 * when there is no record to add to (not run by loopx, records off, an API run without
 * `record: true`, or the record is gone); never creates a file.
 */
export function note(text: string, data?: Record<string, unknown>, env: Record<string, string | undefined> = process.env): boolean {
  const event = noteEvent(text, data, env);
  const path = ownRecordPath(env);
  return path !== undefined && appendLine(path, `${JSON.stringify(event)}\n`);
}

/**
 * The record of the run this script belongs to, or undefined. The record must be this run's own:
 * a script of a nested run without a record inherits the outer run's path, but never its LOOPX_RUN_ID.
 */
export function ownRecordPath(env: Record<string, string | undefined>): string | undefined {
  const path = env[RECORD_PATH_VAR];
  const run = env.LOOPX_RUN_ID;
  if (!path || !run || path.slice(path.lastIndexOf("/") + 1) !== recordFileName(run)) return undefined;
  return path;
}

/** Appends `line` to the existing file at `path` with one write(2) in append mode; false when it cannot (never creates a file). */
export function appendLine(path: string, line: string): boolean {
  let fd: number;
  try {
    fd = fs().openSync(path, fs().constants.O_WRONLY | fs().constants.O_APPEND);
  } catch {
    return false;
  }
  try {
    fs().writeSync(fd, line);
    return true;
  } catch {
    return false;
  } finally {
    fs().closeSync(fd);
  }
}
