/**
 * Journey: from `npm i -g loopx` (or the downloaded binary) to a Ralph loop that completes. A user
 * installs loopx, makes a git project, gets the shipped ralph with the one documented command
 * (`loopx install --builtin ralph`: no clone of loopx, no build, no URL), writes a spec and runs
 * `loopx run ralph:plan` against `claude` (here a fake on PATH speaking Claude Code's stream-json)
 * until it prints <promise>COMPLETE</promise>. Under node and bun from the npm package (whose
 * tarball carries dist/workflows.tar.gz), and as the standalone binary, which embeds the workflows
 * and runs with neither node nor bun on PATH.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { BUN, NODE, runCommand, snapshotTree, tempDir, type RunResult } from "../helpers.js";
import { FakeAgents, claudeStream, lastWorkflowLine, packedWorkflows } from "../fixtures/agents/support.js";
import { binaryInstalled, fakeClaude, freshProject, git, npmInstalled, userEnv } from "./support.js";

const COMPLETE = "<promise>COMPLETE</promise>";

// Whole journeys (installs, loops, agent calls) on a loaded 2-core machine.
vi.setConfig({ testTimeout: 240_000 });

interface Channel {
  name: string;
  /** The directories a user of this channel has on PATH before the tools, and how `loopx` is run. */
  setUp(): { path: string[]; loopx: string[] };
}

/** A directory holding `bun`, as a Bun user has on PATH (the package's own is named bun.exe). */
function bunOnPath(): string {
  const dir = tempDir("loopx-journey-bun-");
  symlinkSync(BUN, join(dir, "bun"));
  return dir;
}

let npmPrefix: string;
let tarball: string;

const CHANNELS: Channel[] = [
  { name: "npm package under node (the global loopx)", setUp: () => ({ path: [join(npmPrefix, "bin"), dirname(NODE)], loopx: ["loopx"] }) },
  {
    name: "npm package under bun",
    setUp: () => ({ path: [join(npmPrefix, "bin"), bunOnPath()], loopx: ["bun", join(npmPrefix, "lib", "node_modules", "loopx", "dist", "bin.js")] }),
  },
  { name: "standalone binary, no node or bun on PATH", setUp: () => ({ path: [binaryInstalled()], loopx: ["loopx"] }) },
];

beforeAll(() => {
  ({ prefix: npmPrefix, tarball } = npmInstalled());
}, 240_000);

describe("journey: npm user (or binary user) → ralph → COMPLETE", () => {
  it("the npm tarball carries the shipped workflows; package.json says where loopx lives", () => {
    const listing = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" }).split("\n");
    expect(listing).toContain("package/dist/workflows.tar.gz");
    const manifest = JSON.parse(readFileSync(join(npmPrefix, "lib", "node_modules", "loopx", "package.json"), "utf8"));
    expect(manifest.repository).toEqual({ type: "git", url: "git+https://github.com/loopx/loopx.git" });
    expect(manifest.homepage).toBe("https://github.com/loopx/loopx#readme");
    expect(manifest.bugs).toEqual({ url: "https://github.com/loopx/loopx/issues" });
  });

  it.concurrent.each(CHANNELS)("$name", async (channel) => {
    const { path, loopx } = channel.setUp();
    const agents = new FakeAgents()
      .step(1, { out: claudeStream("Planned the work.", { cost: 0.01 }), run: 'mkdir -p .ralph && echo "- [ ] say hello" > .ralph/implementation_plan.md' })
      .step(2, { out: claudeStream(`The plan is complete.\n${COMPLETE}`, { cost: 0.01 }) });
    const env = userEnv([...path, fakeClaude(agents)]);
    const project = freshProject(env);
    const user = (args: string[]): Promise<RunResult> => runCommand(loopx[0]!, [...loopx.slice(1), ...args], { cwd: project, env, timeoutMs: 120_000 });

    // The one documented command.
    const installed = await user(["install", "--builtin", "ralph"]);
    expect(installed).toMatchObject({ code: 0, stdout: 'installed workflow "ralph" in .loopx/ralph\n', stderr: "" });
    expect(snapshotTree(join(project, ".loopx", "ralph"))).toEqual(snapshotTree(join(packedWorkflows(), "ralph")));
    expect(existsSync(join(project, ".loopx", "converge"))).toBe(false);

    mkdirSync(join(project, "specs"));
    writeFileSync(join(project, "specs", "hello.md"), "A CLI that prints hello.\n");
    const plan = await user(["run", "ralph:plan"]);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toBe("");
    expect(agents.calls()).toBe(2);
    expect(agents.cwd(1)).toBe(project);
    expect(agents.prompt(1)).toContain("specs");
    expect(lastWorkflowLine(plan.stderr)).toMatch(/^ralph: Completion signal detected/);
    expect(readFileSync(join(project, ".ralph", "implementation_plan.md"), "utf8")).toBe("- [ ] say hello\n");

    // converge too, with the same command form; the project's tracked files are untouched.
    const both = await user(["install", "--builtin", "-y"]);
    expect(both).toMatchObject({ code: 0, stdout: 'installed workflow "converge" in .loopx/converge\nreplaced workflow "ralph" in .loopx/ralph\n', stderr: "" });
    expect(snapshotTree(join(project, ".loopx", "converge"))).toEqual(snapshotTree(join(packedWorkflows(), "converge")));
    expect(git(project, ["status", "--porcelain", "--untracked-files=no"], env)).toBe("");
  });
});
