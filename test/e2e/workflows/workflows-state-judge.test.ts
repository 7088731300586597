/**
 * Where the shipped workflows keep what is the user's: plans, session logs and the
 * user's settings outside `.loopx/<workflow>/`, so that `loopx install -y` updates a workflow and
 * keeps them, and session logs never end up in the agent's commits; converge's judge, which must
 * not write (a read-only preset, and a judge that changed files does not approve); and completion
 * that counts only on a line of its own in the final answer. Fake agents, under node.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, RUNTIMES, runLoopx, type RunResult } from "../../helpers.js";
import { FakeAgents, claudeStream, lastWorkflowLine, sessionLog, workflowEnv, workflowProject } from "../../fixtures/agents/support.js";
import { sendTarball, startServer, type TestServer } from "../../fixtures/install/support.js";
import { manualText } from "../../fixtures/manual.js";

const NODE = RUNTIMES[0]!;
const COMPLETE = "<promise>COMPLETE</promise>";

function run(cwd: string, args: string[], env: Record<string, string>): Promise<RunResult> {
  return runLoopx(NODE, args, { cwd, env, timeoutMs: 60_000 });
}

const git = (cwd: string, ...args: string[]) => spawnSync("git", args, { cwd, encoding: "utf8" });

let server: TestServer;
let url: string;
beforeAll(async () => {
  const tarball = readFileSync(join(ROOT, "dist", "workflows.tar.gz"));
  server = await startServer((_req, res) => sendTarball(res, tarball));
  url = `${server.origin}/workflows.tar.gz`;
});
afterAll(async () => {
  await server?.stop();
});

describe("state and configuration outside .loopx/<workflow>/", () => {
  it.concurrent("ralph: `loopx install -y` updates the workflow and keeps the plan, the session logs and the user's config", async () => {
    const fake = new FakeAgents()
      .step(1, { out: claudeStream(`Planned.\n${COMPLETE}`), run: 'echo "- [ ] task" > .ralph/implementation_plan.md' })
      .step(2, { out: claudeStream(`Planned again.\n${COMPLETE}`) });
    const project = workflowProject([]);
    const env = workflowEnv(fake, {
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@example.com",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@example.com",
    });
    expect((await run(project, ["install", "-w", "ralph", url], env)).code).toBe(0);
    const first = await run(project, ["run", "ralph:plan"], env);
    expect(first.code, first.stderr).toBe(0);
    writeFileSync(join(project, ".ralph", "config"), "SPECS_DIR=docs/specs\n");

    const update = await run(project, ["install", "-y", "-w", "ralph", url], env);
    expect(update.code, update.stderr).toBe(0);
    expect(readFileSync(join(project, ".ralph", "implementation_plan.md"), "utf8")).toBe("- [ ] task\n");
    expect(readFileSync(join(project, ".ralph", "config"), "utf8")).toBe("SPECS_DIR=docs/specs\n");
    expect(readdirSync(join(project, ".ralph", "logs")).filter((n) => n.endsWith(".log"))).toHaveLength(1);

    const second = await run(project, ["run", "ralph:plan"], env);
    expect(second.code, second.stderr).toBe(0);
    expect(fake.prompt(2)).toContain("specifications in `docs/specs/`"); // the project's config, over the shipped one
    expect(fake.prompt(2)).toContain("`.ralph/implementation_plan.md`");
    expect(readdirSync(join(project, ".ralph", "logs")).filter((n) => n.endsWith(".log"))).toHaveLength(2);
  });

  it.concurrent("ralph: the agent's `commit all changes` commits its work, never the session log being written", async () => {
    const fake = new FakeAgents().step(1, { out: claudeStream(`Built.\n${COMPLETE}`), run: "echo code > app.txt && git add -A && git commit -qm work" });
    const project = workflowProject(["ralph"], { ".ralph/implementation_plan.md": "- [ ] a\n" });
    const env = workflowEnv(fake, { GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@example.com", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@example.com" });
    const result = await run(project, ["run", "ralph:build"], env);
    expect(result.code, result.stderr).toBe(0);
    const committed = git(project, "show", "--name-only", "--format=", "HEAD").stdout.trim().split("\n");
    expect(committed).toContain("app.txt");
    expect(committed).toContain(".ralph/implementation_plan.md");
    expect(committed.filter((path) => path.includes("logs/"))).toEqual([]);
    expect(git(project, "status", "--porcelain", "--untracked-files=all").stdout.split("\n").filter((l) => l.includes(".ralph/logs"))).toEqual([]);
    expect(sessionLog(join(project, ".ralph"))).toContain("ITERATION 1");
  });

  it.concurrent("converge: the project's .converge/config is read (CONVERGE_CONFIG names another), over the shipped config", async () => {
    const fake = new FakeAgents().step(1, { out: claudeStream("Wrote it."), run: "echo ok > done.txt" }).step(2, { out: claudeStream("Good.\n<verdict>APPROVE</verdict>") });
    const project = workflowProject(["converge"], { ".converge/config": "CONVERGE_TASK=Write ok into done.txt.\nCONVERGE_GATE=grep -qx ok done.txt\n" });
    const result = await run(project, ["run", "converge"], workflowEnv(fake));
    expect(result.code, result.stderr).toBe(0);
    expect(fake.prompt(1)).toContain("Write ok into done.txt.");
    const other = workflowProject(["converge"], { "ci/converge.conf": "CONVERGE_TASK=From elsewhere.\nCONVERGE_GATE=true\n" });
    const missing = await run(other, ["run", "converge"], workflowEnv(new FakeAgents(), { CONVERGE_CONFIG: "ci/nope.conf" }));
    expect(missing.code).toBe(1);
    expect(lastWorkflowLine(missing.stderr)).toBe(`converge: config file not found: ${join(other, "ci", "nope.conf")} (CONVERGE_CONFIG)`);
  });
});

describe("the judge cannot write", () => {
  it.concurrent("the judge runs with the preset's read-only arguments; a judge that changed files does not approve", async () => {
    const fake = new FakeAgents()
      .step(1, { out: claudeStream("Wrote it."), run: "echo ok > done.txt" })
      .step(2, { out: claudeStream("Fixed a typo for you.\n<verdict>APPROVE</verdict>"), run: "echo tweak >> done.txt; echo note > judge-notes.md" })
      .step(3, { out: claudeStream("Reviewed the judge's edits."), run: "echo ok > done.txt; rm judge-notes.md" })
      .step(4, { out: claudeStream("All good.\n<verdict>APPROVE</verdict>") });
    const project = workflowProject(["converge"]);
    const env = workflowEnv(fake, { CONVERGE_TASK: "Write ok into done.txt.", CONVERGE_GATE: "grep -q ok done.txt" });
    const result = await run(project, ["run", "converge"], env);
    expect(result.code, result.stderr).toBe(0);
    expect(fake.calls()).toBe(4);
    expect(fake.argv(1)).toContain("--dangerously-skip-permissions");
    for (const judge of [2, 4]) {
      expect(fake.argv(judge)).not.toContain("--dangerously-skip-permissions");
      expect(fake.argv(judge).slice(1, 7)).toEqual(["-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "dontAsk"]);
    }
    expect(result.stderr).toContain("converge: round 1: the judge changed files (M done.txt, A judge-notes.md): its verdict (APPROVE) does not count — findings go back to the worker\n");
    expect(fake.prompt(3)).toContain("The independent judge changed files it was only to read (M done.txt, A judge-notes.md)");
    expect(lastWorkflowLine(result.stderr)).toMatch(/converged after 2 rounds .* rounds 1: judge rejected · 2: approved$/);
  });
});

describe("completion counts only on a line of its own in the final answer", () => {
  it.concurrent.each([
    ["narrated", "I will not print <promise>COMPLETE</promise> yet: two tasks remain."],
    ["quoted", "The prompt says:\n> <promise>COMPLETE</promise>\nbut the plan is not done."],
    ["in a code block", "Done when I write:\n```\n<promise>COMPLETE</promise>\n```"],
    ["in an earlier message, not the final answer", "__EARLIER__"],
  ])("%s: the loop goes on", async (_case, text) => {
    const stream =
      text === "__EARLIER__"
        ? (() => {
            const events = claudeStream("Two tasks remain.").trimEnd().split("\n").map((l) => JSON.parse(l));
            const early = structuredClone(events.find((e) => e.type === "assistant" && e.message.content[0].type === "text"));
            early.message.content[0].text = `Checking whether to end.\n${COMPLETE}`;
            events.splice(1, 0, early);
            return events.map((e) => JSON.stringify(e)).join("\n") + "\n";
          })()
        : claudeStream(text);
    const fake = new FakeAgents().step("default", { out: stream });
    const project = workflowProject(["ralph"]);
    const result = await run(project, ["run", "ralph:plan"], workflowEnv(fake, { MAX_ITERATIONS: "2" }));
    expect(result.code, result.stderr).toBe(0);
    expect(fake.calls()).toBe(2);
    expect(lastWorkflowLine(result.stderr)).toContain("Max iterations reached (MAX_ITERATIONS=2)");
    expect(existsSync(join(project, ".ralph"))).toBe(true);
  });
});

describe("README", () => {
  it("says what a converge round is in script runs (two when the gate fails, three when it passes)", () => {
    const readme = manualText().replace(/\s+/g, " ");
    expect(readme).not.toContain("(three per round)");
    expect(readme).toContain("`-n` caps script runs (two per round when the gate fails, three when it passes)");
  });
});
