/**
 * `loopx run --worktree`: each bad input is one line, exit 1, and leaves git as it was
 * (every channel: the git calls and their errors go through each runtime's child_process); the
 * same-workflow warning, --worktree-copy and `loopx runs clean` (node: the code is the same on every
 * channel and spawns nothing that differs).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { RUNTIMES, consumer, expectOneLineError, makeProject, runConsumer, sh, tempDir, waitFor, warnings } from "../../helpers.js";
import { CHANNELS, events, loopx, recordIds, startLoopx, type Channel } from "../../fixtures/control/support.js";
import { git, gitEnv, makeRepo, treeState } from "../../fixtures/worktree.js";

const NODE_CHANNEL = CHANNELS.find((channel) => channel.name === "node")!;

// git's checkout of a worktree waits for the disk and the CPU on a loaded 2-core machine (14 s seen).
vi.setConfig({ testTimeout: 240_000 });

describe.each(CHANNELS)("loopx run --worktree, bad input ($name)", (channel: Channel) => {
  it("not a repository, no commit yet, git missing from PATH: one line, exit 1, nothing made", async () => {
    const env = gitEnv();
    const plain = makeProject({ ".loopx/n/index.sh": sh("echo '{\"stop\":true}'") });
    expectOneLineError(await loopx(channel, ["run", "--worktree", "n"], plain, env), `--worktree needs a git repository: ${plain} is not in one`);
    git(plain, ["init", "-q"], env);
    expectOneLineError(await loopx(channel, ["run", "--worktree", "n"], plain, env), "--worktree needs a commit to start from");
    const root = makeRepo(env);
    const before = treeState(root, env);
    // PATH without git (bash is found by its absolute path in the scripts' shebang; none runs).
    const bin = tempDir("loopx-nogit-");
    expectOneLineError(await loopx(channel, ["run", "--worktree", "n"], root, { ...env, PATH: bin }), "--worktree needs git, and git is not on PATH");
    expect(treeState(root, env)).toEqual(before);
    expect(existsSync(join(env.XDG_STATE_HOME!, "loopx", "worktrees"))).toBe(false);
  });

  it("a name used by a branch or a kept worktree, an invalid name, a place that cannot be made, a missing --worktree-copy path: one line, exit 1, git worktree list and git branch unchanged", async () => {
    const env = gitEnv();
    const root = makeRepo(env);
    git(root, ["branch", "loopx/taken"], env);
    // A kept worktree of that name (its run committed), then the same name again.
    expect((await loopx(channel, ["run", "-n", "1", "--worktree=dup", "c"], root, env)).code).toBe(0);
    const before = treeState(root, env);
    expectOneLineError(await loopx(channel, ["run", "--worktree=taken", "n"], root, env), "branch loopx/taken already exists");
    expectOneLineError(await loopx(channel, ["run", "--worktree=dup", "n"], root, env), "branch loopx/dup already exists");
    expectOneLineError(await loopx(channel, ["run", "--worktree=a/b", "n"], root, env), 'invalid worktree name "a/b"');
    expectOneLineError(await loopx(channel, ["run", "--worktree=-x", "n"], root, env), 'invalid worktree name "-x"');
    expectOneLineError(await loopx(channel, ["run", "--worktree", "--worktree-copy", "nope.txt", "n"], root, env), "--worktree-copy nope.txt:");
    const file = join(tempDir(), "a-file");
    writeFileSync(file, "");
    expectOneLineError(await loopx(channel, ["run", "--worktree", "n"], root, { ...env, XDG_STATE_HOME: file }), `--worktree: cannot create ${file}/loopx/worktrees/`, "not a directory");
    expect(treeState(root, env)).toEqual(before);
  });
});

describe("loopx run --worktree (node)", () => {
  const channel = NODE_CHANNEL;

  it("a failure half-way (a copy that fails once the worktree is checked out) is undone: no branch, directory or registration left", async () => {
    const env = gitEnv();
    const root = makeRepo(env);
    // README is a file in HEAD and a directory here: README/x.md cannot be copied into the worktree.
    rmSync(join(root, "README"));
    mkdirSync(join(root, "README"));
    writeFileSync(join(root, "README", "x.md"), "x\n");
    const before = treeState(root, env);
    const result = await loopx(channel, ["run", "--worktree=half", "--worktree-copy", "README/x.md", "n"], root, env);
    expectOneLineError(result, "--worktree-copy: cannot copy README/x.md into");
    expect(treeState(root, env)).toEqual(before);
    expect(existsSync(join(env.XDG_STATE_HOME!, "loopx", "worktrees"))).toBe(false);
  });

  it("--worktree-copy: named untracked paths are copied (not counted as changes), node_modules of .loopx/ is a link; --worktree-copy without --worktree is refused", async () => {
    const env = gitEnv();
    const root = makeRepo(env, {
      "specs/one.md": "spec one\n",
      ".loopx/n/node_modules/dep/index.js": "module.exports = 1;\n",
      ".loopx/look/index.sh": sh('cd "$LOOPX_PROJECT_ROOT"; cat specs/one.md > "$HOLD.seen"; [ -L .loopx/n/node_modules ] && echo link >> "$HOLD.seen"; echo \'{"stop":true}\''),
    });
    const before = treeState(root, env);
    const result = await loopx(channel, ["run", "--worktree", "--worktree-copy", "specs", "look"], root, env);
    expect(result).toMatchObject({ code: 0, stdout: "", stderr: "" });
    expect(readFileSync(`${env.HOLD}.seen`, "utf8")).toBe("spec one\nlink\n");
    expect(treeState(root, env)).toEqual(before);
    expect(events(env, recordIds(env)[0]!)[0]!.worktree.copied).toEqual([".loopx", "specs"]);
    expectOneLineError(await loopx(channel, ["run", "--worktree-copy", "specs", "look"], root, env), "--worktree-copy needs --worktree");
  });

  it("two plain runs of one workflow in one tree: the second warns in one line naming the first and records it; never with --worktree, nor for another workflow", async () => {
    const env = gitEnv();
    const root = makeRepo(env, { ".loopx/other/index.sh": sh("echo '{\"stop\":true}'") });
    writeFileSync(env.HOLD!, "");
    const first = startLoopx(channel, ["run", "-n", "1", "c"], root, env);
    expect(await waitFor(() => existsSync(`${env.HOLD}.1.pid`), 90_000)).toBe(true);
    const firstId = recordIds(env)[0]!;
    const plain = await loopx(channel, ["run", "-n", "0", "c"], root, env);
    expect(plain).toMatchObject({ code: 0, stderr: "" }); // -n 0 only validates: no run begins
    const second = await loopx(channel, ["run", "-n", "1", "n"], root, env);
    expect(second).toMatchObject({ code: 0, stderr: "" }); // another workflow
    const withWorktree = await loopx(channel, ["run", "--worktree", "--worktree-copy", "README", "-n", "1", "c"], root, { ...env, HOLD: join(tempDir(), "h") });
    expect(warnings(withWorktree.stderr)).toEqual([]);
    const again = startLoopx(channel, ["run", "-n", "1", "c"], root, { ...env, HOLD: join(tempDir(), "h2") });
    const warned = await again.result;
    expect(warned.code).toBe(0);
    expect(warned.stderr).toBe(`loopx: warning: run ${firstId} (pid ${events(env, firstId)[0]!.pid}) of workflow c is working in this tree too: both share its files and git index; run each with --worktree\n`);
    rmSync(env.HOLD!);
    expect((await first.result).code).toBe(0);
    const shared = recordIds(env).flatMap((id) => events(env, id)).filter((event) => event.type === "tree.shared");
    expect(shared).toEqual([expect.objectContaining({ other: firstId, workflow: "c", pid: events(env, firstId)[0]!.pid })]);
  });

  it("loopx runs clean: a kept worktree with unmerged commits stays without --force and goes with it; a live run's never", async () => {
    const env = gitEnv();
    const root = makeRepo(env);
    const kept = await loopx(channel, ["run", "-n", "1", "--worktree=done", "c"], root, env);
    expect(kept.code).toBe(0);
    rmSync(`${env.HOLD}.1.pid`);
    writeFileSync(env.HOLD!, "");
    const live = startLoopx(channel, ["run", "-n", "1", "--worktree=live", "c"], root, env);
    expect(await waitFor(() => existsSync(`${env.HOLD}.1.pid`), 90_000)).toBe(true);
    const dry = await loopx(channel, ["runs", "clean"], root, env);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/^kept +loopx\/live .*: its run is live$/m);
    expect(dry.stdout).toMatch(/^kept +loopx\/done .*: 1 unmerged commit \(--force removes it\)$/m);
    // What it did, then a summary line (a real clean's lines are not the dry run's).
    expect(dry.stdout.split("\n").at(-2)).toBe("removed 0 worktrees and their branches, kept 2");
    const preview = await loopx(channel, ["runs", "clean", "--force", "--dry-run"], root, env);
    expect(preview.stdout).toMatch(/^would remove loopx\/done .*: 1 unmerged commit$/m);
    expect(preview.stdout).toMatch(/^would keep loopx\/live .*: its run is live$/m);
    expect(preview.stdout.split("\n").at(-2)).toBe("would remove 1 worktree and its branch, keep 1 (--dry-run: nothing was removed)");
    const forced = await loopx(channel, ["runs", "clean", "--force"], root, env);
    expect(forced.stdout).toMatch(/^removed +loopx\/done /m);
    expect(forced.stdout).toMatch(/^kept +loopx\/live .*: its run is live$/m);
    expect(forced.stdout.split("\n").at(-2)).toBe("removed 1 worktree and its branch, kept 1");
    expect(git(root, ["branch", "--list", "loopx/*"], env)).toBe("+ loopx/live\n");
    rmSync(env.HOLD!);
    expect((await live.result).code).toBe(0);
    // Merged into main: removed without --force.
    git(root, ["merge", "-q", "--ff-only", "loopx/live"], env);
    const merged = await loopx(channel, ["runs", "clean"], root, env);
    expect(merged.stdout).toMatch(/^removed +loopx\/live /m);
    expect(merged.stdout.split("\n").at(-2)).toBe("removed 1 worktree and its branch, kept 0");
    expect(git(root, ["worktree", "list"], env).trim().split("\n")).toHaveLength(1);
  });

  it("the API: run(target, { worktree, worktreeCopy }) works in loopx/<name>, recorded in run.start; a bad worktree option rejects naming it", async () => {
    const env = gitEnv();
    const root = makeRepo(env);
    const before = treeState(root, env);
    const dir = consumer(`import { runPromise } from "loopx";
const outputs = await runPromise("c", { cwd: ${JSON.stringify(root)}, maxIterations: 1, record: true, worktree: "api", worktreeCopy: ["README"] });
let refused = "";
try { await runPromise("c", { cwd: ${JSON.stringify(root)}, worktree: 7 }); } catch (error) { refused = error.message; }
console.log(JSON.stringify({ outputs, refused }));`);
    const result = await runConsumer(RUNTIMES[0]!, dir, { env });
    expect(result.json).toEqual({ outputs: [{ result: "ok" }], refused: "worktree must be true or a name, got 7" });
    expect(result.stderr).toMatch(/^loopx: worktree kept: loopx\/api at \S+ \(1 commit\); review: git log [0-9a-f]{12}\.\.loopx\/api\n$/);
    const start = events(env, recordIds(env)[0]!)[0]!;
    expect(start.worktree).toMatchObject({ name: "api", branch: "loopx/api", copied: [".loopx", "README"] });
    expect(git(root, ["log", "--format=%s", "main..loopx/api"], env)).toBe(`${start.run} 1\n`);
    const after = treeState(root, env);
    expect({ status: after.status, index: after.index, head: after.head }).toEqual({ status: before.status, index: before.index, head: before.head });
  });
});
