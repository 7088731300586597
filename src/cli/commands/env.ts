import { Command, Option } from "clipanion";
import { LoopxError } from "../../core/errors.js";
import { envValueProblem, isValidEnvKey } from "../../core/envfile.js";
import { listGlobalEnv, removeGlobalEnvVar, setGlobalEnvVar } from "../../runtime/env-files.js";
import { warnToStderr } from "../../runtime/stderr.js";

function checkName(name: string): void {
  if (!isValidEnvKey(name)) {
    throw new LoopxError(`invalid variable name ${JSON.stringify(name)}: names match [A-Za-z_][A-Za-z0-9_]*`);
  }
}

/** `loopx env set <name> <value>`: validated, written atomically as KEY="value" (spec §4.3). */
export class EnvSetCommand extends Command {
  static override paths = [["env", "set"]];
  name = Option.String();
  value = Option.String();

  async execute(): Promise<number> {
    checkName(this.name);
    const problem = envValueProblem(this.value);
    if (problem) throw new LoopxError(`invalid value for ${this.name}: ${problem}`);
    setGlobalEnvVar(this.name, this.value);
    return 0;
  }
}

/** `loopx env remove <name>`: a missing variable is a silent no-op. */
export class EnvRemoveCommand extends Command {
  static override paths = [["env", "remove"]];
  name = Option.String();

  async execute(): Promise<number> {
    checkName(this.name);
    removeGlobalEnvVar(this.name);
    return 0;
  }
}

/** `loopx env list`: KEY=VALUE lines sorted by key; nothing when empty. */
export class EnvListCommand extends Command {
  static override paths = [["env", "list"]];

  async execute(): Promise<number> {
    const lines = listGlobalEnv(warnToStderr).map(([key, value]) => `${key}=${value}\n`);
    this.context.stdout.write(lines.join(""));
    return 0;
  }
}
