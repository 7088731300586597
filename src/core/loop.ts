import { join } from "node:path";
import { ancestorWithLoopx, discover, unsupportedFiles, type DiscoveredScript, type DiscoveredWorkflow, type Discovery } from "./discovery.js";
import { loadRunEnv } from "./env.js";
import { LoopxError, ScriptFailedError, fsReason } from "./errors.js";
import { SCRIPT_EXTENSIONS } from "./names.js";
import { parseOutput, type Output } from "./output.js";
import { RunSession, type RunEnd } from "./run-session.js";
import { formatTarget, gotoTargetOf, parseTarget, runTargetOf, type Target } from "./target.js";

/** What to run, as given by the CLI or the API; validated by the engine when iteration begins. */
export interface LoopRequest {
  target: unknown;
  /** undefined = no limit. Anything but a non-negative safe integer is an error. */
  maxIterations?: unknown;
  /** Absolute path of the `-e` / `envFile` file, if any. */
  envFile?: string;
  /**
   * RunOptions.env (API only, loopx's own addition): variables for every script, over the env-file
   * layers and under the run's parts' and loopx's own variables. Validated by `validateRunEnv`.
   */
  env?: unknown;
  /** The project root: where `.loopx/` lives and what LOOPX_PROJECT_ROOT is. */
  projectRoot: string;
  /** Environment inherited by scripts (a snapshot of process.env). */
  baseEnv: Record<string, string | undefined>;
  loopxBin: string;
}

/** What a successful script wrote to stdout, decoded, and its size in bytes. */
export interface ScriptStdout {
  stdout: string;
  stdoutBytes: number;
}

/** The engine's only way out to processes and the terminal; the runtime layer provides it. */
export interface LoopHost {
  /** Runs one script and returns its stdout, or throws a LoopxError (non-zero exit, ...). */
  runScript(step: { script: DiscoveredScript; workflow: DiscoveredWorkflow; label: string; env: Record<string, string | undefined>; stdin: string | undefined }): Promise<ScriptStdout>;
  /** Writes a warning line to stderr. */
  warn(message: string): void;
  /** Called on the first entry into each workflow during a run (workflow-level version check). */
  onFirstEntry?(workflow: DiscoveredWorkflow): void;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
  return typeof value;
}

export function validateMaxIterations(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new LoopxError(`maxIterations must be a non-negative integer, got ${describe(value)}`);
  }
  return value;
}

function shapeOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object" || typeof value === "function") {
    const name = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
    return typeof value === "function" ? "a function" : typeof name === "string" && name !== "" && name !== "Object" ? `a ${name}` : "an object";
  }
  return `${typeof value} ${describe(value)}`;
}

/**
 * RunOptions.env: undefined, or a plain object whose every value is a string; names may hold
 * neither "=" nor NUL (nor be empty), values no NUL — what an environment can carry.
 */
