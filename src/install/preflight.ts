import { lstatSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { workflowIssues } from "../core/discovery.js";
import { isWorkflowDir, scanScriptFiles } from "../runtime/workflow-files.js";
import { readVersionRequirement } from "../runtime/workflow-package.js";
import { isValidName } from "../core/names.js";
import { satisfiesVersion, versionMismatchMessage } from "../core/version-requirement.js";
import type { SourceWorkflow } from "./classify.js";
import { isInside, unsafeEntries } from "./tree.js";

/** A workflow that passed preflight: where its files come from and where they go. */
export interface PlannedWorkflow {
  name: string;
  /** Real directory to copy from (a symlinked workflow directory in the source is followed). */
  from: string;
  /** `.loopx/<name>` */
  destination: string;
  /** An existing workflow at `destination` is replaced (only with -y). */
  replace: boolean;
}

export interface PreflightResult {
  planned: PlannedWorkflow[];
  /** Blocking problems, one line each, naming the workflow. Empty when the install may proceed. */
  failures: string[];
  /** Non-blocking problems (broken package.json; with -y, overridden version mismatches). */
  warnings: string[];
}

export interface PreflightOptions {
  sourceRoot: string;
  loopxDir: string;
  yes: boolean;
  version: string;
}

/** What is at the destination path, without following a final symlink for existence. */
function destinationState(path: string): "absent" | "workflow" | "other" {
  try {
    lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "absent";
    return "other";
  }
  return isWorkflowDir(path) ? "workflow" : "other";
}

/**
 * Runs every preflight check of spec §10.7 for every selected workflow, collecting all failures:
 * name restrictions and same-base-name collisions (the runtime rules, §10.4), unsafe entries,
 * the destination `.loopx/<name>` (§10.5) and the declared loopx version (§10.6).
 */
export async function preflight(workflows: SourceWorkflow[], options: PreflightOptions): Promise<PreflightResult> {
  const result: PreflightResult = { planned: [], failures: [], warnings: [] };
  const realRoot = realpathSync.native(options.sourceRoot);
  for (const workflow of workflows) {
    const label = `workflow ${JSON.stringify(workflow.name)}`;
    const failures: string[] = [];
    failures.push(...workflowIssues(workflow.name, scanScriptFiles(workflow.dir)));

    let from: string | undefined = realpathSync.native(workflow.dir);
    if (!isInside(realRoot, from)) {
      failures.push(`${label}: its directory is a symlink to somewhere outside the source`);
      from = undefined;
    } else {
      for (const problem of unsafeEntries(from)) failures.push(`${label}: ${problem}`);
    }

    const destination = join(options.loopxDir, workflow.name);
    let replace = false;
    if (isValidName(workflow.name)) {
      const state = destinationState(destination);
      const shownDestination = `.loopx/${workflow.name}`;
      if (state === "other") {
        failures.push(`${label}: ${shownDestination} already exists and is not a workflow, so it is never replaced (not even with -y)`);
      } else if (state === "workflow") {
        if (options.yes) {
          replace = true;
        } else {
          failures.push(`${label}: ${shownDestination} already exists (use -y to replace it)`);
        }
      }
    }

    if (from !== undefined) {
      const requirement = await readVersionRequirement(from);
      if (requirement.kind === "warning") {
        result.warnings.push(`${label}: ${requirement.message}`);
      } else if (requirement.kind === "range" && !(await satisfiesVersion(requirement.range, options.version))) {
        if (options.yes) result.warnings.push(versionMismatchMessage(workflow.name, requirement.range, options.version, "installing anyway because of -y"));
        else failures.push(versionMismatchMessage(workflow.name, requirement.range, options.version, "use -y to install anyway"));
      }
    }

    result.failures.push(...failures);
    if (failures.length === 0 && from !== undefined) result.planned.push({ name: workflow.name, from, destination, replace });
  }
  return result;
}
