import type { RunEnd, RunPart } from "../core/run-part.js";
import type { WorktreeInfo } from "../core/worktree-events.js";
import { join, relative } from "node:path";
import { createWorktree, type CreatedWorktree } from "./create.js";
import { finishWorktree } from "./finish.js";
import type { Env } from "../core/env.js";

/**
 * A run's worktree, composed by the engine: made (or, for a resume, taken over) before discovery,
 * so that the run's project root is inside it; its end rules applied once when the run ends.
 */

/** RunOptions.worktree / --worktree, checked: the name (undefined: the run id) and the paths to copy. */
export interface WorktreeOption {
  name?: string;
  copy: string[];
  /** --worktree-merge: land the branch back on the branch the run started from when the run passes. */
  merge?: boolean;
}

/** A run that passed: its workflow stopped it with exit 0 (never a failed, stalled, budget, limit or stopped-from-outside one). */
function passed(end: RunEnd): boolean {
  return end.reason === "stopped" && end.exitCode === 0;
}

/** The run a worktree is made for. */
interface RunAsked {
  id: string;
  projectRoot: string;
  /** The workflow it runs (its starting target's), when known. */
  workflow?: string;
  env: Env;
  warn(message: string): void;
  notify(line: string): void;
}

/**
 * The main tree's uncommitted changes are not in the worktree; those to `.loopx/` files are named,
 * since they change what runs: the worktree runs the workflow as last committed.
 */
function uncommittedLine(made: CreatedWorktree, workflow: string | undefined): string {
  const count = made.uncommitted.length;
  const line = `uncommitted changes in ${made.info.repo} (${count} file${count === 1 ? "" : "s"}) are not in the worktree: it starts from the last commit, ${made.info.base.slice(0, 12)}`;
  const loopx = join(relative(made.info.path, made.projectRoot), ".loopx");
  const workflows = made.uncommitted.filter((path) => path.startsWith(`${loopx}/`));
  if (workflows.length === 0) return line;
  const ran = workflow !== undefined && workflows.some((path) => path.startsWith(`${loopx}/${workflow}/`));
  const shown = workflows.slice(0, 5).join(", ") + (workflows.length > 5 ? ` and ${workflows.length - 5} more` : "");
  return `${line}; among them ${shown}: ${ran ? `the workflow being run, ${workflow}, runs` : "the workflows in the worktree run"} as last committed, without these changes`;
}

export class RunWorktree {
  private finishing: Promise<void> | undefined;

  private constructor(
    readonly info: WorktreeInfo,
    /** The run's project root, inside the worktree. */
    readonly projectRoot: string,
    private readonly env: Env,
    private readonly notify: (line: string) => void,
  ) {}

  /** Makes the worktree of a new run (see create.ts); one line on `notify` if the main tree has uncommitted changes. */
  static async create(option: WorktreeOption, run: RunAsked): Promise<RunWorktree> {
    const made = await createWorktree({ projectRoot: run.projectRoot, name: option.name ?? run.id, copy: option.copy, env: run.env, merge: option.merge === true });
    if (made.uncommitted.length > 0) run.warn(uncommittedLine(made, run.workflow));
    for (const warning of made.warnings) run.warn(warning);
    return new RunWorktree(made.info, made.projectRoot, run.env, run.notify);
  }

  /** The worktree of a run that goes on (a resume): it is where the run left it. */
  static adopt(info: WorktreeInfo, projectRoot: string, env: Env, notify: (line: string) => void): RunWorktree {
    return new RunWorktree(info, projectRoot, env, notify);
  }

  /** The end rules (finish.ts), once, however many times asked (the part's end, the engine's conclusion). */
  finish(end?: RunEnd): Promise<void> {
    this.finishing ??= finishWorktree(this.info, this.env, end !== undefined && passed(end)).then(
      (line) => void (line !== undefined && this.notify(line)),
      (error: unknown) => this.notify(`worktree ${this.info.path}: ${error instanceof Error ? error.message : String(error)}`),
    );
    return this.finishing!;
  }

  /** Ends with the run: after its scripts are gone, before run.end. */
  get part(): RunPart {
    return { end: (end) => this.finish(end) };
  }
}
