import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { isWorkflowDir, scanScriptFiles } from "../runtime/workflow-files.js";
import { LoopxError } from "../core/errors.js";
import { SCRIPT_EXTENSIONS } from "../core/names.js";

/** A workflow found in a source tree: its name and the directory to install from. */
export interface SourceWorkflow {
  name: string;
  dir: string;
}

export type Classification =
  | { kind: "single"; workflow: SourceWorkflow }
  | { kind: "multi"; workflows: SourceWorkflow[] };

/**
 * Classifies a source root (spec §10.3) with the runtime's own detection rules: script files at
 * the root make it one workflow named `singleName` (everything at the root is part of it);
 * otherwise every top-level directory that is a workflow by structure is one workflow (other
 * directories and root files are ignored); with neither, the source has no workflows (an error).
 */
export function classifySource(root: string, singleName: string, shown: string): Classification {
  if (scanScriptFiles(root).length > 0) return { kind: "single", workflow: { name: singleName, dir: root } };
  const workflows: SourceWorkflow[] = [];
  for (const name of readdirSync(root).sort()) {
    const dir = join(root, name);
    let isDir = false;
    try {
      isDir = statSync(dir).isDirectory(); // symlinks followed, as discovery does
    } catch {
      // broken link: not a directory
    }
    if (isDir && isWorkflowDir(dir)) workflows.push({ name, dir });
  }
  if (workflows.length === 0) {
    throw new LoopxError(
      `no workflows found in ${shown}: it has no script files (${SCRIPT_EXTENSIONS.join(", ")}) at its root and no top-level directory containing script files`,
    );
  }
  return { kind: "multi", workflows };
}

/** Applies `-w <name>` (spec §10.8): only for multi-workflow sources, and the name must exist there. */
export function selectWorkflows(classification: Classification, selected: string | undefined, shown: string): SourceWorkflow[] {
  if (classification.kind === "single") {
    if (selected !== undefined) {
      throw new LoopxError(
        `-w/--workflow only applies to multi-workflow sources, and ${shown} is a single-workflow source (it has script files at its root)`,
      );
    }
    return [classification.workflow];
  }
  if (selected === undefined) return classification.workflows;
  const match = classification.workflows.find((workflow) => workflow.name === selected);
  if (!match) {
    const available = classification.workflows.map((workflow) => workflow.name).join(", ");
    throw new LoopxError(`workflow ${JSON.stringify(selected)} not found in ${shown} (its workflows: ${available})`);
  }
  return [match];
}
