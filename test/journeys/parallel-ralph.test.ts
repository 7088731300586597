/**
 * Journey: three Ralph loops side by side, then merged — the README's recipe as a user types it,
 * with the standalone binary. `loopx install --builtin ralph`, the workflow's dependencies
 * installed in .loopx/ralph (node_modules), one untracked prompt per spec; three
 * `loopx run --worktree=<spec> --worktree-copy prompts --worktree-copy specs ralph:prompt` at once,
 * whose agent (a fake `claude`) does what ralph's prompt asks, `git add -A && git commit`; then
 * `git merge loopx/<spec>` for each in the main tree, and `loopx runs clean`. Each branch holds
 * only its own work: none of what loopx copied into its worktree (.loopx/ with its absolute
 * node_modules link, prompts/, specs/), so every merge is clean.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { runCommand } from "../helpers.js";
import { FakeAgents, claudeStream } from "../fixtures/agents/support.js";
import { binaryInstalled, fakeClaude, freshProject, git, userEnv } from "./support.js";

const SPECS = ["auth", "search", "export"];

// Whole journeys (installs, loops, agent calls) on a loaded 2-core machine.
vi.setConfig({ testTimeout: 240_000 });

/** What the fake agent does in its worktree: its own file for its spec, then what ralph's prompt asks (commit all changes). */
const AGENT_WORK = [
  'spec="$(git rev-parse --abbrev-ref HEAD)"; spec="${spec#loopx/}"',
  'mkdir -p src && echo "the $spec feature" > "src/$spec.txt"',
  'git add -A && git commit -q -m "$spec: done"',
].join("\n");

describe("journey: three parallel Ralph loops → merged", () => {
  it("standalone binary: three --worktree loops commit with git add -A, and all three branches merge cleanly, each holding only its own work", async () => {
    const agents = new FakeAgents().step("default", { out: claudeStream("Implemented it.\n<promise>COMPLETE</promise>", { cost: 0.01 }), run: AGENT_WORK });
    const env = userEnv([binaryInstalled(), fakeClaude(agents)]);
    const files: Record<string, string> = {};
    for (const spec of SPECS) {
      files[`prompts/${spec}.md`] = `Implement specs/${spec}.md, commit all changes, then print <promise>COMPLETE</promise>.\n`;
      files[`specs/${spec}.md`] = `The ${spec} feature.\n`;
    }
    const project = freshProject(env, files);
    const loopx = (args: string[], extra: Record<string, string> = {}) => runCommand("loopx", args, { cwd: project, env: { ...env, ...extra }, timeoutMs: 180_000 });

    expect((await loopx(["install", "--builtin", "ralph"])).code).toBe(0);
    // `npm install` in the workflow's directory (the README's step for a workflow with dependencies).
    mkdirSync(join(project, ".loopx", "ralph", "node_modules", "dep"), { recursive: true });
    writeFileSync(join(project, ".loopx", "ralph", "node_modules", "dep", "index.js"), "export {};\n");
    const excludeBefore = readFileSync(join(project, ".git", "info", "exclude"), "utf8");
    const statusBefore = git(project, ["status", "--porcelain"], env);

    const runs = await Promise.all(
      SPECS.map((spec) =>
        loopx(["run", `--worktree=${spec}`, "--worktree-copy", "prompts", "--worktree-copy", "specs", "ralph:prompt"], { RALPH_PROMPT_FILE: `prompts/${spec}.md` }),
      ),
    );
    for (const [index, run] of runs.entries()) {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toMatch(new RegExp(`\\nloopx: worktree kept: loopx/${SPECS[index]} at \\S+ \\(1 commit\\); review: `));
    }
    for (const spec of SPECS) {
      // Only its own work: not .loopx/ (nor its node_modules link), prompts/ or specs/.
      expect(git(project, ["diff", "--name-only", `main...loopx/${spec}`], env)).toBe(`src/${spec}.txt\n`);
    }

    for (const spec of SPECS) git(project, ["merge", "-q", "--no-edit", `loopx/${spec}`], env);
    expect(git(project, ["ls-tree", "-r", "--name-only", "HEAD"], env).split("\n").filter(Boolean).sort()).toEqual(["README.md", "src/auth.txt", "src/export.txt", "src/search.txt"]);
    // The main tree's own untracked files and its ignore rules are as they were.
    expect(git(project, ["status", "--porcelain"], env)).toBe(statusBefore);
    expect(readFileSync(join(project, ".git", "info", "exclude"), "utf8")).toBe(excludeBefore);
    expect(existsSync(join(project, ".gitignore"))).toBe(false);

    const cleaned = await loopx(["runs", "clean"]);
    expect(cleaned.code, cleaned.stderr).toBe(0);
    expect(git(project, ["worktree", "list", "--porcelain"], env).match(/^worktree /gm)).toHaveLength(1);
    expect(git(project, ["branch", "--list", "loopx/*"], env)).toBe("");
  });
});
