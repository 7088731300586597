import type { DiscoveredWorkflow } from "../core/discovery.js";
import type { LoopHost } from "../core/loop.js";
import { readVersionRequirement, satisfiesVersion, versionMismatchMessage } from "../core/version-requirement.js";
import { runScript } from "../runtime/script-runner.js";
import { warnToStderr } from "../runtime/stderr.js";
import type { ScriptSupervisor } from "../runtime/supervisor.js";
import { VERSION } from "../version.js";


/**
 * The workflow-level version check (spec §3.2), run by the engine once per workflow on its first
 * entry: a broken package.json or an unsatisfied range is a warning, never an error.
 */
export function checkWorkflowVersion(workflow: DiscoveredWorkflow, warn: (message: string) => void = warnToStderr): void {
  const requirement = readVersionRequirement(workflow.dir);
  if (requirement.kind === "warning") {
    warn(`workflow ${JSON.stringify(workflow.name)}: ${requirement.message}`);
  } else if (requirement.kind === "range" && !satisfiesVersion(requirement.range, VERSION)) {
    warn(versionMismatchMessage(workflow.name, requirement.range, VERSION));
  }
}

/** The engine's host for real runs: scripts go through the supervisor, warnings to stderr. */
export function createLoopHost(supervisor: ScriptSupervisor): LoopHost {
  return {
    runScript: ({ script, workflow, label, env, stdin }) => runScript(supervisor, script, label, workflow.dir, env, stdin),
    warn: warnToStderr,
    onFirstEntry: (workflow) => checkWorkflowVersion(workflow),
  };
}
