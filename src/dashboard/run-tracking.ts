import { readFileSync, statSync } from "node:fs";
import { GOING_STATES } from "../core/run-states.js";
import type { IterationEndEvent, IterationStartEvent, RecordEvent, RunContinueEvent, RunEndEvent, RunHookEvent, RunPauseEvent, RunResumeEvent, RunStartEvent, RunStopEvent } from "../core/events.js";
import { addReceipt, addRunTotals, emptyRunTotals, recordTotals, recordedReceipt, type RunTotals } from "../core/receipts.js";
import { RecordFollower } from "../records/follow.js";
import { parseRecord } from "../records/parse.js";
import { summarizeRun, type RunSummary } from "../records/run-state.js";
import { hookFailure, hookOutputLines } from "../records/hook-report.js";
import { recordPath } from "../records/paths.js";
import { readRecordEnds, recordTouchedAt } from "../records/store.js";
import type { RunIndex } from "./run-index.js";

/**
 * What the dashboard keeps of each record (records-watch.ts reads them): the few events a run's
 * summary needs, its receipt totals, and the run as the page shows it.
 */

/** A run as the dashboard shows it: the `loopx runs` summary plus the iteration running now. */
export interface DashboardRun extends Omit<RunSummary, "state"> {
  /** `unknown` for a record written by a newer loopx, as `loopx runs --json` says. */
  state: RunSummary["state"] | "unknown";
  current?: { n: number; target: string; start: string };
  /** The last resume (`loopx runs resume`): when, and the iteration and target it started again at. */
  resumed?: { time: string; n: number; target: string };
  /** Set for a record written by a newer loopx; nothing else is read from it. */
  newerVersion?: number;
  /** The end-of-run hook's outcome (`--on-end`), once it ran: how it ended in words, and the first lines of its output (untrusted text). */
  hook?: { by: "loopx" | "guardian"; ended: string; durationMs: number; output: string[]; more: boolean };
}

export type Change = { kind: "run"; run: DashboardRun } | { kind: "removed"; id: string };

export interface Tracked {
  id: string;
  path: string;
  /** What of the record was read so far (records/follow.ts). */
  follower: RecordFollower;
  start?: RunStartEvent;
  /** The last `run.resume`: which process runs it now. */
  sitting?: RunResumeEvent;
  /** The last pause, continuation or stop request of the current sitting. */
  steering?: RunPauseEvent | RunContinueEvent | RunStopEvent;
  lastStart?: IterationStartEvent;
  lastEnd?: IterationEndEvent;
  end?: RunEndEvent;
  /** The end-of-run hook's outcome of the current sitting. */
  hook?: RunHookEvent;
  /**
   * Receipt totals kept as the record grows, for a run whose run.end does not hold them (going,
   * or closed by its guardian): started from the whole record once, when such a run is found.
   */
  totals?: RunTotals;
  newerVersion?: number;
  detail?: RunIndex;
  run?: DashboardRun;
  /** What last went out as a change, to send only real changes. */
  sent?: string;
}

/** A run whose loop is going (its duration grows, its control channel answers). */
export function isGoing(state: DashboardRun["state"]): boolean {
  return (GOING_STATES as readonly string[]).includes(state);
}

export function remember(tracked: Tracked, event: RecordEvent): void {
  switch (event.type) {
    case "run.start":
      tracked.start = event;
      break;
    case "iteration.start":
      if (!tracked.lastStart || event.n >= tracked.lastStart.n) tracked.lastStart = event;
      break;
    case "iteration.end":
      if (!tracked.lastEnd || event.n >= tracked.lastEnd.n) tracked.lastEnd = event;
      break;
    case "run.resume":
      // The run goes on (loopx runs resume): the ending before it no longer holds; its totals go on.
      if (!tracked.totals) {
        tracked.totals = emptyRunTotals();
        if (tracked.end?.receipts) addRunTotals(tracked.totals, tracked.end.receipts);
      }
      tracked.sitting = event;
      tracked.end = undefined;
      tracked.hook = undefined;
      tracked.steering = undefined;
      break;
    case "run.pause":
    case "run.continue":
    case "run.stop":
      tracked.steering = event;
      break;
    case "run.hook":
      tracked.hook = event;
      break;
    case "run.end":
      tracked.end = event;
      tracked.steering = undefined;
      break;
    case "receipt": {
      const receipt = tracked.totals && recordedReceipt(event);
      if (receipt) addReceipt(tracked.totals!, receipt);
      break;
    }
  }
}

