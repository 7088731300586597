import { Command, Option } from "clipanion";
import { UsageError } from "../../core/errors.js";
import { valueOption } from "../options.js";

/**
 * `loopx install [options] <source>` (spec §4.2, §10). `-h` short-circuits everything else.
 */
export class InstallCommand extends Command {
  static override paths = [["install"]];
  static override usage = Command.Usage({
    description: "Install workflows from git or a tarball",
    details: `Installs workflows into .loopx/ (created if missing).

Sources:
  org/repo                              GitHub shorthand: https://github.com/org/repo.git
  https://github.com/org/repo[.git]     git (also gitlab.com, bitbucket.org)
  <any URL ending in .git>              git, cloned with --depth 1
  <URL whose path ends in .tar.gz/.tgz> tarball, downloaded and extracted

A source whose top level holds script files is one workflow, named after the repository or
archive; otherwise each top-level directory holding script files is a workflow of its own.
`,
  });
  static helpShortCircuits = true;

  workflow = valueOption("-w,--workflow", "workflow", "Install only this workflow from a multi-workflow source");
  yes = Option.Boolean("-y", false, { description: "Replace an existing workflow / ignore a loopx version mismatch" });
  sources = Option.Rest({ name: "source" });

  async execute(): Promise<number> {
    if (this.sources.length === 0) throw new UsageError("loopx install needs a source: loopx install [options] <source>");
    if (this.sources.length > 1) {
      throw new UsageError(`loopx install takes exactly one source, got ${this.sources.length}: ${this.sources.map((s) => JSON.stringify(s)).join(" ")}`);
    }
    const { install } = await import("../../install/index.js");
    await install({ source: this.sources[0]!, workflow: this.workflow, yes: this.yes, projectRoot: process.cwd() });
    return 0;
  }
}
