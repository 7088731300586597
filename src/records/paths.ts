/**
 * The files of a run in the records directory ($XDG_STATE_HOME/loopx/runs/), named here and nowhere
 * else: its record `<id>.jsonl`, the input its running script got `<id>.input` (records/input.ts),
 * `<id>.closing` while its guardian closes it, `<id>.reserve`, the room kept for the record's end on
 * a full disk (records/reserve.ts), and `<id>.live` while its loopx lives (records/lifeline.ts).
 * No imports: scripts load this (records/note.ts).
 */

const RECORD_SUFFIX = ".jsonl";
const RECORD_FILE = /^([0-9a-z]+)\.jsonl$/;

/** The record of run `id` in `dir`. */
export function recordPath(dir: string, id: string): string {
  return `${dir}/${recordFileName(id)}`;
}

/** The record's file name (what LOOPX_RUN_RECORD ends with). */
export function recordFileName(id: string): string {
  return `${id}${RECORD_SUFFIX}`;
}

/** The run id of a file name in the records directory when it is a record, else undefined. */
export function recordIdOf(name: string): string | undefined {
  return RECORD_FILE.exec(name)?.[1];
}

/** The last piped input kept for a resume (records/input.ts). */
export function inputPath(dir: string, id: string): string {
  return `${dir}/${id}.input`;
}

/**
 * The file a run's guardian keeps beside the record while it closes the run (its pid): loopx is
 * gone by then, and the record must not be pruned before the guardian appends run.end.
 */
export function closingPath(dir: string, id: string): string {
  return `${dir}/${id}.closing`;
}

/**
 * The run's lifeline (records/lifeline.ts) while its loopx lives: who runs it (loopx's pid, its
 * guardian's), its project and LOOPX_TMPDIR. Removed by the run's end or its guardian; left by a
 * run whose loopx and guardian were killed together, for the next loopx to find.
 */
export function livePath(dir: string, id: string): string {
  return `${dir}/${id}${LIVE_SUFFIX}`;
}

const LIVE_SUFFIX = ".live";

/** The run id of a lifeline's file name, else undefined. */
export function liveIdOf(name: string): string | undefined {
  return name.endsWith(LIVE_SUFFIX) ? name.slice(0, -LIVE_SUFFIX.length) : undefined;
}

/** The room a run keeps for its record's end while it runs (records/reserve.ts). */
export function reservePath(dir: string, id: string): string {
  return `${dir}/${id}${RESERVE_SUFFIX}`;
}

const RESERVE_SUFFIX = ".reserve";

/** The run id of a reserve's file name, else undefined. */
export function reserveIdOf(name: string): string | undefined {
  return name.endsWith(RESERVE_SUFFIX) ? name.slice(0, -RESERVE_SUFFIX.length) : undefined;
}

/** Every file of run `id`: what pruning removes. */
export function runFiles(dir: string, id: string): string[] {
  return [recordPath(dir, id), inputPath(dir, id), closingPath(dir, id), reservePath(dir, id), livePath(dir, id)];
}
