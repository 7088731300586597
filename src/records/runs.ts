import { setTimeout as sleep } from "node:timers/promises";
import { realpathSync, statSync } from "node:fs";
import { LoopxError, UsageError } from "../core/errors.js";
import { jsonLine } from "../core/untrusted-text.js";
import type { IterationEndEvent, RecordEvent, RunStartEvent } from "../core/events.js";
import { GOING_STATES, RUN_STATES } from "../core/run-states.js";
import { formatRunList } from "./tables.js";
import { formatTailEvent, unrecordedLine } from "./wording.js";
import { lastSitting, projectOf, startEvent, summarizeRun, type RunSummary } from "./run-state.js";
import { RecordFollower } from "./follow.js";
import { showRecord, type ShowOptions } from "./show.js";
import { leftoverLines } from "./leftovers.js";
import { newerRecordError, parseRecord } from "./parse.js";
import { addRecordTotals, formatPeriodTotals, periodTotals } from "./period.js";
import { listRecordIds, readRecordEnds, readRecordText, recordTouchedAt, recordsDir, runProcessAlive } from "./store.js";
import { recordPath } from "./paths.js";
import { resolveRunId, uniquePrefixLengths } from "./run-id.js";
import type { Env } from "../core/env.js";

/** What `loopx runs`, `runs show` and `runs tail` do, over the records of `env`'s state directory. */

type Write = (text: string) => void;

/** Default `--limit` of `loopx runs`. */
const DEFAULT_LIST_LIMIT = 20;

export interface ListOptions {
  json: boolean;
  /** Every project's runs, not only `cwd`'s. */
  all: boolean;
  /** At most this many runs (default DEFAULT_LIST_LIMIT). */
  limit?: number;
  state?: string;
  cwd: string;
  /** Bold the shortest unique prefix of each id (a terminal). */
  highlight: boolean;
  /** `--since`: runs started at or after this time (ms since 1970) only, and their receipt totals. */
  since?: number;
}

/** True if a run recorded `projectRoot` for the project in `cwd` (either path may be a link). */
function sameProject(projectRoot: string, cwd: string): boolean {
  if (projectRoot === cwd) return true;
  try {
    return realpathSync(projectRoot) === realpathSync(cwd);
  } catch {
    return false;
  }
}

/**
 * A record's events as `loopx runs` needs them: its ends (first and last lines) are enough, but a run
 * that has not ended and whose process is gone may have been resumed — which process runs it now is
 * in its last run.resume, which the ends of a long record may not hold. Undefined: pruned meanwhile.
 */
function listedRecord(dir: string, id: string): ReturnType<typeof parseRecord> | undefined {
  try {
    const text = readRecordEnds(dir, id);
    const record = parseRecord(text);
    const sitting = lastSitting(record.events);
    if (record.events.at(-1)?.type !== "run.end" && sitting && !runProcessAlive(sitting) && text.length < statSync(recordPath(dir, id)).size) {
      return parseRecord(readRecordText(dir, id));
    }
    return record;
  } catch {
    return undefined;
  }
}

/**
 * What the going runs say of themselves (control/live.ts): their state and iteration, which their
 * record may lag behind on a full disk, and the rows of those no record shows.
 */
export interface LiveRuns {
  unrecorded: RunSummary[];
  going: Map<string, Pick<RunSummary, "state" | "iterations">>;
}

/** What `loopx runs` found: the runs to show, those of a newer loopx, their JSON lines, how many matched, the --since period's runs. */
interface Listing {
  summaries: RunSummary[];
  newerRecords: Array<{ id: string; v: number }>;
  lines: string[];
  matching: number;
  period: RunSummary[];
}