/**
 * A record newly found, read from its ends (`run.start` and the last lines); undefined if it was
 * pruned while being read.
 */
export function trackRecord(dir: string, id: string): Tracked | undefined {
  const path = recordPath(dir, id);
  let size: number;
  let text: string;
  try {
    size = statSync(path).size;
    text = readRecordEnds(dir, id);
  } catch {
    return undefined;
  }
  const tracked: Tracked = { id, path, follower: new RecordFollower(path, size) };
  const record = parseRecord(text);
  if (record.newerVersion !== undefined) tracked.newerVersion = record.newerVersion;
  for (const event of record.events) remember(tracked, event);
  // Read whole only for a run whose run.end (loopx's own) will not say: going, or closed by its guardian.
  const end = tracked.end;
  if (!end || (!end.receipts && (end.reason === "killed" || end.reason === "crashed"))) tracked.totals = wholeRecordTotals(path, size, text);
  return tracked;
}

/** A record's receipt totals, from the whole of it (its ends already read, when that is all of it). */
function wholeRecordTotals(path: string, size: number, ends: string): RunTotals {
  if (size === 0) return emptyRunTotals();
  try {
    return recordTotals(parseRecord(Buffer.byteLength(ends) >= size ? ends : readFileSync(path, "utf8")).events).run;
  } catch {
    return emptyRunTotals();
  }
}

export function summarize(tracked: Tracked, alive: (sitting: Pick<RunStartEvent, "pid" | "time">) => boolean, now: number): DashboardRun | undefined {
  if (tracked.newerVersion !== undefined) {
    return tracked.run ?? { id: tracked.id, state: "unknown", start: "", durationMs: 0, iterations: 0, target: "", project: "", pid: 0, maxIterations: null, runtime: "", version: "", newerVersion: tracked.newerVersion };
  }
  if (!tracked.start) return undefined;
  const events: RecordEvent[] = [tracked.start];
  if (tracked.sitting) events.push(tracked.sitting);
  if (tracked.lastStart) events.push(tracked.lastStart);
  if (tracked.lastEnd) events.push(tracked.lastEnd);
  if (tracked.steering) events.push(tracked.steering);
  if (tracked.end) events.push(tracked.end);
  const summary = summarizeRun(tracked.id, events, alive, now, () => recordTouchedAt(tracked.path));
  if (!summary) return undefined;
  const run: DashboardRun = summary;
  // A run.end written by loopx holds the totals (summarizeRun took them); otherwise the kept ones.
  if (!run.totals && tracked.totals && tracked.totals.receipts > 0) run.totals = tracked.totals;
  if (tracked.sitting) run.resumed = { time: tracked.sitting.time, n: tracked.sitting.iterations + 1, target: tracked.sitting.target };
  if (tracked.hook) {
    const { lines, more } = hookOutputLines(tracked.hook.output);
    run.hook = { by: tracked.hook.by, ended: hookFailure(tracked.hook) ?? "exit 0", durationMs: tracked.hook.durationMs, output: lines, more };
  }
  const current = tracked.lastStart;
  if (isGoing(summary.state) && current && (!tracked.lastEnd || tracked.lastEnd.n < current.n)) {
    run.current = { n: current.n, target: current.target, start: current.time };
  }
  return run;
}
