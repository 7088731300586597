import { Command } from "clipanion";
import { LoopxCommand } from "../context.js";
import { flag, positional } from "../declare.js";
import { LoopxError, UsageError, fsReason } from "../../core/errors.js";
import { isValidName } from "../../core/names.js";

/**
 * `loopx init [<workflow>] [--ts]` (loopx's own addition): starts a project with one working
 * workflow, `.loopx/<workflow>/index.sh` (or `index.ts` with --ts), and says what to run next.
 * It never overwrites: an existing `.loopx/<workflow>` (anything at that path) is an error and
 * nothing is written.
 */

export const DEFAULT_INIT_WORKFLOW = "main";

function bashIndex(workflow: string): string {
  return `#!/bin/bash
# The "${workflow}" workflow's default script: 'loopx run ${workflow}' runs it in a loop.
# Its stdout is its structured output, {"result", "goto", "stop"} (see 'loopx run -h');
# write logs to stderr. It runs in .loopx/${workflow}/; the project is "$LOOPX_PROJECT_ROOT".
set -euo pipefail

echo "${workflow}: iteration \${LOOPX_ITERATION:-1} in $LOOPX_PROJECT_ROOT" >&2

# Do the work here. Then: --stop ends the loop; without it the loop starts this script again;
# --goto <script> runs .loopx/${workflow}/<script>.sh (or .ts) next with --result on its stdin.
"$LOOPX_BIN" output --result "done" --stop
`;
}

function tsIndex(workflow: string): string {
  return `// The "${workflow}" workflow's default script: 'loopx run ${workflow}' runs it in a loop.
// output() prints its structured output and ends the script; log with console.error (stdout is
// the output). It runs in .loopx/${workflow}/; the project is process.env.LOOPX_PROJECT_ROOT.
import { input, output } from "loopx";

// The result a previous script passed on with goto ("" on a fresh start).
const previous: string = await input();
console.error(\`${workflow}: iteration \${process.env.LOOPX_ITERATION ?? 1}\${previous ? \`, got "\${previous}"\` : ""}\`);

// Do the work here. Then: stop ends the loop; without it the loop starts this script again;
// goto: "<script>" runs .loopx/${workflow}/<script>.ts (or .sh) next with result as its input().
output({ result: "done", stop: true });
`;
}

export class InitCommand extends LoopxCommand {
  static override paths = [["init"]];
  static override usage = Command.Usage({
    description: "Start a workflow: .loopx/<name>/index.sh (loopx's own addition)",
    details: `Creates .loopx/<name>/ (default name: main) holding a working index script: index.sh (bash),
or index.ts (TypeScript, using output() and input() from "loopx") with --ts. Creates .loopx/ if
needed; never overwrites anything. Then: loopx run <name>. loopx's own addition.
`,
  });

  // Without a description: the usage line shows it (`loopx init [<name>] [--ts]`).
  ts = flag("--ts");
  workflow = positional("new-workflow", { required: false });

  async execute(): Promise<number> {
    const workflow = this.workflow ?? DEFAULT_INIT_WORKFLOW;
    if (!isValidName(workflow)) {
      throw new UsageError(`invalid workflow name ${JSON.stringify(workflow)}: names match [a-zA-Z0-9_][a-zA-Z0-9_-]*`);
    }
    const { mkdirSync, writeFileSync, rmdirSync } = await import("node:fs");
    const { join } = await import("node:path");
    const projectRoot = this.context.cwd;
    const loopxDir = join(projectRoot, ".loopx");
    const workflowDir = join(loopxDir, workflow);
    const file = this.ts ? "index.ts" : "index.sh";
    let createdLoopxDir = false;
    try {
      createdLoopxDir = mkdirSync(loopxDir, { recursive: true }) !== undefined;
    } catch (error) {
      throw new LoopxError(`cannot create ${loopxDir}: ${fsReason(error)}`);
    }
    try {
      // Not recursive: an existing entry (a workflow, a file, a link) is never touched.
      mkdirSync(workflowDir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") {
        throw new LoopxError(`.loopx/${workflow} already exists; nothing written (choose another name: loopx init <workflow>)`);
      }
      throw new LoopxError(`cannot create ${workflowDir}: ${fsReason(error)}`);
    }
    try {
      writeFileSync(join(workflowDir, file), this.ts ? tsIndex(workflow) : bashIndex(workflow), { flag: "wx", mode: this.ts ? 0o644 : 0o755 });
    } catch (error) {
      rmdirSync(workflowDir);
      if (createdLoopxDir) rmdirSync(loopxDir);
      throw new LoopxError(`cannot write ${join(workflowDir, file)}: ${fsReason(error)}`);
    }
    this.context.stdout.write(`created .loopx/${workflow}/${file}\nnext: loopx run ${workflow}\n`);
    return 0;
  }
}
