import { Command, Option } from "clipanion";
import { UsageError } from "../../core/errors.js";
import { single } from "../options.js";

/**
 * `loopx install [options] <source>` (spec §4.2, §10). `-h` is short-circuited by the dispatcher.
 */
export class InstallCommand extends Command {
  static override paths = [["install"]];
  static override usage = Command.Usage({ description: "Install workflows from git or a tarball" });

  workflow = Option.Array("-w,--workflow", { description: "Install only this workflow" });
  yes = Option.Counter("-y", 0, { description: "Replace an existing workflow / ignore a version mismatch" });
  sources = Option.Rest();

  async execute(): Promise<number> {
    const workflow = single(this.workflow, "-w/--workflow");
    if (this.yes > 1) throw new UsageError("-y given more than once");
    if (this.sources.length === 0) throw new UsageError("loopx install needs a source: loopx install [options] <source>");
    if (this.sources.length > 1) {
      throw new UsageError(`loopx install takes exactly one source, got ${this.sources.length}: ${this.sources.map((s) => JSON.stringify(s)).join(" ")}`);
    }
    const { install } = await import("../../install/index.js");
    await install({ source: this.sources[0]!, workflow, yes: this.yes === 1, projectRoot: process.cwd() });
    return 0;
  }
}
