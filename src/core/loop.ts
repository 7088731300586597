import { discover, type DiscoveredScript, type DiscoveredWorkflow, type Discovery } from "./discovery.js";
import { loadRunEnv } from "./env.js";
import { LoopxError } from "./errors.js";
import { parseOutput, type Output } from "./output.js";
import { formatTarget, gotoTargetOf, parseTarget, runTargetOf, type Target } from "./target.js";

/** What to run, as given by the CLI or the API; validated by the engine when iteration begins. */
export interface LoopRequest {
  target: unknown;
  /** undefined = no limit. Anything but a non-negative safe integer is an error. */
  maxIterations?: unknown;
  /** Absolute path of the `-e` / `envFile` file, if any. */
  envFile?: string;
  /** The project root: where `.loopx/` lives and what LOOPX_PROJECT_ROOT is. */
  projectRoot: string;
  /** Environment inherited by scripts (a snapshot of process.env). */
  baseEnv: Record<string, string | undefined>;
  loopxBin: string;
}

/** The engine's only way out to processes and the terminal; the runtime layer provides it. */
export interface LoopHost {
  /** Runs one script and returns its stdout, or throws a LoopxError (non-zero exit, ...). */
  runScript(step: { script: DiscoveredScript; workflow: DiscoveredWorkflow; label: string; env: Record<string, string | undefined>; stdin: string | undefined }): Promise<string>;
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

/** Discovery with run-mode validation (spec §5, §7.1 step 1): every issue is fatal. */
export function discoverForRun(projectRoot: string): Discovery {
  const discovery = discover(projectRoot);
  if (!discovery.exists) {
    throw new LoopxError(`no .loopx/ directory in ${projectRoot}: create it with a workflow, e.g. .loopx/my-workflow/index.sh`);
  }
  if (discovery.issues.length > 0) {
    throw new LoopxError(`invalid .loopx/ (${discovery.issues.length} problem${discovery.issues.length === 1 ? "" : "s"}): ${discovery.issues.join("; ")}`);
  }
  return discovery;
}

function lookup(discovery: Discovery, target: Target, context: string): { workflow: DiscoveredWorkflow; script: DiscoveredScript } {
  const workflow = discovery.workflows.get(target.workflow);
  if (!workflow) {
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
  if (!parsed.ok) throw new LoopxError(parsed.error);
  const start = runTargetOf(parsed.target);
  const workflow = discovery.workflows.get(start.workflow);
  if (workflow && !start.explicitScript && !workflow.scripts.has("index")) {
    throw new LoopxError(`workflow "${workflow.name}" has no index script; name one of its scripts: ${[...workflow.scripts.keys()].map((s) => `${workflow.name}:${s}`).join(", ")}`);
  }
  lookup(discovery, start, "");
  return { workflow: start.workflow, script: start.script };
}

/**
 * The loop state machine of spec §2.2 and §7.1, written once for the CLI and the API. Yields every
 * iteration's Output (the last one included) and throws a LoopxError for anything that makes the
 * CLI exit 1.
 */
export async function* runLoop(request: LoopRequest, host: LoopHost): AsyncGenerator<Output, void, undefined> {
  const maxIterations = validateMaxIterations(request.maxIterations);
  const discovery = discoverForRun(request.projectRoot);
  const userVars = loadRunEnv(request.envFile, host.warn);
  const start = resolveStart(discovery, request.target);
  if (maxIterations === 0) return;

  // Built once per workflow: inherited env < global < local < loopx's own variables (spec §8.3).
  const envByWorkflow = new Map<string, Record<string, string | undefined>>();
  const envFor = (workflow: string) => {
    let env = envByWorkflow.get(workflow);
    if (!env) {
      env = { ...request.baseEnv, ...Object.fromEntries(userVars) };
      env.LOOPX_BIN = request.loopxBin;
      env.LOOPX_PROJECT_ROOT = request.projectRoot;
      env.LOOPX_WORKFLOW = workflow;
      envByWorkflow.set(workflow, env);
    }
    return env;
  };

  const entered = new Set<string>();
  let current = start;
  let stdin: string | undefined;
  let iterations = 0;
  for (;;) {
    const { workflow, script } = lookup(discovery, current, "");
    if (!entered.has(workflow.name)) {
      entered.add(workflow.name);
      host.onFirstEntry?.(workflow);
    }
    const label = formatTarget(current);
    const stdout = await host.runScript({ script, workflow, label, env: envFor(workflow.name), stdin });
    const output = parseOutput(stdout);
    iterations++;
    yield output;
    if (output.stop === true) return;
    if (maxIterations !== undefined && iterations >= maxIterations) return;
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
}
