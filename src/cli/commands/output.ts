import { Command, Option } from "clipanion";
import { UsageError } from "../../core/errors.js";
import { serializeOutput, type Output } from "../../core/output.js";
import { single } from "../options.js";

/** `loopx output`: serializes flags to structured output JSON; no goto validation (spec §4.3). */
export class OutputCommand extends Command {
  static override paths = [["output"]];
  static override usage = Command.Usage({ description: "Print structured output (for bash scripts)" });

  result = Option.Array("--result", { description: "The result passed on" });
  goto = Option.Array("--goto", { description: "The next target" });
  stop = Option.Counter("--stop", 0, { description: "End the loop" });

  async execute(): Promise<number> {
    const result = single(this.result, "--result");
    const goto = single(this.goto, "--goto");
    if (this.stop > 1) throw new UsageError("--stop given more than once");
    if (result === undefined && goto === undefined && this.stop === 0) {
      throw new UsageError("loopx output needs at least one of --result <value>, --goto <target>, --stop");
    }
    const output: Output = {};
    if (result !== undefined) output.result = result;
    if (goto !== undefined) output.goto = goto;
    if (this.stop) output.stop = true;
    this.context.stdout.write(`${serializeOutput(output)}\n`);
    return 0;
  }
}
