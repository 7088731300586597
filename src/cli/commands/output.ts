import { Command, Option } from "clipanion";
import { UsageError } from "../../core/errors.js";
import { serializeOutput, type Output } from "../../core/output.js";
import { valueOption } from "../options.js";

/** `loopx output`: serializes flags to structured output JSON; no goto validation (spec §4.3). */
export class OutputCommand extends Command {
  static override paths = [["output"]];
  static override usage = Command.Usage({
    description: "Print structured output (for bash scripts)",
    details: "Prints structured output JSON for the loop to read; at least one flag is required.\n",
  });

  // Without descriptions: the usage line shows them (the help has no options table).
  result = valueOption("--result", "text");
  goto = valueOption("--goto", "goto");
  stop = Option.Boolean("--stop", false);

  async execute(): Promise<number> {
    if (this.result === undefined && this.goto === undefined && !this.stop) {
      throw new UsageError("loopx output needs at least one of --result <value>, --goto <target>, --stop");
    }
    const output: Output = {};
    if (this.result !== undefined) output.result = this.result;
    if (this.goto !== undefined) output.goto = this.goto;
    if (this.stop) output.stop = true;
    this.context.stdout.write(`${serializeOutput(output)}\n`);
    return 0;
  }
}
