import { resolve } from "node:path";
import { LoopxError } from "../core/errors.js";
import type { LoopRequest } from "../core/loop.js";
import { loopxBin } from "../runtime/platform/index.js";
import type { RecordedOptions } from "../core/events.js";
import type { RunPart } from "../core/run-part.js";
import { prepareResume, type ResumeRequest } from "../control/resume.js";
import { telemetryEnabled } from "../telemetry/settings.js";
import { RUN_OPTIONS, validateMaxIterations, validateRunOptions, type RunOptionsChecked, type RunOptionValues } from "./options.js";

/**
 * What a driver asks the engine to run: plain values, nothing checked yet. The CLI (cli/commands/run.ts)
 * and the API (api/run.ts) build it the same way; the engine turns it into a RunPlan, once.
 */
export interface RunRequest {
  /** "workflow" or "workflow:script" (spec §4.1); checked with discovery when the run starts. A resume may leave it out. */
  target?: unknown;
  /** The run's options as given, named as in RUN_OPTIONS (engine/options.ts). */
  options?: RunOptionValues;
  /** Where `.loopx/` is (LOOPX_PROJECT_ROOT); relative option paths resolve against it. */
  projectRoot: unknown;
  /** The environment scripts inherit, and where the run's features read their settings. */
  baseEnv: Record<string, string | undefined>;
  /** Go on with the recorded run of this id (or unique prefix) where it ended; control/resume.ts judges it. */
  resume?: { id: unknown };
  /** The CLI's arguments after `loopx`, for `run.start`. */
  argv?: string[];
  /** Progress lines on stderr when it is a terminal (LOOPX_PROGRESS=0 turns them off). */
  progress?: boolean;
  /** SIGINT/SIGTERM/SIGHUP/SIGQUIT to this process cancel the run (the CLI's; engine/signals.ts). */
  signals?: boolean;
  /** While the run goes, the host's SIGINT/SIGTERM/SIGHUP end its scripts (the API's; engine/host-signals.ts). */
  hostSignals?: boolean;
  /** Keep a long run's heap compact (the CLI's: a library must not retune its host). */
  compactHeap?: boolean;
  /** The CLI's: LOOPX_ON_END (environment, env files) is the end-of-run hook when no `onEnd` is given. */
  onEndFromEnv?: boolean;
  /** More parts for this run, after the built-in ones. */
  parts?: RunPart[];
}

/** A run, checked: what the engine runs and what each part gets its slice of. */
export interface RunPlan {
  target: unknown;
  projectRoot: string;
  baseEnv: Record<string, string | undefined>;
  options: RunOptionsChecked;
  /** The run goes on where it ended, with the same id; `target` is still its starting target. */
  resume?: ResumeRequest;
  argv?: string[];
  progress: boolean;
  signals: boolean;
  hostSignals: boolean;
  compactHeap: boolean;
  onEndFromEnv: boolean;
  /**
   * What the environment decides, decided here once so that the plan alone says how the run goes:
   * recorded (the `record` option, unless LOOPX_RECORD=0), steerable through a control channel
   * (unless LOOPX_CONTROL=0), output looked at for near misses (unless LOOPX_WARN_OUTPUT=0), and
   * exported as OpenTelemetry (the `telemetry` option, else LOOPX_OTEL; never with OTEL_SDK_DISABLED).
   */
  switches: { recorded: boolean; controlled: boolean; checkOutput: boolean; telemetry: boolean };
  parts: RunPart[];
}

/** The recorded options given again for a resume, each checked alone (what they need may be recorded). */
function givenAgain(given: RunOptionValues, projectRoot: string): RecordedOptions {
  const again: Record<string, unknown> = {};
  for (const option of RUN_OPTIONS) {
    const value = "recorded" in option && option.recorded ? option.check(given[option.name], projectRoot, given) : undefined;
    if (value !== undefined) again[option.name] = value;
  }
  return again as RecordedOptions;
}

function checkProjectRoot(value: unknown): string {
  if (typeof value !== "string") throw new LoopxError(`cwd must be a directory path, got ${value === null ? "null" : typeof value}`);
  return resolve(value);
}

/**
 * The request checked once, for the CLI and the API alike, before anything of the run exists: its
 * options (RUN_OPTIONS), the project, and a resume — read from the run's record through control/,
 * its recorded options given again unless given anew, its -n budget what is left. The first
 * problem is thrown as one LoopxError line.
 */
export function planRun(request: RunRequest): RunPlan {
  const given = request.options ?? {};
  let target = request.target;
  let projectRoot = checkProjectRoot(request.projectRoot);
  let values: RunOptionValues = given;
  let resume: ResumeRequest | undefined;
  if (request.resume !== undefined) {
    const id = request.resume.id;
    if (typeof id !== "string") throw new LoopxError(`resume must be a run id, got ${typeof id}`);
    const more = validateMaxIterations(given.maxIterations);
    const prepared = prepareResume(request.baseEnv, id, {
      ...(target !== undefined ? { target: String(target) } : {}),
      ...(more !== undefined ? { maxIterations: more } : {}),
      // Options given again replace what the run recorded (envFile, limits, budgets).
      overrides: givenAgain(given, projectRoot),
    });
    target = prepared.target;
    projectRoot = prepared.projectRoot;
    resume = prepared.resume;
    // A resumed run is recorded: it goes on in its record.
    values = { ...given, ...prepared.recorded, maxIterations: prepared.maxIterations, record: true };
  }
  const options = validateRunOptions(values, projectRoot);
  return {
    target,
    projectRoot,
    baseEnv: request.baseEnv,
    options,
    ...(resume ? { resume } : {}),
    ...(request.argv ? { argv: request.argv } : {}),
    progress: request.progress === true,
    signals: request.signals === true,
    hostSignals: request.hostSignals === true,
    compactHeap: request.compactHeap === true,
    onEndFromEnv: request.onEndFromEnv === true,
    switches: {
      recorded: options.record && request.baseEnv.LOOPX_RECORD !== "0",
      controlled: request.baseEnv.LOOPX_CONTROL !== "0",
      checkOutput: request.baseEnv.LOOPX_WARN_OUTPUT !== "0",
      telemetry: telemetryEnabled(request.baseEnv, options.telemetry),
    },
    parts: request.parts ?? [],
  };
}

/** RunOptions.signal when it is one (planRun reports it when it is not). */
export function abortSignalOf(value: unknown): AbortSignal | undefined {
  try {
    return RUN_OPTIONS.find((option) => option.name === "signal")!.check(value, "", {}) as AbortSignal | undefined;
  } catch {
    return undefined;
  }
}

/** What the pure loop gets of the plan. */
export function loopOptions(plan: RunPlan): LoopRequest {
  const { maxIterations, env, envFile, maxCost, maxTokens } = plan.options;
  return {
    target: plan.target,
    // A budget of 0 leaves room for no script: like -n 0, the run is only validated (nothing recorded, no hook).
    maxIterations: maxCost === 0 || maxTokens === 0 ? 0 : maxIterations,
    env,
    envFile,
    projectRoot: plan.projectRoot,
    baseEnv: plan.baseEnv,
    loopxBin: loopxBin(),
    checkOutput: plan.switches.checkOutput,
    ...(plan.resume ? { resume: { target: plan.resume.target, stdin: plan.resume.stdin } } : {}),
  };
}
