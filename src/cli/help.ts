import type { DiscoveredWorkflow } from "../core/discovery.js";
import { discover } from "../runtime/workflow-files.js";
import { isValidName } from "../core/names.js";

/** Run help (spec §11.2): `usage` plus a non-fatal discovery of `.loopx/`; warnings go to stderr. */
export function runHelp(usage: string, projectRoot: string, warn: (message: string) => void): string {
  const discovery = discover(projectRoot);
  if (!discovery.exists) {
    warn(`no .loopx/ directory in ${projectRoot}; create .loopx/<workflow>/index.sh to add a workflow`);
    return usage;
  }
  for (const issue of discovery.issues) warn(issue);
  const lines = [usage, "Workflows in .loopx/:"];
  if (discovery.workflows.size === 0) lines.push("  (none)");
  const scripts = [...discovery.workflows.values()].map(scriptRows);
  // One column for the file names across every workflow, two spaces after the widest script label.
  const column = Math.max(0, ...scripts.flat().map(([label]) => label.length)) + 2;
  for (const [i, workflow] of [...discovery.workflows.values()].entries()) {
    lines.push(`  ${workflow.name}${isValidName(workflow.name) ? "" : "  (invalid name)"}`);
    lines.push(...scripts[i]!.map(([label, files]) => `    ${label.padEnd(column)}${files}`));
  }
  return lines.join("\n") + "\n";
}

/**
 * One row per script name with every file that carries it, so a collision shows all its files
 * and an invalid name is marked where it is listed (the warnings on stderr say why).
 */
function scriptRows(workflow: DiscoveredWorkflow): Array<[label: string, files: string]> {
  const byBase = new Map<string, string[]>();
  for (const file of workflow.files) byBase.set(file.base, [...(byBase.get(file.base) ?? []), file.fileName]);
  return [...byBase].map(([base, fileNames]) => {
    const notes = [
      base === "index" && fileNames.length === 1 ? "(default)" : "",
      fileNames.length > 1 ? "(name collision)" : "",
      isValidName(base) ? "" : "(invalid name)",
    ].filter(Boolean);
    return [`${base}${notes.length ? `  ${notes.join(" ")}` : ""}`, fileNames.join(", ")];
  });
}
