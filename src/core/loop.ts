import type { DirectoryReader, DiscoveredScript, DiscoveredWorkflow, Discovery } from "./discovery.js";
import { loadRunEnv, type EnvFileReader } from "./envfile.js";
import { LoopxError, ScriptFailedError } from "./errors.js";
import { discoverForRun, lookup, resolveResume, resolveStart } from "./loop-targets.js";
import { deferredResult, readOutput, releaseResult, type Output } from "./output.js";
import { outputNearMiss } from "./output-check.js";
import type { RunEnd } from "./run-part.js";
import type { RunSession } from "./run-session.js";
import type { ScriptInput, StdoutText } from "./stdout-text.js";
import { formatTarget, gotoTargetOf, parseTarget, type Target } from "./target.js";
import { workflowVersionWarning, type VersionRequirement } from "./version-requirement.js";

/**
 * What to run, its options already checked by the engine (engine/options.ts). The target is
 * checked here, with discovery.
 */
export interface LoopRequest {
  target: unknown;
  /** undefined = no limit. */
  maxIterations?: number;
  /** Absolute path of the `-e` / `envFile` file, if any. */
  envFile?: string;
  /**
   * RunOptions.env (API only, loopx's own addition): variables for every script, over the env-file
   * layers and under the run's parts' and loopx's own variables.
   */
  env?: Record<string, string>;
  /** The project root: where `.loopx/` lives and what LOOPX_PROJECT_ROOT is. */
  projectRoot: string;
  /** Environment inherited by scripts (the caller's environment when the run was asked for). */
  baseEnv: Record<string, string | undefined>;
  loopxBin: string;
  /**
   * The run goes on where it ended (a resume): `target` ("workflow:script") runs first, with
   * `stdin`; `target` above stays the run's starting target (where a script without goto leads
   * back to). The iteration numbers go on from the session's count.
   */
  resume?: { target: string; stdin: string | undefined };
  /**
   * Look for near-miss structured outputs (core/output-check.ts; loopx's own addition): false when
   * LOOPX_WARN_OUTPUT=0. Each script is looked at until it was warned about once.
   */
  checkOutput?: boolean;
}

/** What a successful script wrote to stdout (decoded when needed: core/stdout-text.ts), and its size in bytes. */
interface ScriptStdout {
  stdout: StdoutText;
  stdoutBytes: number;
}

/**
 * The loop's only way out to files, processes and the terminal: the engine gives it the real one
 * (engine/host.ts), tests an in-memory one. Every decision stays in the loop.
 */
export interface LoopHost {
  /** Runs one script and returns its stdout, or throws a LoopxError (non-zero exit, ...). */
  runScript(step: {
    script: DiscoveredScript;
    workflow: DiscoveredWorkflow;
    label: string;
    env: Record<string, string | undefined>;
    stdin: ScriptInput | undefined;
    /** For a script whose stdout stays open after it exited: one line saying who holds it. */
    onStdoutHeld?: (message: string) => void;
  }): Promise<ScriptStdout>;
  /** Writes a warning line to stderr. */
  warn(message: string): void;
  /** Lists directories for discovery (spec §5). */
  readonly directories: DirectoryReader;
  /** Reads the global and `-e` env files (spec §8). */
  readonly envFiles: EnvFileReader;
  /** A workflow's declared loopx version (its package.json), for the check of spec §3.2. */
  versionRequirement(workflowDir: string): Promise<VersionRequirement>;
  /** The running loopx version. */
  readonly version: string;
}


/** The workflow-level version check (spec §3.2): warns when `workflow` wants another loopx version, once per run, on its first entry (`entered`: the workflows checked). */
async function checkVersion(host: LoopHost, workflow: DiscoveredWorkflow, entered: Set<string>): Promise<void> {
  entered.add(workflow.name);
  const warning = await workflowVersionWarning(workflow.name, await host.versionRequirement(workflow.dir), host.version);
  if (warning !== undefined) host.warn(warning);
}

