import { EVENT_VERSION, type RecordEvent, type RunEndEvent, type RunHookEvent } from "../core/events.js";
import { describeEnding } from "../records/wording.js";
import { lastIterationEnd, startEvent } from "../records/run-state.js";
import { hookBaseEnv, onEndTimeout, recordedReceipts, type EndOutcome } from "./outcome.js";
import { hookEvent, runHook } from "./run-hook.js";
import { recordPath } from "../records/paths.js";

/**
 * The end-of-run hook when loopx died (kill -9, an out-of-memory kill, a crash): the run's
 * guardian runs it once it has ended the run's processes and before it appends `run.end`, with
 * the same JSON and variables loopx would have given. Not when loopx had started it already
 * (`hooked`): a hook runs once per ending. The command and its environment are the guardian's own
 * environment (LOOPX_ON_END, set by guardian/part.ts); its output goes to the record only.
 */
/** What the guardian knows of the run besides its record (see guardian/part.ts GuardedRun). */
export interface DeadRun {
  run: string;
  records?: string;
  /** `cwd`: where the hook runs when not in the project root (a --worktree run's: where it was started). */
  onEnd?: { project: string; target: string; startedAt: string; maxIterations: number | null; cwd?: string };
}

export async function hookAfterDeath(run: DeadRun, events: RecordEvent[], end: RunEndEvent, hooked: boolean): Promise<RunHookEvent | undefined> {
  const command = process.env.LOOPX_ON_END;
  if (run.onEnd === undefined || hooked || command === undefined || command === "") return undefined;
  const start = startEvent(events);
  const facts = run.onEnd;
  const maxIterations = start?.maxIterations ?? facts.maxIterations;
  const record = run.records === undefined ? null : recordPath(run.records, run.run);
  const outcome: EndOutcome = {
    run: run.run,
    project: start?.projectRoot ?? facts.project,
    target: start?.target ?? facts.target,
    state: end.reason,
    exitCode: end.exitCode,
    reason: describeEnding(end, maxIterations, lastIterationEnd(events)),
    iterations: end.iterations,
    durationMs: end.durationMs,
    startedAt: start?.time ?? facts.startedAt,
    endedAt: end.time,
    record,
    ...recordedReceipts(record),
  };
  const env = hookBaseEnv(process.env);
  delete env.LOOPX_ON_END_TIMEOUT;
  const result = await runHook({ command, cwd: facts.cwd ?? outcome.project, env, outcome, timeoutMs: onEndTimeout(process.env).ms });
  const { type, ...rest } = hookEvent(result, "guardian");
  return { v: EVENT_VERSION, type, time: new Date().toISOString(), run: run.run, ...rest };
}
