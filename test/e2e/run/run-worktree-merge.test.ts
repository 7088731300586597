/**
 * `loopx run --worktree --worktree-merge` (loopx's own addition), black-box with real git under
 * node, bun and the standalone binary: runs that pass (their workflow stops them, exit 0) land
 * their branches with --no-ff merges, one after the other; a conflicting one, a dirty main tree or
 * another branch checked out leave branch and worktree with one line; a failed or stalled run
 * never merges.
 */
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { runCommand, sh, waitFor } from "../../helpers.js";
import { CHANNELS, events, recordIds, type Channel } from "../../fixtures/control/support.js";
import { git, gitEnv, makeRepo } from "../../fixtures/worktree.js";

vi.setConfig({ testTimeout: 240_000 });

/** Workflow `land`: writes $FILE (default: a file named after the run) with $TEXT, commits it, stops. `fail` commits and exits 1. */
const FILES = {
  ".loopx/land/index.sh": sh(
    [
      'cd "$LOOPX_PROJECT_ROOT"',
      'f="${FILE:-land-$LOOPX_RUN_ID.txt}"',
      'echo "${TEXT:-$LOOPX_RUN_ID}" > "$f" && git add "$f" && git commit -q -m "land $LOOPX_RUN_ID"',
      "echo '{\"stop\":true}'",
    ].join("\n"),
  ),
  ".loopx/conflict/index.sh": sh(
    ['cd "$LOOPX_PROJECT_ROOT"', "echo runs-own > README && git commit -qam conflict", 'while [ -e "$HOLD" ]; do sleep 0.05; done', "echo '{\"stop\":true}'"].join("\n"),
  ),
  ".loopx/once/index.sh": sh('cd "$LOOPX_PROJECT_ROOT" && [ "$LOOPX_ITERATION" = 1 ] && echo o > once.txt && git add once.txt && git commit -q -m once; exit 0'),
  ".loopx/fail/index.sh": sh('cd "$LOOPX_PROJECT_ROOT" && echo x > fail.txt && git add fail.txt && git commit -q -m fail && exit 1'),
};

/** loopx to its end, with room for git on a loaded 2-core machine (three worktree runs merging one after the other). */
const loopx = (channel: Channel, args: string[], cwd: string, env: Record<string, string>) =>
  runCommand(channel.argv[0]!, [...channel.argv.slice(1), ...args], { cwd, env, timeoutMs: 200_000 });

const only = (stderr: string) => stderr.split("\n").filter((line) => line.startsWith("loopx:"));
const merges = (root: string, env: Record<string, string>) => git(root, ["log", "--merges", "--format=%s", "main"], env).trim().split("\n").filter(Boolean);

