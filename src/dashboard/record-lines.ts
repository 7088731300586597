import { closeSync, openSync, readSync } from "node:fs";
import type { IterationEndEvent, NoteEvent, RecordEvent } from "../core/events.js";
import { readLines } from "../records/follow.js";
import { parseRecord } from "../records/parse.js";
import { RunIndex } from "./run-index.js";
import type { Tracked } from "./run-tracking.js";

/**
 * The reads of a whole record that a run's page asks for (records-watch.ts): its index, read once
 * in bulk, and the lines of a table page, read back by offset.
 */

const ITERATION_START = '{"v":1,"type":"iteration.start",';
/** How far before a resume its interrupted iteration's start line is looked for. */
const RESUME_LOOKBACK = 64 * 1024;

/** The whole-record index of a run, from what of its record was read so far (`tracked.follower`). */
export function readRunIndex(tracked: Tracked): RunIndex {
  const index = new RunIndex();
  readLines(tracked.path, 0, tracked.follower.complete, (event, offset, length) => index.add(event, offset, length), undefined, false, ITERATION_START);
  if (tracked.lastStart) index.add(tracked.lastStart, 0, 0); // the one start line the index needs
  for (const resume of index.resumes) if (startedBefore(tracked.path, resume.offset, resume.n)) index.retried.add(resume.n);
  return index;
}

/**
 * The `iteration.end` events of iterations `ns` of the record at `path` and the notes their
 * scripts added, read back by the offsets `index` keeps.
 */
export function readIterationLines(path: string, index: RunIndex, ns: number[]): { ends: Map<number, IterationEndEvent>; notes: Map<number, NoteEvent[]> } {
  const ends = new Map<number, IterationEndEvent>();
  const notes = new Map<number, NoteEvent[]>();
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return { ends, notes };
  }
  const read = (line: { offset: number; length: number }): RecordEvent | undefined => {
    const buffer = Buffer.alloc(line.length);
    readSync(fd, buffer, 0, line.length, line.offset);
    return parseRecord(buffer.toString("utf8")).events[0];
  };
  try {
    for (const n of ns) {
      const line = index.endLine(n);
      const event = line && read(line);
      if (event?.type === "iteration.end") ends.set(n, event);
      for (const place of index.notes(n)) {
        const note = read(place);
        if (note?.type === "note") notes.set(n, [...(notes.get(n) ?? []), note]);
      }
    }
  } finally {
    closeSync(fd);
  }
  return { ends, notes };
}

/**
 * True if iteration `n` started in the lines just before `offset` (a resume's line): the resume
 * then runs it again. The bulk read skips start lines; the few before each resume are read here.
 */
function startedBefore(path: string, offset: number, n: number): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    const from = Math.max(0, offset - RESUME_LOOKBACK);
    const buffer = Buffer.alloc(offset - from);
    readSync(fd, buffer, 0, buffer.length, from);
    return buffer.toString("utf8").split("\n").some((line) => line.startsWith(ITERATION_START) && line.includes(`"n":${n},`));
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
