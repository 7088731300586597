import { lstatSync, mkdirSync, renameSync } from "node:fs";
import { join } from "node:path";
import { isWorkflowDir } from "../runtime/workflow-files.js";
import { fsReason, LoopxError } from "../core/errors.js";
import type { PlannedWorkflow } from "./preflight.js";
import { copyTree, isInside, moveTree } from "./tree.js";

export interface StagedWorkflow extends PlannedWorkflow {
  /** `<staging>/<name>`: a complete copy, ready to be renamed into place. */
  staged: string;
}

/**
 * Stage phase (spec §10.7): writes every planned workflow to `<stagingDir>/<name>`. `stagingDir`
 * is a dot-directory inside `.loopx/` (same filesystem, so commit is a rename; no top-level script
 * files, so discovery never takes it for a workflow). A workflow in `ownDir` (loopx's temp
 * directory, where every source is fetched) that no other planned workflow shares is moved there
 * when the file system allows (tree.ts moveTree), else copied. Throws, naming the workflow, on any
 * failure; the caller removes the staging directory.
 */
export function stageAll(planned: PlannedWorkflow[], stagingDir: string, ownDir: string): StagedWorkflow[] {
  return planned.map((workflow) => {
    const staged = join(stagingDir, workflow.name);
    try {
      if (!(movable(workflow, planned, ownDir) && moveTree(workflow.from, staged))) copyTree(workflow.from, staged);
    } catch (error) {
      throw new LoopxError(`cannot stage workflow ${JSON.stringify(workflow.name)}: ${fsReason(error)}; nothing was installed`);
    }
    return { ...workflow, staged };
  });
}

/** Whether `workflow`'s tree may be moved: inside `ownDir`, and neither holding, held by nor equal to another planned workflow's tree. */
function movable(workflow: PlannedWorkflow, planned: PlannedWorkflow[], ownDir: string): boolean {
  if (!isInside(ownDir, workflow.from) || workflow.from === ownDir) return false;
  return planned.every((other) => other === workflow || !(isInside(other.from, workflow.from) || isInside(workflow.from, other.from)));
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Moves one staged workflow into place; with `replace`, the old entry goes to `trashDir` first (a symlink moves as itself). */
function commitOne(workflow: StagedWorkflow, trashDir: string): void {
  const present = exists(workflow.destination);
  if (present && !workflow.replace) throw new Error(`.loopx/${workflow.name} appeared during the install`);
  if (!present) {
    renameSync(workflow.staged, workflow.destination);
    return;
  }
  if (!isWorkflowDir(workflow.destination)) throw new Error(`.loopx/${workflow.name} is no longer a workflow, so it is not replaced`);
  mkdirSync(trashDir, { recursive: true });
  const old = join(trashDir, workflow.name);
  renameSync(workflow.destination, old);
  try {
    renameSync(workflow.staged, workflow.destination);
  } catch (error) {
    try {
      renameSync(old, workflow.destination); // put the old workflow back
    } catch {
      // nothing more can be done; the error below says what was not committed
    }
    throw error;
  }
}

/**
 * Commit phase (spec §10.7): renames the staged workflows into `.loopx/`, in order. Replaced
 * entries are moved into `trashDir` (inside the staging directory, removed with it). On a failure,
 * stops and reports which workflows were committed and which were not; no rollback.
 */
export function commitAll(staged: StagedWorkflow[], trashDir: string): void {
  const committed: string[] = [];
  for (let i = 0; i < staged.length; i++) {
    const workflow = staged[i]!;
    try {
      commitOne(workflow, trashDir);
    } catch (error) {
      const notCommitted = staged.slice(i).map((w) => w.name);
      throw new LoopxError(
        `cannot install workflow ${JSON.stringify(workflow.name)}: ${fsReason(error)}; ` +
          `committed: ${committed.length > 0 ? committed.join(", ") : "none"}; not committed: ${notCommitted.join(", ")}`,
      );
    }
    committed.push(workflow.name);
  }
}
