import type { RunControls, RunEnd, RunPart } from "../core/run-part.js";
import type { IterationEndEvent } from "../core/events.js";
import { describeEnding } from "../records/wording.js";
import { parseRecord } from "../records/parse.js";
import { startEvent } from "../records/run-state.js";
import { readRecordEnds } from "../records/store.js";
import { loopxBin } from "../runtime/platform/index.js";
import { noteScriptStderr, stderrKind, writeStderr } from "../os/stderr.js";
import { hookBaseEnv, onEndTimeout, recordedReceipts, type EndOutcome } from "./outcome.js";
import { hookEvent, hookProblem, runHook } from "./run-hook.js";
import { recordPath } from "../records/paths.js";

/**
 * The end-of-run hook (`--on-end <command>`, LOOPX_ON_END, RunOptions.onEnd; loopx's own
 * addition): one command run once when the run ends, however it ends. As a part it ends after
 * every other part of the run that processes (the scratch directory is gone, strays are ended) and
 * before `run.end`, so its outcome goes into the record; its failure is one warning and never
 * changes the run's ending. When loopx dies, the run's guardian runs it instead (guardian.ts): it
 * is told "hooked" before the hook starts here, so that a hook is never run twice.
 */

/** What the guardian needs to run the hook itself: the command, its directory and its environment. */
interface HookSpec {
  command: string;
  env: Record<string, string>;
  timeoutMs: number;
  /** Where it runs when not in the project root: where the user started a --worktree run. */
  cwd?: string;
}

export interface OnEndPart extends RunPart {
  /** The hook as configured for this run, once it has begun; undefined when there is none. */
  readonly spec: HookSpec | undefined;
  /** Told just before the hook starts (the guardian then leaves it alone). */
  starting?: () => void;
}

export interface OnEndOptions {
  /** `--on-end` / RunOptions.onEnd. */
  command?: string;
  /** The CLI's runs: LOOPX_ON_END of the run's environment (the env files included) when no command is given. */
  fromEnv?: boolean;
  recordsDir?: string;
  /**
   * A --worktree run's: the directory the user started it in (the project in the main tree), where
   * the hook runs, so that a relative path in it (`sh on-end/ntfy.sh`) names the user's file and not
   * one the worktree lacks (its untracked files are not there).
   */
  startedIn?: string;
}

export function onEndPart(options: OnEndOptions): OnEndPart {
  let spec: HookSpec | undefined;
  let controls: RunControls | undefined;
  let project = "";
  let target = "";
  let startedAt = "";
  let maxIterations: number | null = null;
  let last: IterationEndEvent | undefined;
  const part: OnEndPart = {
    get spec() {
      return spec;
    },
    onEvent(event) {
      if (event.type === "run.start" || event.type === "run.resume") {
        project = event.projectRoot;
        target = event.target;
        startedAt = event.type === "run.start" ? event.time : firstStart(options.recordsDir, event.run) ?? event.time;
        maxIterations = event.maxIterations;
      } else if (event.type === "iteration.end") last = event;
    },
    begin(given) {
      const command = options.command ?? (options.fromEnv ? given.runEnv.LOOPX_ON_END : undefined);
      if (command === undefined || command === "") return;
      controls = given;
      const timeout = onEndTimeout(given.runEnv);
      if (timeout.problem) given.warn(timeout.problem);
      spec = {
        command,
        timeoutMs: timeout.ms,
        env: hookBaseEnv(given.runEnv, { LOOPX_BIN: loopxBin(), LOOPX_PROJECT_ROOT: project }),
        ...(options.startedIn !== undefined ? { cwd: options.startedIn } : {}),
      };
    },
    async end(end) {
      if (!spec || !controls) return;
      const outcome = endOutcome(controls, end, { records: options.recordsDir, project, target, startedAt, maxIterations, last });
      part.starting?.();
      const result = await runHook({ ...spec, cwd: spec.cwd ?? project, outcome, ...terminalEcho() });
      controls.emit(hookEvent(result, "loopx"));
      const problem = hookProblem(result, spec.timeoutMs);
      if (problem) controls.warn(problem);
    },
  };
  return part;
}

/** What the part has seen of the run by its end: where it ran, from when, and its last iteration. */
interface RunSeen {
  records: string | undefined;
  project: string;
  target: string;
  startedAt: string;
  maxIterations: number | null;
  last: IterationEndEvent | undefined;
}

/** The outcome the hook is given (stdin, LOOPX_END_*) of the run that is ending. */
function endOutcome(controls: RunControls, end: RunEnd, seen: RunSeen): EndOutcome {
  const { iterations, durationMs } = controls.progress();
  const record = seen.records === undefined ? null : recordPath(seen.records, controls.id);
  return {
    run: controls.id,
    project: seen.project,
    target: seen.target,
    state: end.reason,
    exitCode: end.exitCode,
    reason: describeEnding({ reason: end.reason, target: end.target, signal: end.signal, iterations, message: end.message }, seen.maxIterations, seen.last),
    iterations,
    durationMs,
    startedAt: seen.startedAt,
    endedAt: new Date().toISOString(),
    record,
    ...recordedReceipts(record),
  };
}

/** On a terminal, the hook's output is echoed to loopx's stderr as it comes; elsewhere only kept. */
function terminalEcho(): { echo?: (chunk: Buffer) => void } {
  if (stderrKind() !== "terminal") return {};
  return {
    echo: (chunk: Buffer) => {
      writeStderr(chunk);
      noteScriptStderr();
    },
  };
}

/** A resumed run's first start, from its record. */
function firstStart(recordsDir: string | undefined, run: string): string | undefined {
  if (recordsDir === undefined) return undefined;
  try {
    return startEvent(parseRecord(readRecordEnds(recordsDir, run)).events)?.time;
  } catch {
    return undefined;
  }
}