function failure(error: unknown, target: string | undefined): RunEnd {
  return {
    reason: "failed",
    // A failure of loopx's own with a code of its own (a --sandbox that cannot be proven: 4) keeps it.
    exitCode: error instanceof LoopxError ? error.exitCode : 1,
    ...(target !== undefined ? { target } : {}),
    message: error instanceof Error ? error.message : String(error),
    error,
  };
}

/**
 * Each workflow's environment, built once: inherited env < global < local (spec §8.3) <
 * RunOptions.env < the run's parts' variables (LOOPX_TMPDIR), all in `base`, < loopx's own
 * variables; LOOPX_ITERATION is set per script execution.
 */
function workflowEnvs(request: LoopRequest, base: Record<string, string | undefined>, runId: string): (workflow: string) => Record<string, string | undefined> {
  const envByWorkflow = new Map<string, Record<string, string | undefined>>();
  return (workflow) => {
    let env = envByWorkflow.get(workflow);
    if (!env) {
      env = { ...base };
      env.LOOPX_BIN = request.loopxBin;
      env.LOOPX_PROJECT_ROOT = request.projectRoot;
      env.LOOPX_WORKFLOW = workflow;
      env.LOOPX_RUN_ID = runId;
      envByWorkflow.set(workflow, env);
    }
    return env;
  };
}

/** Runs one script; a failure ends its iteration in the record (with its CRLF hint) and is thrown on. */
async function runScript(host: LoopHost, session: RunSession, spec: Parameters<LoopHost["runScript"]>[0]): Promise<ScriptStdout> {
  try {
    return await host.runScript(spec);
  } catch (error) {
    const exit = error instanceof ScriptFailedError ? error.script : { exitCode: null, signal: null, stdoutBytes: 0 };
    session.iterationEnd({ ...exit, error: error instanceof Error ? error.message : String(error) });
    if (error instanceof ScriptFailedError && error.hint !== undefined) session.iterationWarning("crlf", error.hint);
    throw error;
  }
}

/** The warning for a script that holds its stdout open, once per script (undefined once given). */
function heldWarning(session: RunSession, warned: Set<string>, label: string): ((message: string) => void) | undefined {
  if (warned.has(label)) return undefined;
  return (message) => {
    warned.add(label);
    session.iterationWarning("stdout-held", message);
  };
}

/** A near-miss output (what looks meant as structured output but is not) is warned about once per script. */
function warnNearMiss(session: RunSession, warned: Set<string>, label: string, stdout: StdoutText, object: Parameters<typeof outputNearMiss>[1]): void {
  if (warned.has(label)) return;
  const nearMiss = outputNearMiss(stdout, object);
  if (nearMiss === undefined) return;
  warned.add(label);
  session.iterationWarning("output", `${label}: ${nearMiss}`);
}

/**
 * A successful script's output (spec §2.3), its iteration ended in the record, and a near miss
 * warned about when the run looks for them (`warned`: the scripts warned about already).
 */
function readIteration(session: RunSession, ran: ScriptStdout, label: string, warned: Set<string> | undefined): Output {
  const { output, object } = readOutput(ran.stdout);
  session.iterationEnd({ exitCode: 0, signal: null, stdoutBytes: ran.stdoutBytes, output });
  if (warned) warnNearMiss(session, warned, label, ran.stdout, object);
  return output;
}

/**
 * Where the loop goes after a script that did not end the run: its goto's target with its result
 * (checked against discovery), or back to the starting target with nothing on stdin.
 */
