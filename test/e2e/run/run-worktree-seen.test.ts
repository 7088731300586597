/**
 * What a --worktree run lacks or must not commit, said and done (node: the code is the same on
 * every channel): the copies loopx makes are ignored in that worktree only (the user's global
 * excludes still apply there, the main tree's ignore files are untouched; a tracked path named by
 * --worktree-copy stays committable); submodules the worktree comes up without are named; changes
 * to tracked `.loopx/` files that the worktree runs without are named; the same-workflow warning
 * outside git does not suggest --worktree.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { makeProject, sh, tempDir, waitFor, warnings } from "../../helpers.js";
import { CHANNELS, events, loopx, recordIds, startLoopx } from "../../fixtures/control/support.js";
import { git, gitEnv, makeRepo } from "../../fixtures/worktree.js";

const NODE_CHANNEL = CHANNELS.find((channel) => channel.name === "node")!;

// git's checkout of a worktree waits for the disk and the CPU on a loaded 2-core machine.
vi.setConfig({ testTimeout: 240_000 });

/**
 * Workflow `add`: writes work.txt and out.tmp (which the user's global excludes ignore), then commits
 * everything with `git add -A`, as an agent told to "commit all changes" does.
 */
const ADD_ALL = sh(['cd "$LOOPX_PROJECT_ROOT"', "echo work > work.txt; echo build > out.tmp", 'git add -A && git commit -q -m "all of it"', "echo '{\"stop\":true}'"].join("\n"));

describe("loopx run --worktree: what it copies, lacks and runs without", () => {
  it("git add -A in the worktree commits none of the copies (.loopx/ with its node_modules link, an untracked --worktree-copy path), but a tracked one named by --worktree-copy and the user's global excludes still apply; the main tree's ignore files are untouched", async () => {
    const env = gitEnv();
    const root = makeRepo(env, {
      ".loopx/add/index.sh": ADD_ALL,
      ".loopx/add/node_modules/dep/index.js": "module.exports = 1;\n",
      "notes/todo.md": "untracked notes\n",
      "docs/guide.md": "changed, not committed\n",
    });
    git(root, ["add", "docs/guide.md"], env);
    git(root, ["commit", "-q", "-m", "docs"], env);
    writeFileSync(join(root, "docs", "guide.md"), "changed, not committed\n\nmore\n");
    mkdirSync(join(env.XDG_CONFIG_HOME!, "git"), { recursive: true });
    writeFileSync(join(env.XDG_CONFIG_HOME!, "git", "ignore"), "*.tmp\n");
    const ignoreBefore = readFileSync(join(root, ".git", "info", "exclude"), "utf8");

    const result = await loopx(NODE_CHANNEL, ["run", "--worktree=all", "--worktree-copy", "notes", "--worktree-copy", "docs", "add"], root, env);
    expect(result.code, result.stderr).toBe(0);
    const committed = git(root, ["diff", "--name-only", "main...loopx/all"], env);
    expect(committed).toBe("docs/guide.md\nwork.txt\n");
    const path = events(env, recordIds(env)[0]!)[0]!.worktree.path;
    expect(git(path, ["status", "--porcelain", "--ignored"], env).split("\n").filter(Boolean).sort()).toEqual(["!! .loopx/", "!! notes/", "!! out.tmp"]);
    // In the main tree nothing is ignored that was not before.
    expect(readFileSync(join(root, ".git", "info", "exclude"), "utf8")).toBe(ignoreBefore);
    expect(existsSync(join(root, ".gitignore"))).toBe(false);
    expect(git(root, ["status", "--porcelain"], env)).toMatch(/^\?\? \.loopx\/$/m);
    expect(git(root, ["status", "--porcelain"], env)).toMatch(/^\?\? notes\/$/m);
  });

  it("a submodule checked out in the main tree comes up empty in the worktree: one line names it and how to get it", async () => {
    const env = gitEnv({ GIT_ALLOW_PROTOCOL: "file" });
    const library = makeRepo(env);
    const root = makeRepo(env);
    git(root, ["-c", "protocol.file.allow=always", "submodule", "add", "-q", library, "vendor/lib"], env);
    git(root, ["commit", "-q", "-m", "submodule"], env);
    const result = await loopx(NODE_CHANNEL, ["run", "--worktree=sub", "n"], root, env);
    expect(result.code, result.stderr).toBe(0);
    const path = join(env.XDG_STATE_HOME!, "loopx", "worktrees");
    expect(warnings(result.stderr)).toEqual([expect.stringMatching(new RegExp(`^loopx: warning: submodules are not checked out in the worktree \\(vendor/lib\\): git -C ${path}/\\S+/sub submodule update --init gets them$`))]);
  });

  it("a modified tracked workflow script is not what runs in the worktree: the warning names it as the workflow being run", async () => {
    const env = gitEnv();
    const root = makeRepo(env, { ".loopx/tracked/index.sh": sh("echo committed > \"$HOLD.ran\"; echo '{\"stop\":true}'") });
    git(root, ["add", ".loopx/tracked"], env);
    git(root, ["commit", "-q", "-m", "workflow"], env);
    writeFileSync(join(root, ".loopx", "tracked", "index.sh"), sh("echo edited > \"$HOLD.ran\"; echo '{\"stop\":true}'"));
    const result = await loopx(NODE_CHANNEL, ["run", "--worktree=edited", "tracked"], root, env);
    expect(result.code, result.stderr).toBe(0);
    expect(readFileSync(`${env.HOLD}.ran`, "utf8")).toBe("committed\n");
    expect(warnings(result.stderr)).toEqual([
      expect.stringMatching(
        /^loopx: warning: uncommitted changes in \S+ \(1 file\) are not in the worktree: it starts from the last commit, [0-9a-f]{12}; among them \.loopx\/tracked\/index\.sh: the workflow being run, tracked, runs as last committed, without these changes$/,
      ),
    ]);
  });

  it("two plain runs of one workflow outside git: the warning does not suggest --worktree, which needs git", async () => {
    const env = gitEnv();
    const root = makeProject({
      ".loopx/w/index.sh": sh('echo $$ > "$HOLD.$LOOPX_RUN_ID"; while [ -e "$HOLD" ]; do sleep 0.05; done; echo \'{"stop":true}\''),
    }, tempDir("loopx-nogit-"));
    writeFileSync(env.HOLD!, "");
    const first = startLoopx(NODE_CHANNEL, ["run", "w"], root, env);
    expect(await waitFor(() => recordIds(env).length === 1 && existsSync(`${env.HOLD}.${recordIds(env)[0]}`), 60_000)).toBe(true);
    const firstId = recordIds(env)[0]!;
    const second = startLoopx(NODE_CHANNEL, ["run", "w"], root, env);
    // Released only once the second run's script runs: its look for other runs (when it begins)
    // is done by then, while the first is still held (a loaded machine raced the two before).
    expect(await waitFor(() => recordIds(env).length === 2 && recordIds(env).every((id) => existsSync(`${env.HOLD}.${id}`)), 60_000)).toBe(true);
    rmSync(env.HOLD!);
    const [one, two] = await Promise.all([first.result, second.result]);
    expect(one.code).toBe(0);
    expect(two.code).toBe(0);
    expect(two.stderr).toBe(`loopx: warning: run ${firstId} (pid ${events(env, firstId)[0]!.pid}) of workflow w is working in this tree too: both share its files\n`);
  });
});