describe.concurrent.each(CHANNELS)("--worktree-merge ($name)", (channel: Channel) => {
  it("three passing runs started together all land with --no-ff merges; worktrees and branches are gone", async () => {
    const env = gitEnv();
    const root = makeRepo(env, FILES);
    const results = await Promise.all([0, 1, 2].map(() => loopx(channel, ["run", "--worktree", "--worktree-merge", "land"], root, env)));
    for (const result of results) {
      expect(result.code, result.stderr).toBe(0);
      expect(only(result.stderr)).toEqual([expect.stringMatching(/^loopx: merged loopx\/[0-9a-z]+ into main \(--no-ff, [0-9a-f]{12}\)$/)]);
    }
    const ids = recordIds(env);
    expect(merges(root, env).sort()).toEqual(ids.map((id) => `Merge loopx/${id} into main (loopx run --worktree-merge)`).sort());
    for (const id of ids) {
      expect(existsSync(`${root}/land-${id}.txt`)).toBe(true);
      expect(existsSync(events(env, id)[0]!.worktree.path)).toBe(false);
      expect(git(root, ["branch", "--list", `loopx/${id}`], env)).toBe("");
      // --no-ff: the merge commit has the run's commit as its second parent.
      expect(events(env, id)[0]!.worktree.mergeInto).toBe("main");
    }
    expect(git(root, ["status", "--porcelain", "--untracked-files=no"], env)).toBe("");
  });

  it("a run whose work conflicts with main is left with its branch and worktree and one line; the main tree is as it was", async () => {
    const env = gitEnv();
    const root = makeRepo(env, FILES);
    writeFileSync(env.HOLD!, "");
    const run = { result: loopx(channel, ["run", "--worktree=c", "--worktree-merge", "conflict"], root, env) };
    const committed = () => {
      try {
        return git(root, ["rev-list", "--count", "main..loopx/c"], env).trim() === "1";
      } catch {
        return false; // the branch is not made yet
      }
    };
    expect(await waitFor(committed, 90_000)).toBe(true);
    writeFileSync(join(root, "README"), "main's own\n");
    git(root, ["commit", "-qam", "main moves"], env);
    const head = git(root, ["rev-parse", "HEAD"], env);
    rmSync(env.HOLD!);
    const result = await run.result;
    expect(result.code, result.stderr).toBe(0);
    const path = events(env, recordIds(env)[0]!)[0]!.worktree.path;
    expect(only(result.stderr)).toEqual([
      `loopx: not merged: loopx/c conflicts with main in README; loopx/c and its worktree ${path} are kept; merge by hand: git -C ${root} checkout main && git -C ${root} merge --no-ff loopx/c`,
    ]);
    expect(git(root, ["rev-parse", "HEAD"], env)).toBe(head);
    expect(git(root, ["status", "--porcelain", "--untracked-files=no"], env)).toBe("");
    expect(existsSync(join(root, ".git", "MERGE_HEAD"))).toBe(false);
    expect(existsSync(path)).toBe(true);
    expect(git(root, ["branch", "--list", "loopx/c"], env)).toContain("loopx/c");
  });

  it("a failed run and a stalled run never merge; a dirty main tree is refused with one line; a detached HEAD is refused at the start", async () => {
    const env = gitEnv();
    const root = makeRepo(env, FILES);
    const failed = await loopx(channel, ["run", "--worktree=f", "--worktree-merge", "fail"], root, env);
    expect(failed.code).toBe(1);
    expect(only(failed.stderr)).toContainEqual(expect.stringMatching(/^loopx: worktree kept: loopx\/f at \S+ \(1 commit\); review: /));
    const stalled = await loopx(channel, ["run", "--worktree=s", "--worktree-merge", "--stall-after", "1", "once"], root, env);
    expect(stalled.code, stalled.stderr).toBe(5);
    expect(only(stalled.stderr)).toContainEqual(expect.stringMatching(/^loopx: worktree kept: loopx\/s at \S+ \(1 commit\); review: /));
    expect(merges(root, env)).toEqual([]);
    writeFileSync(join(root, "README"), "uncommitted\n");
    const dirty = await loopx(channel, ["run", "--worktree=d", "--worktree-merge", "land"], root, env);
    expect(dirty.code, dirty.stderr).toBe(0);
    expect(only(dirty.stderr).at(-1)).toMatch(new RegExp(`^loopx: not merged: ${root} has uncommitted changes \\(1 file\\); loopx/d and its worktree \\S+ are kept; merge by hand: `));
    expect(merges(root, env)).toEqual([]);
    git(root, ["checkout", "-q", "--", "README"], env);
    git(root, ["checkout", "-q", "--detach"], env);
    const detached = await loopx(channel, ["run", "--worktree=x", "--worktree-merge", "land"], root, env);
    expect(detached.code).toBe(1);
    expect(only(detached.stderr)).toEqual([`loopx: --worktree-merge needs a branch to merge into: ${root} is on a detached HEAD`]);
    const alone = await loopx(channel, ["run", "--worktree-merge", "land"], root, env);
    expect(alone.code).toBe(1);
    expect(only(alone.stderr)).toEqual(["loopx: --worktree-merge needs --worktree"]);
  });
});
