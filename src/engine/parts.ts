import { join, relative } from "node:path";
import type { RunPart } from "../core/run-part.js";
import { strays } from "../parts/strays.js";
import { recordsDir } from "../records/store.js";
import { progressPart, progressShown } from "../parts/progress.js";
import { LiveReceipts } from "../receipts/part.js";
import { warningsPart } from "../parts/warnings.js";
import { logPart, recordPart } from "../records/writer.js";
import { recordMaxBytes } from "../records/compact.js";
import { TmpdirPart } from "../parts/tmpdir.js";
import { guardianPart } from "../guardian/part.js";
import { runInputPart } from "../records/input.js";
import { lifelinePart } from "../records/lifeline.js";
import { controlPart } from "../control/part.js";
import { onEndPart } from "../hooks/part.js";
import { knownRunIds } from "../control/paths.js";
import type { RunPlan } from "./plan.js";
import type { RunWorktree } from "../worktree/part.js";
import { sharedTreePart } from "../worktree/shared-tree.js";
import { budgetOf } from "../core/budget.js";
import { TelemetryPart } from "../telemetry/part.js";
import { VERSION } from "../version.js";
import { StallSensor } from "../stall/part.js";
import { timeLimits } from "../parts/time-limits.js";

/**
 * The parts for one run, in the order they begin (they end in reverse order). A feature nobody
 * asked for adds no part, and so costs nothing. Records come first so that what they keep is
 * written before anyone else sees an event; the caller's own observer comes last.
 */
export function runParts(plan: RunPlan, worktree?: RunWorktree): RunPart[] {
  const env = plan.baseEnv;
  const { log, onEvent } = plan.options;
  const parts: RunPart[] = [];
  const records = plan.switches.recorded ? recordsDir(env) : undefined;
  if (records !== undefined) parts.push(recordPart(records, recordMaxBytes(env)));
  if (log !== undefined) parts.push(logPart(log));
  // The last piped input, kept with the record for a resume; before the control channel, so that
  // a script held by a pause already has its input kept.
  if (records !== undefined) parts.push(runInputPart(records));
  // Always on: every run that starts a script has its own LOOPX_TMPDIR. After the records (a run
  // that cannot create it is still recorded); a part that must be done with the run's processes
  // before the directory goes belongs after it (parts end in reverse order).
  // The end-of-run hook: before the parts that end processes and the scratch directory, so that
  // it ends after them (parts end in reverse order), once nothing of the run is left but its record.
  const onEnd =
    plan.options.onEnd !== undefined || plan.onEndFromEnv
      ? onEndPart({
          ...(plan.options.onEnd !== undefined ? { command: plan.options.onEnd } : { fromEnv: true }),
          ...(records !== undefined ? { recordsDir: records } : {}),
          ...(worktree ? { startedIn: join(worktree.info.repo, relative(worktree.info.path, worktree.projectRoot)) } : {}),
        })
      : undefined;
  if (onEnd) parts.push(onEnd);
  const tmpdir = new TmpdirPart();
  parts.push(tmpdir);
  // Every run: one process started once, that closes the run if loopx dies without doing so.
  // After the scratch directory (it needs its identity), the hook (its command) and the records
  // (it is told "done" once run.end is written).
  const guardian = guardianPart({ tmpdir, ...(records !== undefined ? { recordsDir: records } : {}), ...(log !== undefined ? { log } : {}), ...(onEnd ? { onEnd } : {}) });
  if (onEnd) onEnd.starting = () => guardian.hooked();
  parts.push(guardian);
  // Every recorded run: what the next loopx finds if loopx and its guardian die together. After
  // the guardian (it names its pid) and the scratch directory.
  if (records !== undefined) parts.push(lifelinePart(records, { guardian: guardian.pid, scratch: () => tmpdir.scratch?.path }));
  // Every run: it scans once, when the run ends, and never per iteration. After the scratch
  // directory, so that the run's strays are gone before it is removed.
  parts.push(strays());
  // --timeout and --max-time (parts/time-limits.ts): a part each, as given.
  const { timeout, maxTime } = plan.options;
  if (timeout !== undefined) parts.push(timeLimits({ timeout }));
  if (maxTime !== undefined) parts.push(timeLimits({ maxTime }));
  // --stall-after: its progress file is in the scratch directory.
  if (plan.options.stallAfter !== undefined) parts.push(new StallSensor(plan.options.stallAfter, () => tmpdir.scratch?.path));
  if (plan.switches.controlled) parts.push(controlPart(env, records));
  parts.push(...receiptParts(plan, tmpdir));
  // Every run: loopx's own warnings about a script (near-miss output, CRLF), as lines on stderr.
  parts.push(warningsPart());
  if (onEvent) parts.push({ onEvent });
  // A run in the project's own tree is warned of another live run of its workflow there.
  if (!worktree && records !== undefined) parts.push(sharedTreePart(records));
  // First to begin, last to end: the worktree is judged once every other part is done with the run.
  if (worktree) parts.unshift(worktree.part);
  return parts;
}

/**
 * Receipts read as they come: only for a budget or a progress line that shows the running total
 * (a run with neither has no receipts file and reads nothing). After the scratch directory (the
 * file is in it, read a last time before it goes). Then telemetry and the progress line.
 */
function receiptParts(plan: RunPlan, tmpdir: TmpdirPart): RunPart[] {
  const env = plan.baseEnv;
  const parts: RunPart[] = [];
  const budget = budgetOf(plan.options);
  const showsProgress = plan.progress && progressShown(env);
  // Only with telemetry on: the part loads the SDK when the run begins (nothing of it otherwise).
  const telemetry = plan.switches.telemetry ? new TelemetryPart(env, VERSION) : undefined;
  const live = budget || showsProgress || telemetry ? new LiveReceipts(() => tmpdir.scratch?.path, budget, plan.resume?.totals) : undefined;
  if (live) parts.push(live);
  if (telemetry) {
    live?.listen((receipt, n) => telemetry.receipt(receipt, n));
    parts.push(telemetry);
  }
  if (plan.progress) {
    const progress = progressPart(env, { summary: plan.options.summary, knownIds: () => knownRunIds(env), ...(live ? { receipts: live } : {}) });
    if (progress) parts.push(progress);
  }
  return parts;
}
