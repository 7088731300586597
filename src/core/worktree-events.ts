/**
 * What `run.start` records of a run's own git worktree (`loopx run --worktree`, loopx's own
 * addition; src/worktree/), beside the event schema (events.ts). Types only.
 */

/** A run's own git worktree (`loopx run --worktree`, RunOptions.worktree; src/worktree/). */
export interface WorktreeInfo {
  /** The worktree's name: `--worktree=<name>`, or the run id. */
  name: string;
  /** Its branch, `loopx/<name>`. */
  branch: string;
  /** The worktree's top directory (absolute). */
  path: string;
  /** The commit it was made from (the project's HEAD then). */
  base: string;
  /** The top directory of the working tree it was made from. */
  repo: string;
  /** Paths (relative to the worktree's top) copied in from that tree: `.loopx/` and --worktree-copy. */
  copied: string[];
  /**
   * `--worktree-merge`: the branch the main tree had checked out when the run started; the run's
   * branch is merged into it (`--no-ff`) when the run ends by its workflow's stop (worktree/merge.ts).
   */
  mergeInto?: string;
}
