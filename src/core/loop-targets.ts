/**
 * Where a run's scripts are (spec §5, §7.1): discovery checked for a run, the starting target, a
 * resumed run's target and each goto's script, looked up with one-line errors that name what is
 * missing and what there is. Pure: the directories come from the host.
 */
import { ancestorWithLoopx, discover, unsupportedFiles, type DirectoryReader, type DiscoveredScript, type DiscoveredWorkflow, type Discovery } from "./discovery.js";
import { describeValue } from "./describe.js";
import { LoopxError } from "./errors.js";
import { SCRIPT_EXTENSIONS } from "./names.js";
import { shellWord } from "./shell-word.js";
import { formatTarget, parseTarget, runTargetOf, type Target } from "./target.js";

/**
 * Discovery with run-mode validation (spec §5, §7.1 step 1): every issue is fatal. `target` (as
 * given) only words the message of a run started below a project's root.
 */
export function discoverForRun(directories: DirectoryReader, projectRoot: string, target?: unknown): Discovery {
  const discovery = discover(directories, projectRoot);
  if (!discovery.exists) {
    const unreadable = directories.unreadable?.(discovery.loopxDir);
    if (unreadable !== undefined) throw new LoopxError(`cannot read ${discovery.loopxDir}: ${unreadable}`);
    // The project root is the cwd (spec §3.2) and .loopx/ is never searched for upwards (§5.1);
    // a parent that has one is most likely where the user meant to be.
    const parent = ancestorWithLoopx(directories, projectRoot);
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

export function lookup(directories: DirectoryReader, discovery: Discovery, target: Target, context: string): { workflow: DiscoveredWorkflow; script: DiscoveredScript } {
  const workflow = discovery.workflows.get(target.workflow);
  if (!workflow) {
    const skipped = unsupportedFiles(directories, `${discovery.loopxDir}/${target.workflow}`);
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
export function resolveStart(directories: DirectoryReader, discovery: Discovery, target: unknown): Target {
  if (typeof target !== "string") throw new LoopxError(`target must be a string like "workflow" or "workflow:script", got ${describeValue(target)}`);
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
  lookup(directories, discovery, start, "");
  return { workflow: start.workflow, script: start.script };
}

/** Where a resumed run starts again: a script that must still exist. */
export function resolveResume(directories: DirectoryReader, discovery: Discovery, target: string): Target {
  const parsed = parseTarget(target);
  if (!parsed.ok) throw new LoopxError(`cannot resume at ${JSON.stringify(target)}: ${parsed.error}`);
  const at = runTargetOf(parsed.target);
  lookup(directories, discovery, at, `cannot resume at ${formatTarget(at)}: `);
  return { workflow: at.workflow, script: at.script };
}
