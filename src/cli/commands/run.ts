import { Command, Option } from "clipanion";
import { UsageError } from "../../core/errors.js";
import { parseCount, parseDurationOption, single } from "../options.js";

/**
 * `loopx run [options] <workflow>[:<script>]` (spec §4.1, §4.2). `-h` never reaches this class:
 * the dispatcher short-circuits it before parsing, as the spec requires.
 */
export class RunCommand extends Command {
  static override paths = [["run"]];
  static override usage = Command.Usage({ description: "Run a workflow's script in a loop" });

  // Every option is declared here once: the dispatcher reads them from this class (main.ts).
  maxIterations = Option.Array("-n", { description: "Stop after <count> script executions" });
  envFile = Option.Array("-e", { description: "Env file merged over the global env" });
  timeout = Option.Array("--timeout", { description: "Limit for each script execution (loopx's own addition)" });
  maxTime = Option.Array("--max-time", { description: "Limit for the whole run (loopx's own addition)" });
  log = Option.Array("--log", { description: "Append every event of the run to this file (loopx's own addition)" });
  summary = Option.Counter("--summary", 0, { description: "Print the summary line when the run ends, also off a terminal (loopx's own addition)" });
  targets = Option.Rest();

  async execute(): Promise<number> {
    const count = single(this.maxIterations, "-n");
    const envFile = single(this.envFile, "-e");
    const timeout = single(this.timeout, "--timeout");
    const maxTime = single(this.maxTime, "--max-time");
    const log = single(this.log, "--log");
    if (this.summary > 1) throw new UsageError("--summary given more than once");
    if (log === "") throw new UsageError("--log needs a file path");
    if (this.targets.length === 0) throw new UsageError("loopx run needs a target: loopx run <workflow>[:<script>]");
    if (this.targets.length > 1) {
      throw new UsageError(`loopx run takes exactly one target, got ${this.targets.length}: ${this.targets.map((t) => JSON.stringify(t)).join(" ")}`);
    }
    const maxIterations = count === undefined ? undefined : parseCount(count, "-n");
    const features = {
      timeout: timeout === undefined ? undefined : parseDurationOption(timeout, "--timeout"),
      maxTime: maxTime === undefined ? undefined : parseDurationOption(maxTime, "--max-time"),
    };
    const { runFromCli } = await import("../run-loop.js");
    return runFromCli({
      target: this.targets[0]!,
      maxIterations,
      envFile,
      log,
      summary: this.summary === 1,
      argv: process.argv.slice(2),
      features,
    });
  }
}
