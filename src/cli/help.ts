import { discover } from "../core/discovery.js";
import { RUN_USAGE } from "./help-text.js";

/** Run help (spec §11.2): usage plus a non-fatal discovery of `.loopx/`; warnings go to stderr. */
export function runHelp(projectRoot: string, warn: (message: string) => void): string {
  const discovery = discover(projectRoot);
  if (!discovery.exists) {
    warn(`no .loopx/ directory in ${projectRoot}; create .loopx/<workflow>/index.sh to add a workflow`);
    return RUN_USAGE;
  }
  for (const issue of discovery.issues) warn(issue);
  const lines = [RUN_USAGE, "Workflows in .loopx/:"];
  if (discovery.workflows.size === 0) lines.push("  (none)");
  for (const workflow of discovery.workflows.values()) {
    lines.push(`  ${workflow.name}`);
    for (const script of workflow.scripts.values()) {
      const fileName = script.path.slice(workflow.dir.length + 1);
      lines.push(`    ${script.name}${script.name === "index" ? "  (default)" : ""}    ${fileName}`);
    }
  }
  return lines.join("\n") + "\n";
}

