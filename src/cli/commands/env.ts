import { Command } from "clipanion";
import { LoopxCommand } from "../context.js";
import { positional } from "../declare.js";
import type { CommandGroup } from "../command-spec.js";
import { LoopxError } from "../../core/errors.js";
import { envValueProblem, isValidEnvKey } from "../../core/envfile.js";
import { listGlobalEnv, removeGlobalEnvVar, setGlobalEnvVar } from "../../runtime/env-files.js";
import { warnToStderr } from "../../os/stderr.js";

function checkName(name: string): void {
  if (!isValidEnvKey(name)) {
    throw new LoopxError(`invalid variable name ${JSON.stringify(name)}: names match [A-Za-z_][A-Za-z0-9_]*`);
  }
}

/** `loopx env set <name> <value>`: validated, written atomically as KEY="value" (spec §4.3). */
export class EnvSetCommand extends LoopxCommand {
  static override paths = [["env", "set"]];
  static override usage = Command.Usage({ description: "Set a global environment variable" });
  name = positional("variable");
  value = positional("text");

  async execute(): Promise<number> {
    checkName(this.name);
    const problem = envValueProblem(this.value);
    if (problem) throw new LoopxError(`invalid value for ${this.name}: ${problem}`);
    setGlobalEnvVar(this.name, this.value, this.context.env);
    return 0;
  }
}

/** `loopx env remove <name>`: a missing variable is a silent no-op. */
export class EnvRemoveCommand extends LoopxCommand {
  static override paths = [["env", "remove"]];
  static override usage = Command.Usage({ description: "Remove a global environment variable" });
  name = positional("variable");

  async execute(): Promise<number> {
    checkName(this.name);
    removeGlobalEnvVar(this.name, this.context.env);
    return 0;
  }
}

/** `loopx env list`: KEY=VALUE lines sorted by key; nothing when empty. */
export class EnvListCommand extends LoopxCommand {
  static override paths = [["env", "list"]];
  static override usage = Command.Usage({ description: "List global environment variables" });

  async execute(): Promise<number> {
    const lines = listGlobalEnv(warnToStderr, this.context.env).map(([key, value]) => `${key}=${value}\n`);
    this.context.stdout.write(lines.join(""));
    return 0;
  }
}

export const ENV_COMMANDS: CommandGroup = {
  name: "env",
  commands: [EnvSetCommand, EnvRemoveCommand, EnvListCommand],
  details: "Manages global variables in $XDG_CONFIG_HOME/loopx/env (default ~/.config/loopx/env).\n",
};
