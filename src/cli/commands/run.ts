import { Command, Option } from "clipanion";
import { UsageError } from "../../core/errors.js";
import { parseCount, single } from "../options.js";

/**
 * `loopx run [options] <workflow>[:<script>]` (spec §4.1, §4.2). `-h` never reaches this class:
 * the dispatcher short-circuits it before parsing, as the spec requires.
 */
export class RunCommand extends Command {
  static override paths = [["run"]];

  maxIterations = Option.Array("-n");
  envFile = Option.Array("-e");
  targets = Option.Rest();

  async execute(): Promise<number> {
    const count = single(this.maxIterations, "-n");
    const envFile = single(this.envFile, "-e");
    if (this.targets.length === 0) throw new UsageError("loopx run needs a target: loopx run <workflow>[:<script>]");
    if (this.targets.length > 1) {
      throw new UsageError(`loopx run takes exactly one target, got ${this.targets.length}: ${this.targets.map((t) => JSON.stringify(t)).join(" ")}`);
    }
    const maxIterations = count === undefined ? undefined : parseCount(count, "-n");
    const { runFromCli } = await import("../run-loop.js");
    return runFromCli({ target: this.targets[0]!, maxIterations, envFile, argv: process.argv.slice(2) });
  }
}
