import { LoopxError } from "../core/errors.js";
import { EVENT_VERSION, type RecordEvent } from "../core/events.js";

/**
 * Reading a run record (pure): its JSON lines into events, a line of a newer format recognised and
 * never misread. The text comes from src/records/store.ts; what the events mean is run-state.ts.
 */

/** The one wording for a record this loopx cannot read: written by a newer loopx. */
export function newerRecordError(id: string, version: number): LoopxError {
  return new LoopxError(`run ${id} was recorded by a newer loopx (record format v${version}; this loopx reads v${EVENT_VERSION})`);
}

/**
 * The one wording for a record without its run.start (at `path`); `empty`: nothing at all could be
 * written to it — a full disk, while its run may well be going (`loopx runs` lists it then).
 */
export function noRunStartError(id: string, path: string, empty: boolean): LoopxError {
  const why = empty ? ": nothing could be written to it (a full disk?); while the run goes, loopx runs lists it from its control channel" : "";
  return new LoopxError(`run ${id} has no run.start in ${path}${why}`);
}

/** A record's events, as far as they can be read. */
export interface ParsedRecord {
  /** The run's events and its scripts' notes, in the order they were written. */
  events: RecordEvent[];
  /** Set when a line was written by a newer loopx (a `v` this one does not know). */
  newerVersion?: number;
}

/**
 * Parses a record's JSON lines. A line that is not complete JSON (the event in flight when the
 * process died) is skipped; a line of a newer format makes the whole record "newer", never misread.
 */
export function parseRecord(text: string, sink?: (event: RecordEvent) => void): ParsedRecord {
  const events: RecordEvent[] = [];
  const take = sink ?? ((event: RecordEvent) => void events.push(event));
  let newerVersion: number | undefined;
  for (let from = 0; from < text.length; ) {
    let to = text.indexOf("\n", from);
    if (to < 0) to = text.length;
    const line = text.slice(from, to);
    from = to + 1;
    if (line.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    const event = recordEvent(value);
    if (typeof event === "number") newerVersion = Math.max(newerVersion ?? 0, event);
    else if (event) take(event);
  }
  return newerVersion === undefined ? { events } : { events, newerVersion };
}

/**
 * One parsed line of a record: its event; the version of a newer format (never misread); or
 * undefined for anything else.
 */
export function recordEvent(value: unknown): RecordEvent | number | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const v = (value as { v?: unknown }).v;
  if (typeof v === "number" && v > EVENT_VERSION) return v;
  if (v !== EVENT_VERSION || typeof (value as { type?: unknown }).type !== "string") return undefined;
  return value as RecordEvent;
}
