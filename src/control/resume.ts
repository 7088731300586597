import { existsSync, lstatSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fsReason, LoopxError } from "../core/errors.js";
import { decideResume, type ResumePoint } from "./resume-point.js";
import { newerRecordError, parseRecord } from "../records/parse.js";
import type { RecordedOptions } from "../core/events.js";
import type { WorktreeInfo } from "../core/worktree-events.js";
import { formatTarget, parseTarget, runTargetOf } from "../core/target.js";
import { readKeptInput } from "../records/input.js";
import { closingPath, listRecordIds, readRecordText, recordsDir, runProcessAlive } from "../records/store.js";
import { resolveRunId } from "../records/run-id.js";
import { recordPath } from "../records/paths.js";
import { otherOwner } from "../os/own-user.js";
import { recordTotals, type RunTotals } from "../core/receipts.js";
import { budgetOf, budgetReached } from "../core/budget.js";

/**
 * A resume, ready for the engine (loopx's own addition): the run's record read and judged
 * (control/resume-point.ts), the input its first script needs read back byte for byte, and the request
 * rebuilt from what the run recorded at its start — the same project, target, env file and options,
 * the -n budget that is left — with the same run id. Every refusal is one LoopxError line.
 */

export interface ResumeOptions {
  /** A new -n: this many more iterations from the resume on. */
  maxIterations?: number;
  /** The API's target argument: it must be the run's starting target. */
  target?: string;
  /** Options given again (the API's): they replace what the run recorded. */
  overrides?: RecordedOptions;
}

/** What the engine needs to go on with a run that ended or died. */
export interface ResumeRequest {
  /** The run's id: LOOPX_RUN_ID stays, the record goes on. */
  runId: string;
  /** The script that runs first, "workflow:script". */
  target: string;
  /** Exactly what it gets on stdin (what it got when the run ended), if anything. */
  stdin?: string;
  /** Iterations done before: the first script is iteration `iterations + 1`. */
  iterations: number;
  /** How long the run was going before, for `run.end`'s duration. */
  elapsedMs: number;
  /** The run's worktree (it ran with --worktree): the run goes on in it. */
  worktree?: WorktreeInfo;
  /** What the run's receipts added up to so far: its budget goes on from there (never reset). */
  totals?: RunTotals;
}

/** The run as it started, with what is left of it: what the engine plans the resumed run from. */
export interface PreparedResume {
  point: ResumePoint;
  /** The run's starting target ("workflow:script") and its project. */
  target: string;
  projectRoot: string;
  /** The -n budget of the whole run (iterations done included); undefined when unlimited. */
  maxIterations: number | undefined;
  /** The options the run recorded at its start, with those given anew over them. */
  recorded: RecordedOptions;
  resume: ResumeRequest;
}

export function prepareResume(env: Record<string, string | undefined>, prefix: string, options: ResumeOptions = {}): PreparedResume {
  try {
    return prepare(env, prefix, options);
  } catch (error) {
    if (error instanceof LoopxError) throw error;
    throw new LoopxError(`cannot read the record of run ${JSON.stringify(prefix)} in ${recordsDir(env)}: ${fsReason(error)}`);
  }
}

function prepare(env: Record<string, string | undefined>, prefix: string, options: ResumeOptions): PreparedResume {
  const dir = recordsDir(env);
  const id = resolveRunId(prefix, listRecordIds(dir), dir);
  const path = recordPath(dir, id);
  const owner = otherOwner(lstatSync(path));
  if (owner !== undefined) throw new LoopxError(`run ${id} belongs to another user (uid ${owner}): loopx resumes only your own runs`);
  const record = parseRecord(readRecordText(dir, id));
  if (record.newerVersion !== undefined) {
    throw newerRecordError(id, record.newerVersion);
  }
  const decision = decideResume(id, record.events, runProcessAlive, options.maxIterations);
  if (!decision.ok) throw new LoopxError(decision.message);
  // A guardian still closing the killed run ends every process carrying its id: a resumed run
  // (same id) started now would be ended with it.
  if (guardianClosing(dir, id)) throw new LoopxError(`run ${id} is still being closed by its guardian (its processes are being ended): resume it in a few seconds`);
  const point = decision.point;
  const projectRoot = point.start.projectRoot;
  checkProjectThere(id, point.start);
  if (options.target !== undefined) {
    const parsed = parseTarget(options.target);
    const given = parsed.ok ? formatTarget(runTargetOf(parsed.target)) : options.target;
    if (given !== point.start.target) throw new LoopxError(`run ${id} runs ${point.start.target}, not ${options.target}`);
  }
  let stdin = point.stdin;
  if (stdin === undefined && point.stdinBytes !== undefined) {
    const kept = readKeptInput(dir, id);
    const header = kept?.header;
    if (!header || header.n !== point.n || header.bytes !== point.stdinBytes) {
      throw new LoopxError(`run ${id} cannot be resumed at ${point.target}: the ${point.stdinBytes} bytes it got on stdin were not kept`);
    }
    if (!header.kept) {
      throw new LoopxError(`run ${id} cannot be resumed at ${point.target}: it got ${header.bytes} bytes on stdin, more than the 16 MiB loopx keeps`);
    }
    if (kept.data.length !== header.bytes) throw new LoopxError(`run ${id} cannot be resumed at ${point.target}: the input it got was kept only in part`);
    stdin = kept.data.toString("utf8");
  }
  const recorded = { ...point.options, ...options.overrides };
  const totals = recordTotals(record.events).run;
  refuseSpentBudget(id, recorded, totals);
  return {
    point,
    target: point.start.target,
    projectRoot,
    maxIterations: point.maxIterations,
    recorded,
    resume: { runId: id, target: point.target, ...(stdin !== undefined ? { stdin } : {}), iterations: point.n - 1, elapsedMs: point.elapsedMs, totals, ...(point.start.worktree ? { worktree: point.start.worktree } : {}) },
  };
}

/** The run's project (in its worktree, for a --worktree run) is still where it was, with its .loopx/. */
function checkProjectThere(id: string, start: ResumePoint["start"]): void {
  const { projectRoot, worktree } = start;
  if (worktree && !existsSync(worktree.path)) {
    throw new LoopxError(`run ${id} cannot be resumed: its worktree ${worktree.path} is gone (removed, or loopx runs clean)`);
  }
  if (!existsSync(join(projectRoot, ".loopx"))) {
    throw new LoopxError(`run ${id} cannot be resumed: its project ${projectRoot} ${existsSync(projectRoot) ? "has no .loopx/ any more" : "is gone (moved or removed)"}`);
  }
}

/** A run that has reached its budget (the recorded one, or the one given now) is not resumed: like -n, it needs more. */
function refuseSpentBudget(id: string, given: RecordedOptions, totals: RunTotals): void {
  const budget = budgetOf(given);
  const reached = budget && budgetReached(budget, totals);
  if (reached !== undefined) {
    throw new LoopxError(`run ${id} has reached its budget (${reached.replace(/^budget reached: /, "")}): nothing to resume (give --max-cost <usd> or --max-tokens <count> for more)`);
  }
}

/** True while a guardian process is closing run `id` (its `.closing` marker names a live pid). */
function guardianClosing(dir: string, id: string): boolean {
  try {
    const pid = Number(readFileSync(closingPath(dir, id), "utf8"));
    return Number.isInteger(pid) && pid > 0 && runProcessAlive({ pid, time: new Date(0).toISOString() });
  } catch {
    return false;
  }
}