/** A record's row for `loopx runs` (or the version of a newer loopx that wrote it); undefined: not this listing's. */
function recordRow(dir: string, id: string, options: ListOptions, now: number): RunSummary | { newer: number } | undefined {
  const record = listedRecord(dir, id);
  if (!record) return undefined;
  if (record.newerVersion !== undefined) return options.state === undefined ? { newer: record.newerVersion } : undefined;
  const start = startEvent(record.events);
  if (!start || (!options.all && !sameProject(projectOf(start), options.cwd))) return undefined;
  return summarizeRun(id, record.events, runProcessAlive, now, () => recordTouchedAt(recordPath(dir, id)));
}

/**
 * Reads every record once, newest first, keeping the runs that match and counting those past
 * --limit. `unrecorded`: going runs no record shows (control/live.ts), listed among them.
 */
function gatherRuns(dir: string, ids: string[], options: ListOptions, unrecorded: Map<string, RunSummary>, going: LiveRuns["going"]): Listing {
  const now = Date.now();
  const limit = options.limit ?? DEFAULT_LIST_LIMIT;
  const found: Listing = { summaries: [], newerRecords: [], lines: [], matching: 0, period: [] };
  for (const id of ids) {
    const live = unrecorded.get(id);
    const row = live ? (options.all || sameProject(live.project, options.cwd) ? live : undefined) : recordRow(dir, id, options, now);
    if (!row) continue;
    // A going run's own word on where it is: its record may lag behind (a full disk).
    const said = going.get(id);
    if (said && "state" in row && (GOING_STATES as readonly string[]).includes(row.state)) Object.assign(row, said);
    if ("newer" in row) {
      if (++found.matching > limit) continue;
      found.newerRecords.push({ id, v: row.newer });
      found.lines.push(jsonLine({ id, state: "unknown", v: row.newer }));
      continue;
    }
    const summary = row;
    if (options.state !== undefined && summary.state !== options.state) continue;
    if (options.since !== undefined && Date.parse(summary.start) < options.since) continue;
    found.matching++;
    // A run's totals from its whole record only where they are shown: a listed run, or one of the
    // period (--since counts every run of it, listed or past --limit).
    if (!live && (found.matching <= limit || options.since !== undefined)) addRecordTotals(summary, () => readRecordText(dir, id));
    if (options.since !== undefined) found.period.push(summary);
    if (found.matching > limit) continue;
    found.summaries.push(summary);
    found.lines.push(jsonLine(summary));
  }
  return found;
}

/**
 * `loopx runs`: this project's runs (or every project's), newest first, filtered and limited.
 * The last argument: what the going runs say of themselves (control/live.ts asks them).
 */
export function listRuns(env: Env, options: ListOptions, write: Write, { unrecorded, going }: LiveRuns = { unrecorded: [], going: new Map() }): void {
  if (options.state !== undefined && !(RUN_STATES as readonly string[]).includes(options.state)) {
    throw new UsageError(`unknown state ${JSON.stringify(options.state)} for --state (states: ${RUN_STATES.join(", ")})`);
  }
  const dir = recordsDir(env);
  const limit = options.limit ?? DEFAULT_LIST_LIMIT;
  const live = new Map(unrecorded.map((summary) => [summary.id, summary]));
  const allIds = [...new Set([...listRecordIds(dir), ...live.keys()])].sort().reverse();
  const { summaries, newerRecords, lines, matching, period } = gatherRuns(dir, allIds, options, live, going);
  if (options.json) {
    if (options.since !== undefined) lines.push(jsonLine(periodTotals(period, options.since)));
    if (lines.length) write(`${lines.join("\n")}\n`);
    return;
  }
  const scope = `${options.state !== undefined ? `${options.state} ` : ""}runs${options.all ? "" : ` of ${options.cwd}`}`;
  if (summaries.length === 0 && newerRecords.length === 0) {
    write(`no ${scope} recorded in ${dir}${options.all ? "" : " (--all: every project's)"}\n`);
    return;
  }
  const prefixes = uniquePrefixLengths(allIds);
  let text = summaries.length ? formatRunList(summaries, { project: options.all, idPrefix: options.highlight ? prefixes : undefined }) : "";
  for (const { id, v } of newerRecords) {
    text += `${id}  ${newerRecordError(id, v).message.slice(`run ${id} was `.length)}\n`;
  }
  if (matching > limit) text += `… ${matching - limit} more (--limit ${matching} shows all ${matching})\n`;
  text += leftoverLines(dir, summaries) + unrecordedLine(summaries);
  if (options.since !== undefined) text += formatPeriodTotals(periodTotals(period, options.since));
  write(text);
}

