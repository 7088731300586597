import { stderrLine, warnToStderr } from "../os/stderr.js";
import { RunWorktree } from "../worktree/part.js";
import type { RunPlan } from "./plan.js";

/**
 * A run's own git worktree (--worktree, RunOptions.worktree; src/worktree/): asked for, it is made
 * on the first `next()` (`create`), before the session and the loop exist, since they run in its
 * project root; a resumed --worktree run goes on in the worktree it had (`adopted`). Neither: the
 * run works in the project's own tree and nothing of this is loaded beyond the module.
 */
export function worktreeStart(plan: RunPlan, id: string): { create?: () => Promise<RunWorktree>; adopted?: RunWorktree } {
  const notify = (line: string) => stderrLine(`loopx: ${line}`);
  const asked = plan.options.worktree;
  const workflow = typeof plan.target === "string" ? plan.target.split(":")[0] : undefined;
  if (asked) return { create: () => RunWorktree.create(asked, { id, projectRoot: plan.projectRoot, workflow, env: plan.baseEnv, warn: warnToStderr, notify }) };
  return plan.resume?.worktree ? { adopted: RunWorktree.adopt(plan.resume.worktree, plan.projectRoot, plan.baseEnv, notify) } : {};
}
