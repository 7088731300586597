import { Command } from "clipanion";
import { LoopxCommand } from "../context.js";
import { flag, positional, repeatedOption } from "../declare.js";
import type { CommandGroup } from "../command-spec.js";

/** `loopx sandbox show <target>` (loopx's own addition): the effective policy a `--sandbox` run of <target> would get here. */
export class SandboxShowCommand extends LoopxCommand {
  static override paths = [["sandbox", "show"]];
  static override usage = Command.Usage({ description: "Print the effective sandbox policy of a --sandbox run of <workflow> here" });

  json = flag("--json", "As one JSON object");
  allow = repeatedOption("--sandbox-allow", "sandbox-rule", "Add a host:port or a path, as loopx run --sandbox-allow does");
  target = positional("target");

  async execute(): Promise<number> {
    const { describePolicy } = await import("../../sandbox/part.js");
    const workflow = this.target.split(":")[0]!;
    this.out(`${describePolicy({ projectRoot: this.context.cwd, workflow, rules: this.allow ?? [], env: this.context.env, json: this.json })}\n`);
    return 0;
  }
}

export const SANDBOX_COMMANDS: CommandGroup = {
  name: "sandbox",
  commands: [SandboxShowCommand],
  details: `loopx's own addition. 'loopx run --sandbox' (or LOOPX_SANDBOX=1) runs every script of the run
inside a fence (Linux, bubblewrap): writes only to the project root, LOOPX_TMPDIR and the
policy's paths; $HOME hidden but for toolchains, git's settings and the policy's paths (never
~/.ssh, ~/.aws, ~/.config/gh, ...); connections only to the policy's host:port entries. The
policy: .loopx/<workflow>/sandbox.json, .loopx/sandbox.json and --sandbox-allow, added together:
{"write": [paths], "read": [paths], "network": ["host:port"]}. A probe proves the fence before
the first script; a fence that cannot be set up or does not hold ends the run with exit code 4
and one line, and nothing runs.
`,
};