/** `prefix` as a run id: a unique prefix of one, or (absent, `latest`) this project's newest run. */
function runIdFor(dir: string, prefix: string | undefined, cwd: string): string {
  return prefix === undefined || prefix === "latest" ? latestRunOf(dir, cwd) : resolveRunId(prefix, listRecordIds(dir), dir);
}

/**
 * `loopx runs show [<id>]`: one row per iteration; `--last N`: the last N only; `--json`: the
 * record's events (with `--last`, those of the last N iterations, with the run's start and end).
 */
export function showRun(env: Env, prefix: string | undefined, cwd: string, options: ShowOptions, write: Write): void {
  const dir = recordsDir(env);
  const id = runIdFor(dir, prefix, cwd);
  showRecord(dir, id, options, write);
}

/** The newest run whose project is `cwd`. */
function latestRunOf(dir: string, cwd: string): string {
  for (const id of listRecordIds(dir)) {
    try {
      const start = startEvent(parseRecord(readRecordEnds(dir, id)).events);
      if (start && sameProject(projectOf(start), cwd)) return id;
    } catch {
    }
  }
  throw new LoopxError(`no runs of ${cwd} in ${dir}`);
}


/**
 * `loopx runs tail [<id>]`: prints the run's events so far, then follows the record as it grows
 * (polled every 100 ms) until `run.end` is written or the run's process is gone.
 */
export async function tailRun(env: Env, prefix: string | undefined, cwd: string, json: boolean, write: Write): Promise<number> {
  const dir = recordsDir(env);
  const id = runIdFor(dir, prefix, cwd);
  const path = recordPath(dir, id);
  const follower = new RecordFollower(path);
  let start: RunStartEvent | undefined;
  let sitting: Pick<RunStartEvent, "pid" | "time"> | undefined;
  let last: IterationEndEvent | undefined;
  let ended = false;
  let exitCode = 0;
  const drain = () => {
    let out = "";
    const take = (event: RecordEvent) => {
      if (event.type === "run.start") start = event;
      sitting = lastSitting([event]) ?? sitting;
      const line = json ? jsonLine(event) : formatTailEvent(event, start, last);
      if (line) out += `${line}\n`;
      if (event.type === "iteration.end") last = event;
      if (event.type === "run.end") {
        ended = true;
        // tail exits as the run did (an API-only ending, aborted or returned: 1)
        exitCode = event.exitCode ?? 1;
      }
    };
    let newer: number | undefined;
    follower.drain(take, (version) => {
      newer = Math.max(newer ?? 0, version);
    });
    // A record of a newer format is never misread: nothing of what was read is shown.
    if (newer !== undefined) throw newerRecordError(id, newer);
    if (out) write(out);
  };
  drain();
  let checked = Date.now();
  while (!ended) {
    await sleep(100);
    let size = follower.offset;
    try {
      size = statSync(path).size;
    } catch {
      throw new LoopxError(`the record of run ${id} was removed: ${path}`);
    }
    // A record shorter than what was read was compacted (its size cap): the follower reads on from its end.
    if (size !== follower.offset) drain();
    if (ended || !start || Date.now() - checked < 500) continue;
    checked = Date.now();
    if (!runProcessAlive(sitting ?? start)) {
      drain();
      if (!ended) {
        if (!json) write(`crashed: process ${(sitting ?? start).pid} is gone without run.end\n`);
        return 1;
      }
    }
  }
  return exitCode;
}
