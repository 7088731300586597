import { existsSync, realpathSync } from "node:fs";
import type { RecordEvent } from "../core/events.js";
import type { WorktreeInfo } from "../core/worktree-events.js";
import { parseRecord, recordEvent } from "../records/parse.js";
import { projectOf } from "../records/run-state.js";
import { listRecordIds, readRecordEnds, readRecordHead, recordsDir, liveSitting } from "../records/store.js";
import { describeWork, removeWorktree, worktreeState } from "./finish.js";
import { git } from "./git.js";
import type { Env } from "../core/env.js";

/**
 * `loopx runs clean` (loopx's own addition): the worktrees that ended runs kept (they had commits
 * or changes, or the run died), found through the run records. Each is removed with its branch,
 * unless its run is live (never), or its branch has commits its repository's HEAD does not
 * contain, or it holds uncommitted changes (only with --force).
 */

export interface CleanOptions {
  force: boolean;
  dryRun: boolean;
  all: boolean;
  cwd: string;
}

interface Found {
  id: string;
  info: WorktreeInfo;
  live: boolean;
}

function samePath(a: string, b: string): boolean {
  try {
    return a === b || realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

/** The recorded worktrees that still exist, one per path (the newest record naming it). */
function recordedWorktrees(dir: string, options: CleanOptions): Found[] {
  const found = new Map<string, Found>();
  for (const id of listRecordIds(dir)) {
    const head = readRecordHead(dir, id);
    if (head === undefined || !head.includes('"worktree"')) continue;
    let start: RecordEvent | number | undefined;
    try {
      start = recordEvent(JSON.parse(head));
    } catch {
      continue;
    }
    if (typeof start !== "object" || start.type !== "run.start" || !start.worktree || found.has(start.worktree.path)) continue;
    if (!existsSync(start.worktree.path) || (!options.all && !samePath(projectOf(start), options.cwd))) continue;
    let events: RecordEvent[] = [];
    try {
      events = parseRecord(readRecordEnds(dir, id)).events;
    } catch {
      // Unreadable now: counted as live, never removed.
    }
    const live = events.length === 0 || liveSitting(events) !== undefined;
    found.set(start.worktree.path, { id, info: start.worktree, live });
  }
  return [...found.values()];
}

/** Commits of the worktree's branch that its repository's HEAD does not contain (undefined: unknown). */
async function unmerged(info: WorktreeInfo, env: Env): Promise<number | undefined> {
  const from = existsSync(info.repo) ? info.repo : info.path;
  const count = await git(from, ["rev-list", "--count", `HEAD..refs/heads/${info.branch}`], env);
  return count.code === 0 ? Number(count.stdout.trim()) : undefined;
}

async function cleanOne(found: Found, env: Env, options: CleanOptions): Promise<string> {
  const { info } = found;
  const where = `${info.branch}  ${info.path}  (run ${found.id})`;
  if (found.live) return `kept     ${where}: its run is live`;
  const [state, ahead] = await Promise.all([worktreeState(info, env), unmerged(info, env)]);
  const reasons = [
    ...(ahead === undefined ? ["its branch cannot be read"] : ahead > 0 ? [`${ahead} unmerged commit${ahead === 1 ? "" : "s"}`] : []),
    ...(state.changes > 0 ? [`${state.changes} uncommitted change${state.changes === 1 ? "" : "s"}`] : []),
  ];
  if (reasons.length > 0 && !options.force) return `kept     ${where}: ${reasons.join(", ")} (--force removes it)`;
  if (options.dryRun) return `would remove ${where}: ${reasons.length > 0 ? reasons.join(", ") : describeWork(state)}`;
  return (await removeWorktree(info, env)) ? `removed  ${where}` : `failed   ${where}: git worktree remove failed (git worktree remove --force ${info.path})`;
}

/** Lists and removes; returns the exit code (1 when a removal failed). */
export async function cleanWorktrees(env: Env, options: CleanOptions, write: (text: string) => void): Promise<number> {
  const found = recordedWorktrees(recordsDir(env), options);
  if (found.length === 0) {
    write(`no worktrees of runs${options.all ? "" : ` of ${options.cwd}`} to clean${options.all ? "" : " (--all: every project's)"}\n`);
    return 0;
  }
  let failed = false;
  for (const one of found) {
    const line = await cleanOne(one, env, options);
    failed ||= line.startsWith("failed");
    write(`${line}\n`);
  }
  return failed ? 1 : 0;
}
