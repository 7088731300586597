import { Command, Option } from "clipanion";

/** `loopx runs clean [--force] [--dry-run] [--all]`: removes the worktrees ended runs kept (loopx's own addition). */
export class RunsCleanCommand extends Command {
  static override paths = [["runs", "clean"]];
  static override usage = Command.Usage({
    description: "Remove the worktrees (and loopx/ branches) that ended --worktree\nruns kept; never a live run's, nor unmerged work without --force",
  });
  force = Option.Boolean("--force", false);
  dryRun = Option.Boolean("--dry-run", false);
  all = Option.Boolean("--all", false);

  async execute(): Promise<number> {
    const { cleanWorktrees } = await import("../../worktree/clean.js");
    return cleanWorktrees(process.env, { force: this.force, dryRun: this.dryRun, all: this.all, cwd: process.cwd() }, (text) => void process.stdout.write(text));
  }
}
