import { Command } from "clipanion";
import { LoopxCommand } from "../context.js";
import { flag, rest, valueOption } from "../declare.js";
import { UsageError } from "../../core/errors.js";

/**
 * `loopx install [options] <source>` (spec §4.2, §10). `-h` short-circuits everything else.
 */
export class InstallCommand extends LoopxCommand {
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

loopx's own forms (flags the spec does not define; a source above keeps its meaning):
  loopx install --builtin [<name>...]   the workflows shipped with loopx: ralph, converge
                                        (all of them when no name is given)
  loopx install --local <path>          a directory or .tar.gz/.tgz archive on disk
`,
  });
  static helpShortCircuits = true;

  workflow = valueOption("-w,--workflow", "workflow", "Install only this workflow from a multi-workflow source");
  yes = flag("-y", "Replace an existing workflow / ignore a loopx version mismatch");
  builtin = flag("--builtin", "Install the workflows shipped with loopx, or those named (loopx's own addition)");
  local = flag("--local", "The source is a local directory or .tar.gz/.tgz archive (loopx's own addition)");
  sources = rest("source");

  async execute(): Promise<number> {
    if (this.builtin && this.local) throw new UsageError("--builtin and --local cannot be combined: --builtin installs the shipped workflows, --local a path");
    const [{ install }, { warnToStderr }] = await Promise.all([import("../../install/index.js"), import("../../os/stderr.js")]);
    const request = { yes: this.yes, projectRoot: this.context.cwd };
    const io = { stdout: (line: string) => this.out(`${line}\n`), warn: warnToStderr };
    if (this.builtin) {
      const workflows = [...this.sources, ...(this.workflow === undefined ? [] : [this.workflow])];
      await install({ ...request, source: "", form: "builtin", workflows }, io);
      return 0;
    }
    if (this.sources.length === 0) throw new UsageError("loopx install needs a source: loopx install [options] <source>");
    if (this.sources.length > 1) {
      throw new UsageError(`loopx install takes exactly one source, got ${this.sources.length}: ${this.sources.map((s) => JSON.stringify(s)).join(" ")}`);
    }
    const workflows = this.workflow === undefined ? [] : [this.workflow];
    await install({ ...request, source: this.sources[0]!, form: this.local ? "local" : "spec", workflows }, io);
    return 0;
  }
}
