import { Command } from "clipanion";
import { LoopxCommand } from "../context.js";
import { inlineFlag } from "../declare.js";

/** `loopx runs clean [--force] [--dry-run] [--all]`: removes the worktrees ended runs kept (loopx's own addition). */
export class RunsCleanCommand extends LoopxCommand {
  static override paths = [["runs", "clean"]];
  static override usage = Command.Usage({
    description: "Remove the worktrees (and loopx/ branches) that ended --worktree\nruns kept; never a live run's, nor unmerged work without --force",
    examples: [
      ["what would be removed, and what kept and why", "$0 runs clean --dry-run"],
      ["remove this project's merged ones", "$0 runs clean"],
    ],
  });
  force = inlineFlag("--force", "Remove unmerged commits and uncommitted changes too");
  dryRun = inlineFlag("--dry-run", "Only list what it would remove and keep");
  all = inlineFlag("--all", "Every project's, not only this directory's");

  async execute(): Promise<number> {
    const { cleanWorktrees } = await import("../../worktree/clean.js");
    return cleanWorktrees(this.context.env, { force: this.force, dryRun: this.dryRun, all: this.all, cwd: this.context.cwd }, (text) => this.out(text));
  }
}