function nextScript(host: LoopHost, discovery: Discovery, output: Output, label: string, workflow: string, start: Target): { current: Target; stdin: ScriptInput | undefined } {
  if (output.goto === undefined) return { current: start, stdin: undefined };
  const parsed = parseTarget(output.goto);
  if (!parsed.ok) throw new LoopxError(`invalid goto from ${label}: ${parsed.error}`);
  const next = gotoTargetOf(parsed.target, workflow);
  lookup(host.directories, discovery, next, `invalid goto from ${label}: `);
  // A huge result still held as bytes goes to the next script's stdin as they are: never a second copy of it.
  return { current: next, stdin: deferredResult(output) ?? output.result };
}

/**
 * The loop state machine of spec §2.2 and §7.1, written once for the CLI and the API. Yields every
 * iteration's Output (the last one included) and throws a LoopxError for anything that makes the
 * CLI exit 1. Once validation has passed, the run belongs to `session`: it is told of every
 * iteration and, in `finally`, of how the run ended — every way it can end.
 */
export async function* runLoop(request: LoopRequest, host: LoopHost, session: RunSession): AsyncGenerator<Output, void, undefined> {
  const maxIterations = request.maxIterations;
  const optionVars = request.env ?? {};
  const discovery = discoverForRun(host.directories, request.projectRoot, request.target);
  const userVars = loadRunEnv(host.envFiles, request.envFile, host.warn);
  const start = resolveStart(host.directories, discovery, request.target);
  const resumeAt = request.resume ? resolveResume(host.directories, discovery, request.resume.target) : undefined;
  if (maxIterations === 0) return;

  // The starting workflow's version check is part of validation: it warns before anything of the
  // run exists (scratch directory, record).
  let current = resumeAt ?? start;
  const entered = new Set<string>();
  await checkVersion(host, discovery.workflows.get(current.workflow)!, entered);

  let end: RunEnd | undefined;
  let label = formatTarget(current);
  try {
    const userEnv = { ...request.baseEnv, ...Object.fromEntries(userVars), ...optionVars };
    const runVars = await session.begin({ projectRoot: request.projectRoot, target: label, maxIterations, env: userEnv });

    const envFor = workflowEnvs(request, { ...userEnv, ...runVars }, session.id);

    let stdin: ScriptInput | undefined = request.resume?.stdin;
    // Each script is warned about once per run: a near-miss output, a stdout held open.
    const warnedOutput = request.checkOutput ? new Set<string>() : undefined;
    const warnedHeld = new Set<string>();
    for (;;) {
      const { workflow, script } = lookup(host.directories, discovery, current, "");
      if (!entered.has(workflow.name)) await checkVersion(host, workflow, entered);
      label = formatTarget(current);
      if (session.gated) {
        const held = session.beforeScript({ target: label, stdin });
        if (held) await held;
        // A part cancelled the run before this script: it never starts (the cancellation ends the run).
        if (session.cancellation) return;
      }
      const n = session.iterationStart(label);
      const env = session.scriptEnv({ ...envFor(workflow.name), LOOPX_ITERATION: String(n) }, n);
      const ran = await runScript(host, session, { script, workflow, label, env, stdin, onStdoutHeld: heldWarning(session, warnedHeld, label) });
      if (typeof stdin === "object") stdin.release(); // written to the script's stdin file
      const output = readIteration(session, ran, label, warnedOutput);
      // Decided before yielding: a consumer that stops reading after the last output ends the run
      // as "stopped" / "limit", not as "returned".
      if (output.stop === true) end = { reason: "stopped", exitCode: 0, target: label };
      else if (maxIterations !== undefined && n >= maxIterations) end = { reason: "limit", exitCode: 0 };
      yield output;
      ran.stdout.release(); // the API took its result (decoded) at the yield
      if (output.goto === undefined) releaseResult(output);
      if (end) return;
      ({ current, stdin } = nextScript(host, discovery, output, label, workflow.name, start));
    }
  } catch (error) {
    end = failure(error, label);
    throw error;
  } finally {
    // No `end` here means the consumer stopped iterating early (`break`, `return()`).
    await session.end(end ?? { reason: "returned", exitCode: null });
  }
}
