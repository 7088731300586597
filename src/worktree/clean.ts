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

type Outcome = "kept" | "removed" | "failed";

async function cleanOne(found: Found, env: Env, options: CleanOptions): Promise<{ outcome: Outcome; line: string }> {
  const { info } = found;
  const where = `${info.branch}  ${info.path}  (run ${found.id})`;
  // A dry run says what it would do; a real one what it did.
  const keep = options.dryRun ? "would keep" : "kept    ";
  if (found.live) return { outcome: "kept", line: `${keep} ${where}: its run is live` };
  const [state, ahead] = await Promise.all([worktreeState(info, env), unmerged(info, env)]);
  const reasons = [
    ...(ahead === undefined ? ["its branch cannot be read"] : ahead > 0 ? [`${ahead} unmerged commit${ahead === 1 ? "" : "s"}`] : []),
    ...(state.changes > 0 ? [`${state.changes} uncommitted change${state.changes === 1 ? "" : "s"}`] : []),
  ];
  if (reasons.length > 0 && !options.force) return { outcome: "kept", line: `${keep} ${where}: ${reasons.join(", ")} (--force removes it)` };
  if (options.dryRun) return { outcome: "removed", line: `would remove ${where}: ${reasons.length > 0 ? reasons.join(", ") : describeWork(state)}` };
  if (await removeWorktree(info, env)) return { outcome: "removed", line: `removed  ${where}` };
  return { outcome: "failed", line: `failed   ${where}: git worktree remove failed (git worktree remove --force ${info.path})` };
}

/** The last line: how many were removed (or would be), kept and failed. */
function summaryLine(counts: Record<Outcome, number>, dryRun: boolean): string {
  const removed = counts.removed === 1 ? "1 worktree and its branch" : `${counts.removed} worktrees and their branches`;
  const parts = dryRun ? [`would remove ${removed}`, `keep ${counts.kept}`] : [`removed ${removed}`, `kept ${counts.kept}`];
  if (counts.failed > 0) parts.push(`failed to remove ${counts.failed}`);
  return `${parts.join(", ")}${dryRun ? " (--dry-run: nothing was removed)" : ""}`;
}

/** Lists and removes; returns the exit code (1 when a removal failed). */
export async function cleanWorktrees(env: Env, options: CleanOptions, write: (text: string) => void): Promise<number> {
  const found = recordedWorktrees(recordsDir(env), options);
  if (found.length === 0) {
    write(`no worktrees of runs${options.all ? "" : ` of ${options.cwd}`} to clean${options.all ? "" : " (--all: every project's)"}\n`);
    return 0;
  }
  const counts: Record<Outcome, number> = { kept: 0, removed: 0, failed: 0 };
  for (const one of found) {
    const { outcome, line } = await cleanOne(one, env, options);
    counts[outcome]++;
    write(`${line}\n`);
  }
  write(`${summaryLine(counts, options.dryRun)}\n`);
  return counts.failed > 0 ? 1 : 0;
}
