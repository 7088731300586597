import type { LoopEvent } from "../core/events.js";
import type { RunPart } from "../core/run-session.js";
import { strays } from "../parts/strays.js";
import { timeLimits } from "../parts/time-limits.js";
import { recordsDir } from "../records/store.js";
import { progressPart, progressShown } from "../parts/progress.js";
import { LiveReceipts } from "../receipts/part.js";
import type { Budget } from "../core/budget.js";
import type { RunTotals } from "../core/receipts.js";
import { logPart, recordMaxBytes, recordPart } from "../records/writer.js";
import { TmpdirPart } from "../parts/tmpdir.js";
import { guardianPart } from "../guardian/part.js";
import { runInputPart } from "../records/input.js";
import { controlPart } from "../control/part.js";
import { TelemetryPart } from "../telemetry/part.js";
import { telemetryEnabled } from "../telemetry/settings.js";
import { VERSION } from "../version.js";
import { onEndPart } from "../hooks/part.js";
import { knownRunIds } from "../control/paths.js";
import { warningsPart } from "../parts/warnings.js";

/**
 * What the built-in parts need to know of a run: the engine (src/engine) fills it in from the
 * checked options and the features asked for, the same way for the CLI and the API, so a feature
 * is written once for both.
 */
export interface PartFeatures {
  /** The CLI's arguments after `loopx` (CLI runs only). */
  argv?: string[];
  /** Limit for each script execution, in ms (`--timeout`, RunOptions.timeout). */
  timeout?: number;
  /** Limit for the whole run, in ms (`--max-time`, RunOptions.maxTime). */
  maxTime?: number;
  /**
   * Where features read their settings: XDG_STATE_HOME / HOME (records), LOOPX_RECORD,
   * LOOPX_PROGRESS, NO_COLOR, TERM. Defaults to process.env.
   */
  env?: Record<string, string | undefined>;
  /** Write a run record under $XDG_STATE_HOME/loopx/runs/ (LOOPX_RECORD=0 turns it off). */
  record?: boolean;
  /** `--log <file>`: append every event to this (absolute) path as well. */
  log?: string;
  /** Progress lines on stderr when it is a terminal (LOOPX_PROGRESS=0 turns them off, =1 on anywhere). */
  progress?: boolean;
  /** `--summary`: the summary line when the run ends, wherever stderr goes. */
  summary?: boolean;
  /** The API's `RunOptions.onEvent`: every event, synchronously, in order. */
  onEvent?: (event: LoopEvent) => void;
  /** A control channel, so that the run can be stopped and paused from elsewhere (LOOPX_CONTROL=0 turns it off). */
  control?: boolean;
  /** RunOptions.telemetry: export to OpenTelemetry (else LOOPX_OTEL decides; OTEL_SDK_DISABLED=true wins). */
  telemetry?: boolean;
  /** `--on-end` / RunOptions.onEnd: a command run once when the run ends (src/hooks). */
  onEnd?: string;
  /** The CLI's runs: LOOPX_ON_END (environment, env files) is the hook when `onEnd` is not given. */
  onEndFromEnv?: boolean;
  /** `--max-cost` / `--max-tokens` (RunOptions the same): the run stops once its receipts reach it. */
  budget?: Budget;
  /** A resumed run's receipts so far (its record's): the running totals go on from them. */
  totals?: RunTotals;
}

/**
 * The parts for one run, in the order they begin (they end in reverse order). A feature nobody
 * asked for adds no part, and so costs nothing. Records come first so that what they keep is
 * written before anyone else sees an event; the caller's own observer comes last.
 */
export function runParts(features: PartFeatures): RunPart[] {
  const env = features.env ?? process.env;
  const parts: RunPart[] = [];
  const records = features.record && env.LOOPX_RECORD !== "0" ? recordsDir(env) : undefined;
  if (records !== undefined) parts.push(recordPart(records, recordMaxBytes(env)));
  if (features.log !== undefined) parts.push(logPart(features.log));
  // The last piped input, kept with the record for a resume; before the control channel, so that
  // a script held by a pause already has its input kept.
  if (records !== undefined) parts.push(runInputPart(records));
  // Always on: every run that starts a script has its own LOOPX_TMPDIR. After the records (a run
  // that cannot create it is still recorded); a part that must be done with the run's processes
  // before the directory goes belongs after it (parts end in reverse order).
  // The end-of-run hook: before the parts that end processes and the scratch directory, so that
  // it ends after them (parts end in reverse order), once nothing of the run is left but its record.
  const onEnd =
    features.onEnd !== undefined || features.onEndFromEnv
      ? onEndPart({ ...(features.onEnd !== undefined ? { command: features.onEnd } : { fromEnv: true }), ...(records !== undefined ? { recordsDir: records } : {}) })
      : undefined;
  if (onEnd) parts.push(onEnd);
  const tmpdir = new TmpdirPart();
  parts.push(tmpdir);
  // Every run: one process started once, that closes the run if loopx dies without doing so.
  // After the scratch directory (it needs its identity), the hook (its command) and the records
  // (it is told "done" once run.end is written).
  const guardian = guardianPart({ tmpdir, ...(records !== undefined ? { recordsDir: records } : {}), ...(features.log !== undefined ? { log: features.log } : {}), ...(onEnd ? { onEnd } : {}) });
  if (onEnd) onEnd.starting = () => guardian.hooked();
  parts.push(guardian);
  // Every run: it scans once, when the run ends, and never per iteration. After the scratch
  // directory, so that the run's strays are gone before it is removed.
  parts.push(strays());
  if (features.timeout !== undefined || features.maxTime !== undefined) {
    parts.push(timeLimits({ timeout: features.timeout, maxTime: features.maxTime }));
  }
  if (features.control && env.LOOPX_CONTROL !== "0") parts.push(controlPart(env));
  // Only with telemetry on: the part loads the SDK when the run begins (nothing of it otherwise).
  const telemetry = telemetryEnabled(env, features.telemetry) ? new TelemetryPart(env, VERSION) : undefined;
  // Receipts read as they come: only for a budget or a progress line that shows the running total
  // (a run with neither has no receipts file and reads nothing). After the scratch directory (the
  // file is in it, read a last time before it goes).
  const showsProgress = features.progress === true && progressShown(env);
  const live = features.budget || showsProgress || telemetry ? new LiveReceipts(() => tmpdir.scratch?.path, features.budget, features.totals) : undefined;
  if (live) parts.push(live);
  if (telemetry) {
    live?.listen((receipt, n) => telemetry.receipt(receipt, n));
    parts.push(telemetry);
  }
  if (features.progress) {
    const progress = progressPart(env, { summary: features.summary, knownIds: () => knownRunIds(env), ...(live ? { receipts: live } : {}) });
    if (progress) parts.push(progress);
  }
  // Every run: loopx's own warnings about a script (near-miss output, CRLF), as lines on stderr.
  parts.push(warningsPart());
  if (features.onEvent) parts.push({ onEvent: features.onEvent });
  return parts;
}
