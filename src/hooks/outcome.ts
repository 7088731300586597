import { readFileSync } from "node:fs";
import { parseDuration } from "../core/duration.js";
import type { RunEndReason } from "../core/events.js";
import { recordTotals, type RunTotals } from "../core/receipts.js";
import { parseRecord } from "../records/parse.js";

/**
 * What an end-of-run hook (`--on-end`, loopx's own addition) is told of the run: one JSON object
 * on its stdin and the main fields as LOOPX_END_* variables. The same for loopx and for the run's
 * guardian (which runs the hook when loopx died), so the hook never tells who ran it apart.
 */

/** The outcome of a run, as the hook gets it (the JSON's fields, in this order). */
export interface EndOutcome {
  run: string;
  /** The project root (where `.loopx/` is). */
  project: string;
  /** The run's starting target, `workflow:script`. */
  target: string;
  /** How it ended: the run state `loopx runs` shows (stopped, limit, failed, interrupted, ...). */
  state: RunEndReason;
  /** loopx's exit code for this ending; null for the API-only endings (aborted, returned). */
  exitCode: number | null;
  /** The ending in words, as the summary line says it ("stopped by ralph:check"). */
  reason: string;
  iterations: number;
  durationMs: number;
  /** ISO 8601 times: the run's start (its first sitting's, for a resumed run) and its end. */
  startedAt: string;
  endedAt: string;
  /** The run record's path; null when the run is not recorded. */
  record: string | null;
  /**
   * The run's receipt totals (`loopx receipt`; every sitting of a resumed run), when it reported
   * any and is recorded: `{ costUsd: { billed, estimate }, tokens, receipts, models }`.
   */
  receipts?: RunTotals;
}

/** The receipt totals of the record at `path`, when it holds any receipt. */
export function recordedReceipts(path: string | null): { receipts?: RunTotals } {
  if (path === null) return {};
  try {
    const totals = recordTotals(parseRecord(readFileSync(path, "utf8")).events).run;
    return totals.receipts > 0 ? { receipts: totals } : {};
  } catch {
    return {};
  }
}

/** The hook's time limit unless LOOPX_ON_END_TIMEOUT says otherwise. */
const ON_END_TIMEOUT_MS = 30_000;

/**
 * The variables loopx sets per script execution (or per workflow): the hook runs once for the
 * whole run, so it does not get them. LOOPX_RUN_ID is not passed either (LOOPX_END_RUN_ID is): a
 * process carrying it is one of the run's, which the guardian ends; LOOPX_TMPDIR is gone by then.
 */
const NOT_FOR_THE_HOOK = ["LOOPX_ITERATION", "LOOPX_WORKFLOW", "LOOPX_RUN_ID", "LOOPX_TMPDIR", "LOOPX_RUN_RECORD"];

/** The LOOPX_END_* variables of an outcome. */
export function endVariables(outcome: EndOutcome): Record<string, string> {
  return {
    LOOPX_END_RUN_ID: outcome.run,
    LOOPX_END_PROJECT: outcome.project,
    LOOPX_END_TARGET: outcome.target,
    LOOPX_END_STATE: outcome.state,
    LOOPX_END_EXIT_CODE: outcome.exitCode === null ? "" : String(outcome.exitCode),
    LOOPX_END_REASON: outcome.reason,
    LOOPX_END_ITERATIONS: String(outcome.iterations),
    LOOPX_END_DURATION_MS: String(outcome.durationMs),
    LOOPX_END_STARTED_AT: outcome.startedAt,
    LOOPX_END_ENDED_AT: outcome.endedAt,
    LOOPX_END_RECORD: outcome.record ?? "",
  };
}

/** The run's environment as the hook gets it (before LOOPX_END_*): without the per-script variables. */
export function hookBaseEnv(runEnv: Readonly<Record<string, string | undefined>>, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries({ ...runEnv, ...extra })) if (value !== undefined && !NOT_FOR_THE_HOOK.includes(key)) env[key] = value;
  return env;
}

/** The hook's time limit in ms: LOOPX_ON_END_TIMEOUT (a duration: 30s, 2m, 90), else 30 s; a bad value is `problem`. */
export function onEndTimeout(env: Readonly<Record<string, string | undefined>>): { ms: number; problem?: string } {
  const text = env.LOOPX_ON_END_TIMEOUT;
  if (text === undefined || text === "") return { ms: ON_END_TIMEOUT_MS };
  const parsed = parseDuration(text);
  return parsed.ok ? { ms: parsed.ms } : { ms: ON_END_TIMEOUT_MS, problem: `LOOPX_ON_END_TIMEOUT ${parsed.error}; the hook gets 30s` };
}