export function validateRunEnv(value: unknown): Record<string, string> {
  if (value === undefined) return {};
  const proto = value !== null && typeof value === "object" ? Object.getPrototypeOf(value) : undefined;
  if (value === null || typeof value !== "object" || Array.isArray(value) || (proto !== Object.prototype && proto !== null)) {
    throw new LoopxError(`env must be an object of variable names to string values, got ${shapeOf(value)}`);
  }
  const env: Record<string, string> = {};
  for (const [key, item] of Object.entries(value)) {
    if (key === "" || key.includes("=") || key.includes("\0")) {
      throw new LoopxError(`env has an invalid variable name ${JSON.stringify(key)}: names are non-empty and hold no "=" or NUL`);
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `env.${key}` : `env[${JSON.stringify(key)}]`;
    if (typeof item !== "string") throw new LoopxError(`${name} must be a string, got ${shapeOf(item)}`);
    if (item.includes("\0")) throw new LoopxError(`${name} must not contain a NUL character`);
    env[key] = item;
  }
  return env;
}

/** Quotes a path for a shell command line when it needs it. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`;
}

/**
 * Discovery with run-mode validation (spec §5, §7.1 step 1): every issue is fatal. `target` (as
 * given) only words the message of a run started below a project's root.
 */
export function discoverForRun(projectRoot: string, target?: unknown): Discovery {
  const discovery = discover(projectRoot);
  if (discovery.unreadable) {
    throw new LoopxError(`cannot read ${discovery.loopxDir}: ${fsReason(discovery.unreadable)}`);
  }
  if (!discovery.exists) {
    // The project root is the cwd (spec §3.2) and .loopx/ is never searched for upwards (§5.1);
    // a parent that has one is most likely where the user meant to be.
    const parent = ancestorWithLoopx(projectRoot);
    if (parent !== undefined) {
      const run = typeof target === "string" ? ` && loopx run ${shellWord(target)}` : "";
      throw new LoopxError(
        `no .loopx/ directory in ${projectRoot} (loopx looks only in the directory it runs in); ${parent} has one: run loopx there (cd ${shellWord(parent)}${run}) or create .loopx/ here`,
      );
    }
    throw new LoopxError(`no .loopx/ directory in ${projectRoot}: create it with a workflow, e.g. loopx init (writes .loopx/main/index.sh)`);
  }
  if (discovery.issues.length > 0) {
    throw new LoopxError(`invalid .loopx/ (${discovery.issues.length} problem${discovery.issues.length === 1 ? "" : "s"}): ${discovery.issues.join("; ")}`);
  }
  return discovery;
}

function lookup(discovery: Discovery, target: Target, context: string): { workflow: DiscoveredWorkflow; script: DiscoveredScript } {
  const workflow = discovery.workflows.get(target.workflow);
  if (!workflow) {
    const skipped = unsupportedFiles(join(discovery.loopxDir, target.workflow));
    if (skipped.length > 0) {
      const shown = skipped.length > 4 ? `${skipped.slice(0, 4).join(", ")}, ...` : skipped.join(", ");
      throw new LoopxError(
        `${context}workflow "${target.workflow}" not found: .loopx/${target.workflow}/ holds no script with a supported extension (${SCRIPT_EXTENSIONS.join(", ")}; it has ${shown})`,
      );
    }
    const known = [...discovery.workflows.keys()];
    throw new LoopxError(`${context}workflow "${target.workflow}" not found in .loopx/ (${known.length ? `available: ${known.join(", ")}` : "no workflows found"})`);
  }
  const script = workflow.scripts.get(target.script);
  if (!script) {
    throw new LoopxError(`${context}script "${target.script}" not found in workflow "${workflow.name}" (scripts: ${[...workflow.scripts.keys()].join(", ")})`);
  }
  return { workflow, script };
}

/** Resolves the starting target (spec §7.1 step 3). */
function resolveStart(discovery: Discovery, target: unknown): Target {
  if (typeof target !== "string") throw new LoopxError(`target must be a string like "workflow" or "workflow:script", got ${describe(target)}`);
  const parsed = parseTarget(target);
  if (!parsed.ok) {
    // "ralph:" — the suggestion "ralph" / "ralph:index" is wrong for a workflow without index.
    const named = target.endsWith(":") ? discovery.workflows.get(target.slice(0, -1)) : undefined;
    if (named && !named.scripts.has("index")) {
      throw new LoopxError(`invalid target ${JSON.stringify(target)}: the script after ':' is missing (workflow "${named.name}" has no index script; its scripts: ${[...named.scripts.keys()].map((s) => `${named.name}:${s}`).join(", ")})`);
    }
    throw new LoopxError(parsed.error);
  }
  const start = runTargetOf(parsed.target);
  const workflow = discovery.workflows.get(start.workflow);
  if (workflow && !start.explicitScript && !workflow.scripts.has("index")) {
    throw new LoopxError(`workflow "${workflow.name}" has no index script; name one of its scripts: ${[...workflow.scripts.keys()].map((s) => `${workflow.name}:${s}`).join(", ")}`);
  }
  lookup(discovery, start, "");
  return { workflow: start.workflow, script: start.script };
}

function failure(error: unknown, target: string | undefined): RunEnd {
  return {
    reason: "failed",
    exitCode: 1,
    ...(target !== undefined ? { target } : {}),
    message: error instanceof Error ? error.message : String(error),
    error,
  };
}

/**
 * The loop state machine of spec §2.2 and §7.1, written once for the CLI and the API. Yields every
 * iteration's Output (the last one included) and throws a LoopxError for anything that makes the
 * CLI exit 1. Once validation has passed, the run belongs to `session`: it is told of every
 * iteration and, in `finally`, of how the run ended — every way it can end.
 */
export async function* runLoop(
  request: LoopRequest,
  host: LoopHost,
  session: RunSession = new RunSession({ terminate: async () => {}, warn: host.warn, runtime: "node", version: "0.0.0" }),
): AsyncGenerator<Output, void, undefined> {
  const maxIterations = validateMaxIterations(request.maxIterations);
  const optionVars = validateRunEnv(request.env);
  const discovery = discoverForRun(request.projectRoot, request.target);
  const userVars = loadRunEnv(request.envFile, host.warn);
  const start = resolveStart(discovery, request.target);
  if (maxIterations === 0) return;

  // The starting workflow's version check is part of validation: it warns before anything of the
  // run exists (scratch directory, record).
  const entered = new Set<string>([start.workflow]);
  host.onFirstEntry?.(discovery.workflows.get(start.workflow)!);

  let end: RunEnd | undefined;
  let current = start;
  let label = formatTarget(start);
  try {
    const runVars = await session.begin({ projectRoot: request.projectRoot, target: label, maxIterations });

    // Built once per workflow: inherited env < global < local (spec §8.3) < RunOptions.env < the
    // run's parts' variables (LOOPX_TMPDIR) < loopx's own variables; LOOPX_ITERATION is set per
    // script execution.
    const envByWorkflow = new Map<string, Record<string, string | undefined>>();
    const envFor = (workflow: string) => {
      let env = envByWorkflow.get(workflow);
      if (!env) {
        env = { ...request.baseEnv, ...Object.fromEntries(userVars), ...optionVars, ...runVars };
        env.LOOPX_BIN = request.loopxBin;
        env.LOOPX_PROJECT_ROOT = request.projectRoot;
        env.LOOPX_WORKFLOW = workflow;
        env.LOOPX_RUN_ID = session.id;
        envByWorkflow.set(workflow, env);
      }
      return env;
    };

    let stdin: string | undefined;
    for (;;) {
      const { workflow, script } = lookup(discovery, current, "");
      if (!entered.has(workflow.name)) {
        entered.add(workflow.name);
        host.onFirstEntry?.(workflow);
      }
      label = formatTarget(current);
      const n = session.iterationStart(label);
      let ran: ScriptStdout;
      try {
        ran = await host.runScript({ script, workflow, label, env: { ...envFor(workflow.name), LOOPX_ITERATION: String(n) }, stdin });
      } catch (error) {
        const exit = error instanceof ScriptFailedError ? error.script : { exitCode: null, signal: null, stdoutBytes: 0 };
        session.iterationEnd({ ...exit, error: error instanceof Error ? error.message : String(error) });
        throw error;
      }
      const output = parseOutput(ran.stdout);
      session.iterationEnd({ exitCode: 0, signal: null, stdoutBytes: ran.stdoutBytes, output });
      // Decided before yielding: a consumer that stops reading after the last output ends the run
      // as "stopped" / "limit", not as "returned".
      if (output.stop === true) end = { reason: "stopped", exitCode: 0, target: label };
      else if (maxIterations !== undefined && n >= maxIterations) end = { reason: "limit", exitCode: 0 };
      yield output;
      if (end) return;
      if (output.goto !== undefined) {
        const parsed = parseTarget(output.goto);
        if (!parsed.ok) throw new LoopxError(`invalid goto from ${label}: ${parsed.error}`);
        const next = gotoTargetOf(parsed.target, workflow.name);
        lookup(discovery, next, `invalid goto from ${label}: `);
        current = next;
        stdin = output.result;
      } else {
        current = start;
        stdin = undefined;
      }
    }
  } catch (error) {
    end = failure(error, label);
    throw error;
  } finally {
    // No `end` here means the consumer stopped iterating early (`break`, `return()`).
    await session.end(end ?? { reason: "returned", exitCode: null });
  }
}
