import { Command } from "clipanion";
import { LoopxCommand } from "../context.js";
import { positional } from "../declare.js";
import { UsageError } from "../../core/errors.js";

/** `loopx completion bash|zsh|fish` (loopx's own addition): prints the shell's completion script. */
export class CompletionCommand extends LoopxCommand {
  static override paths = [["completion"]];
  static override usage = Command.Usage({
    description: "Print a shell completion script (loopx's own addition)",
    details: `Prints the completion script for bash, zsh or fish: commands, options, targets from .loopx/,
run ids for 'loopx runs'. Install it:
  bash  echo 'eval "$(loopx completion bash)"' >> ~/.bashrc
  zsh   echo 'eval "$(loopx completion zsh)"' >> ~/.zshrc     (after compinit)
  fish  loopx completion fish > ~/.config/fish/completions/loopx.fish
`,
  });

  shell = positional("shell");

  async execute(): Promise<number> {
    const { SHELLS, completionScript } = await import("../completion.js");
    const shell = SHELLS.find((candidate) => candidate === this.shell);
    if (!shell) throw new UsageError(`unknown shell ${JSON.stringify(this.shell)} for 'loopx completion' (shells: ${SHELLS.join(", ")})`);
    this.context.stdout.write(completionScript(shell));
    return 0;
  }
}
