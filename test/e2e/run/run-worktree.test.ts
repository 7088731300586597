/**
 * `loopx run --worktree`, black-box with real git: parallel runs of one workflow each
 * in a worktree of its own on loopx/<name>, the end rules, a killed run resumed in its worktree.
 * Bad inputs and `runs clean` are in run-worktree-input.test.ts.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { processAlive, waitFor } from "../../helpers.js";
import { CHANNELS, events, loopx, recordIds, startLoopx, waitForEvent, type Channel } from "../../fixtures/control/support.js";
import { commitsOn, git, gitEnv, makeRepo, treeState } from "../../fixtures/worktree.js";

// git's checkout of a worktree waits for the disk and the CPU on a loaded 2-core machine (14 s seen).
vi.setConfig({ testTimeout: 240_000 });

describe.each(CHANNELS)("loopx run --worktree ($name)", (channel: Channel) => {
  it("three --worktree runs of one workflow started together: three branches with exactly their own commits, the main tree and index untouched, listed by git while they run, named by their records and loopx runs", async () => {
    const env = gitEnv();
    const root = makeRepo(env);
    const before = treeState(root, env);
    const base = before.head.trim();
    writeFileSync(env.HOLD!, "");
    const runs = [0, 1, 2].map(() => startLoopx(channel, ["run", "-n", "2", "--worktree", "c"], root, env));
    // Each has committed its first iteration and waits: three worktrees besides the main tree.
    expect(await waitFor(() => recordIds(env).length === 3 && recordIds(env).every((id) => events(env, id).some((e) => e.type === "iteration.start")), 90_000)).toBe(true);
    expect(await waitFor(() => git(root, ["worktree", "list"], env).split("\n").filter((line) => line.includes("[loopx/")).length === 3, 90_000)).toBe(true);
    rmSync(env.HOLD!);
    const results = await Promise.all(runs.map((run) => run.result));
    for (const result of results) {
      expect(result.code).toBe(0);
      expect(result.stdout).toBe("");
      expect(result.stderr).toMatch(/^loopx: worktree kept: loopx\/[0-9a-z]+ at \S+ \(2 commits\); review: git log [0-9a-f]{12}\.\.loopx\/[0-9a-z]+\n$/);
    }
    const ids = recordIds(env).sort();
    expect(ids).toHaveLength(3);
    for (const id of ids) {
      const start = events(env, id)[0]!;
      expect(start.worktree).toMatchObject({ name: id, branch: `loopx/${id}`, base, repo: root, copied: [".loopx"] });
      expect(start.projectRoot).toBe(start.worktree.path);
      expect(start.worktree.path.startsWith(join(env.XDG_STATE_HOME!, "loopx", "worktrees"))).toBe(true);
      // Exactly its own two commits, made in its own worktree.
      expect(commitsOn(root, base, `loopx/${id}`, env)).toEqual([`${id} 1`, `${id} 2`]);
      expect(existsSync(join(start.worktree.path, "work-2.txt"))).toBe(true);
      expect(git(start.worktree.path, ["status", "--porcelain"], env)).toBe(""); // the copied .loopx/ is ignored there
    }
    const after = treeState(root, env);
    expect({ status: after.status, index: after.index, head: after.head }).toEqual({ status: before.status, index: before.index, head: before.head });
    expect(existsSync(join(root, "work-1.txt"))).toBe(false);
    // The scripts worked in their worktrees: LOOPX_PROJECT_ROOT was each one's own.
    const dirs = readFileSync(`${env.HOLD}.trace`, "utf8").trim().split("\n").map((line) => line.split(" ")[2]);
    expect(new Set(dirs).size).toBe(3);
    const listed = await loopx(channel, ["runs"], root, env);
    expect(listed.stdout).toMatch(/ BRANCH\n/);
    for (const id of ids) expect(listed.stdout).toContain(`loopx/${id}`);
    const shown = await loopx(channel, ["runs", "show", ids[0]!], root, env);
    expect(shown.stdout).toContain(`worktree loopx/${ids[0]} · ${events(env, ids[0]!)[0]!.worktree.path}\n`);
  });

  it("a run that commits and changes nothing leaves no worktree and no branch; uncommitted changes of the main tree are named in one line and not carried over", async () => {
    const env = gitEnv();
    const root = makeRepo(env);
    writeFileSync(join(root, "README"), "changed, not committed\n");
    const before = treeState(root, env);
    const result = await loopx(channel, ["run", "--worktree=quiet", "n"], root, env);
    expect(result).toMatchObject({ code: 0, stdout: "" });
    expect(result.stderr).toMatch(/^loopx: warning: uncommitted changes in \S+ \(1 file\) are not in the worktree: it starts from the last commit, [0-9a-f]{12}\n$/);
    expect(treeState(root, env)).toEqual(before);
    const [id] = recordIds(env);
    const path = events(env, id!)[0]!.worktree.path;
    expect(existsSync(path)).toBe(false);
    expect(existsSync(join(env.XDG_STATE_HOME!, "loopx", "worktrees"))).toBe(true);
    expect(git(root, ["branch", "--list", "loopx/*"], env)).toBe("");
  });

  it("kill -9 of loopx mid-run: the guardian ends the script, the worktree stays; runs resume goes on in it and the branch gets the rest of the commits", async () => {
    const env = gitEnv();
    const root = makeRepo(env);
    const before = treeState(root, env);
    const base = before.head.trim();
    writeFileSync(env.HOLD!, "");
    const run = startLoopx(channel, ["run", "-n", "3", "--worktree=k", "c"], root, env);
    expect(await waitFor(() => existsSync(`${env.HOLD}.1.pid`), 90_000)).toBe(true);
    run.child.kill("SIGKILL");
    expect((await run.result).signal).toBe("SIGKILL");
    const script = Number(readFileSync(`${env.HOLD}.1.pid`, "utf8"));
    expect(await waitFor(() => !processAlive(script), 15_000)).toBe(true);
    const id = await waitForEvent(env, (event) => event.type === "run.end" && event.reason === "killed");
    const path = events(env, id)[0]!.worktree.path;
    expect(existsSync(path)).toBe(true);
    expect(git(root, ["worktree", "list"], env)).toContain(`${path} `);
    expect(commitsOn(root, base, "loopx/k", env)).toEqual([`${id} 1`]);
    rmSync(env.HOLD!);
    const resumed = await loopx(channel, ["runs", "resume", id], root, env);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toMatch(/^loopx: worktree kept: loopx\/k at \S+ \(4 commits\); review: git log [0-9a-f]{12}\.\.loopx\/k\n$/);
    // Iteration 1 (killed while waiting, after its commit) ran again, then 2 and 3: all in the worktree.
    expect(commitsOn(root, base, "loopx/k", env)).toEqual([`${id} 1`, `${id} 1`, `${id} 2`, `${id} 3`]);
    const dirs = readFileSync(`${env.HOLD}.trace`, "utf8").trim().split("\n").map((line) => line.split(" ")[2]);
    expect(new Set(dirs)).toEqual(new Set([path]));
    const after = treeState(root, env);
    expect({ status: after.status, index: after.index, head: after.head }).toEqual({ status: before.status, index: before.index, head: before.head });
  });
});

// Many --worktree runs of one repository started at once (the binary starts fastest, so its git
// calls overlap most): git's own commands race each other — `git worktree list` fails while
// another `git worktree add` has half made its admin directory ("failed to read
// .git/worktrees/<name>/commondir"), a lock is held — and loopx waits such a race out (CI saw one
// run of three fail; eight at once failed about one round in ten).
describe("loopx run --worktree, many at once (binary)", () => {
  const binary = CHANNELS.find((channel) => channel.name === "binary")!;
  it("three rounds of eight runs started together in one repository: every run gets its worktree and its one commit", async () => {
    const env = gitEnv();
    const root = makeRepo(env);
    const base = treeState(root, env).head.trim();
    for (let round = 0; round < 3; round++) {
      const results = await Promise.all(Array.from({ length: 8 }, () => loopx(binary, ["run", "-n", "1", "--worktree", "c"], root, env)));
      for (const result of results) expect({ code: result.code, stderr: result.stderr }).toMatchObject({ code: 0, stderr: expect.stringMatching(/^loopx: worktree kept: /) });
    }
    const ids = recordIds(env);
    expect(ids).toHaveLength(24);
    for (const id of ids) expect(commitsOn(root, base, `loopx/${id}`, env)).toEqual([`${id} 1`]);
  });
});
