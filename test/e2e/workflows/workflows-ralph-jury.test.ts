/**
 * ralph's completion check by a jury (RALPH_REVIEWERS, opt-in; examples/workflows/ralph/lib/review.ts
 * on converge's jury in examples/workflows/shared/), end to end under node with the fake agents of
 * test/fixtures/agents: a COMPLETE ends the run only when the quorum approves; a rejected one goes
 * on, the rejecting findings (attributed, deduplicated) in the next iteration's prompt; a reviewer
 * that writes a file or gives no verdict does not approve; each reviewer is a read-only call, a
 * receipt with its model and a note; with the setting off, no reviewer is called.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RUNTIMES, runLoopx, type RunResult } from "../../helpers.js";
import { FakeAgents, claudeStream, codexStream, lastWorkflowLine, recordedEvents, recordedReceipts, sessionLog, workflowEnv, workflowProject } from "../../fixtures/agents/support.js";

const NODE = RUNTIMES[0]!;
const COMPLETE = "<promise>COMPLETE</promise>";
const PLAN = { ".ralph/implementation_plan.md": "- [ ] write done.txt\n" };

function run(project: string, env: Record<string, string>): Promise<RunResult> {
  return runLoopx(NODE, ["run", "ralph:build"], { cwd: project, env, timeoutMs: 90_000 });
}

function notes(env: Record<string, string>): Array<Record<string, any>> {
  return recordedEvents(env).filter((event) => event.type === "note" && typeof event.data?.reviewer === "string");
}

describe("ralph's completion check by a jury (RALPH_REVIEWERS)", () => {
  it.concurrent("the quorum approves: the run completes; the reviewers ran read-only with their models and lenses; a receipt and a note per reviewer", async () => {
    const fake = new FakeAgents()
      .step(1, { out: claudeStream(`Wrote done.txt and ticked the task.\n${COMPLETE}`, { cost: 0.1 }), run: "echo ok > done.txt" })
      .step(2, { out: claudeStream("Every task of the plan is done.\n<confidence>90%</confidence>\n<verdict>APPROVE</verdict>", { cost: 0.02 }) })
      .step(3, { out: codexStream("Nothing breaks it. <verdict>APPROVE</verdict>") });
    const project = workflowProject(["ralph"], PLAN);
    const env = workflowEnv(fake, { RALPH_REVIEWERS: "claude:sonnet:correctness codex:gpt-5-codex:adversarial", RALPH_JURY_CONCURRENCY: "1" });
    const result = await run(project, env);
    expect(result.code, result.stderr).toBe(0);
    expect(fake.calls()).toBe(3);
    expect(result.stderr).toContain("ralph: completion check: a COMPLETE counts when 2 of 2 reviewers approve (correctness (claude, sonnet), adversarial (codex, gpt-5-codex)): 2 more read-only calls per COMPLETE\n");
    expect(lastWorkflowLine(result.stderr)).toMatch(/^ralph: Completion signal detected and approved by the jury \(2 of 2 approved \(quorum 2\)\) \(session log: /);

    // Read-only presets (claude's dontAsk, codex's read-only sandbox), each with its model.
    expect(fake.argv(1)).toContain("--dangerously-skip-permissions");
    expect(fake.argv(2)).toEqual(expect.arrayContaining(["claude", "dontAsk", "--model", "sonnet"]));
    expect(fake.argv(2)).not.toContain("--dangerously-skip-permissions");
    expect(fake.argv(3).join(" ")).toMatch(/^codex exec --json --sandbox read-only - --model gpt-5-codex$/);
    // The reviewer's prompt: the shipped lens, the agent's instructions, the rubric's confidence line.
    const review = fake.prompt(2);
    expect(review).toContain("You are an independent reviewer (ralph, iteration 1, build mode)");
    expect(review).toContain("## Your lens\n\n# Lens: correctness");
    expect(review).toContain("## The agent's instructions\n\nYou are in BUILD mode (iteration 1).");
    expect(review).toContain("the plan `.ralph/implementation_plan.md`");
    expect(review).toContain("<confidence>N%</confidence>");
    expect(review).not.toMatch(/\$\{[A-Z_]+\}/);
    expect(fake.prompt(3)).toContain("# Lens: adversarial");

    // One receipt per call, each with its model; the iteration's cost holds the reviewers'.
    expect(recordedReceipts(env).map((r) => [r.n, r.agent, r.model, r.cost?.usd])).toEqual([
      [1, "claude-code", "claude-opus-5-5", 0.1],
      [1, "claude-code", "claude-opus-5-5", 0.02],
      [1, "codex", "gpt-5-codex", undefined],
    ]);
    expect(sessionLog(join(project, ".ralph"))).toMatch(/Iteration Cost: \$0\.120000 billed\nStatus: complete\nJury: 2 of 2 approved \(quorum 2\)\n/);
    expect(notes(env).map((n) => [n.data.iteration, n.data.reviewer, n.data.model, n.data.lens, n.data.approves])).toEqual([
      [1, "correctness (claude, sonnet)", "sonnet", "correctness", true],
      [1, "adversarial (codex, gpt-5-codex)", "gpt-5-codex", "adversarial", true],
    ]);
    expect(notes(env)[0]!.data.confidence).toBe(0.9);
  });

  it.concurrent("the quorum rejects: the loop goes on with the findings (attributed, deduplicated) in the next prompt; a reviewer without a verdict does not approve; a later approval completes", async () => {
    const shared = "The plan's second task is not done: there is no test for done.txt.";
    const fake = new FakeAgents()
      .step(1, { out: claudeStream(`All done.\n${COMPLETE}`) })
      .step(2, { out: claudeStream(`${shared}\n\nIt also ignores an empty spec.\n<verdict>REJECT</verdict>`) })
      .step(3, { out: claudeStream(`${shared}\n\nI looked around but cannot tell.`) }) // no verdict
      .step(4, { out: claudeStream("Looks fine. <verdict>APPROVE</verdict>") })
      .step(5, { out: claudeStream(`Added the test.\n${COMPLETE}`) })
      .step(6, { out: claudeStream("<verdict>APPROVE</verdict>") })
      .step(7, { out: claudeStream("<verdict>APPROVE</verdict>") })
      .step(8, { out: claudeStream("<verdict>REJECT</verdict>") });
    const project = workflowProject(["ralph"], PLAN);
    const env = workflowEnv(fake, { RALPH_REVIEWERS: "claude:sonnet:correctness claude:opus:tests claude:haiku", RALPH_JURY_CONCURRENCY: "1" });
    const result = await run(project, env);
    expect(result.code, result.stderr).toBe(0);
    expect(fake.calls()).toBe(8);
    expect(result.stderr).toContain("ralph: iteration 1: jury: 1 of 3 approved (quorum 2) — not complete; the findings go into the next iteration\n");
    expect(result.stderr).toContain("ralph: iteration 1: tests (claude, opus): does not approve (no verdict)\n");
    expect(result.stderr).toContain("ralph: iteration 1: COMPLETE signalled — asking the jury of 3 (quorum 2, 1 at once)\n");
    expect(result.stderr).toMatch(/\nralph: iteration 1 rejected, cost /);
    expect(result.stderr).toContain("ralph: iteration 2 (build)\n");
    expect(lastWorkflowLine(result.stderr)).toMatch(/^ralph: Completion signal detected and approved by the jury \(2 of 3 approved \(quorum 2\)\)/);

    // Iteration 2's prompt: the template's, then the rejecting reviewers' findings, attributed,
    // the paragraph both gave once; not the approving reviewer's words.
    const next = fake.prompt(5);
    expect(next.startsWith("You are in BUILD mode (iteration 2).")).toBe(true);
    expect(next).toContain("## Your COMPLETE in iteration 1 was not accepted\n\nIndependent reviewers checked the repository and did not approve (1 of 3 approved (quorum 2)).");
    expect(next).toContain(`### correctness (claude, sonnet): rejected\n\n${shared}\n\nIt also ignores an empty spec.`);
    expect(next).toContain("### tests (claude, opus): no verdict\n\nI looked around but cannot tell.");
    expect(next.split(shared).length - 1).toBe(1);
    expect(next).not.toContain("Looks fine");
    // The findings are handed on once: the reviewers' own prompt does not carry them.
    expect(fake.prompt(6)).not.toContain("was not accepted");

    const log = sessionLog(join(project, ".ralph"));
    expect(log).toMatch(/Status: rejected\nJury: 1 of 3 approved \(quorum 2\)\n[\s\S]*Status: complete\nJury: 2 of 3 approved \(quorum 2\)\n/);
    expect(log).toContain("Total Iterations: 2\nSuccessful: 2\n");
    expect(notes(env).map((n) => [n.data.iteration, n.data.reviewer, n.data.verdict, n.data.approves])).toEqual([
      [1, "correctness (claude, sonnet)", "REJECT", false],
      [1, "tests (claude, opus)", null, false],
      [1, "claude, haiku", "APPROVE", true],
      [2, "correctness (claude, sonnet)", "APPROVE", true],
      [2, "tests (claude, opus)", "APPROVE", true],
      [2, "claude, haiku", "REJECT", false],
    ]);
  });

  it.concurrent("a reviewer that writes a file does not approve, whatever its verdict; the writer is named in the next prompt", async () => {
    const fake = new FakeAgents()
      .step(1, { out: claudeStream(`Done.\n${COMPLETE}`) })
      .step(2, { out: claudeStream("<verdict>APPROVE</verdict>") })
      .step(3, { out: claudeStream("Fixed a typo myself. <verdict>APPROVE</verdict>"), run: "echo x > sneaky.txt" })
      .step(4, { out: claudeStream("Kept the fix; nothing else to do.") });
    const project = workflowProject(["ralph"], PLAN);
    const env = workflowEnv(fake, { RALPH_REVIEWERS: "claude claude:opus", RALPH_QUORUM: "2", RALPH_JURY_CONCURRENCY: "1", MAX_ITERATIONS: "2" });
    const result = await run(project, env);
    expect(result.code, result.stderr).toBe(0);
    expect(fake.calls()).toBe(4);
    expect(result.stderr).toContain("ralph: iteration 1: claude, opus: does not approve (changed files (A sneaky.txt))\n");
    expect(result.stderr).toContain("ralph: iteration 1: jury: 1 of 2 approved (quorum 2)");
    expect(fake.prompt(4)).toContain("### claude, opus: changed files (A sneaky.txt)\n\nFixed a typo myself.");
    expect(lastWorkflowLine(result.stderr)).toMatch(/^ralph: Max iterations reached \(MAX_ITERATIONS=2\)/);
    expect(notes(env).map((n) => [n.data.reviewer, n.data.verdict, n.data.approves, n.data.changed])).toEqual([
      ["claude", "APPROVE", true, undefined],
      ["claude, opus", "APPROVE", false, ["A sneaky.txt"]],
    ]);
  });

  it.concurrent("off by default: the same COMPLETE ends the run after one agent call, no reviewer, no jury line; RALPH_REVIEWERS turns it on", async () => {
    const script = (fake: FakeAgents) => fake.step("default", { out: claudeStream(`Done.\n${COMPLETE}`) });
    // RALPH_QUORUM and RALPH_RUBRIC alone do not turn the jury on: RALPH_REVIEWERS does.
    const off = script(new FakeAgents());
    const offProject = workflowProject(["ralph"], PLAN);
    const offEnv = workflowEnv(off, { RALPH_QUORUM: "1", RALPH_RUBRIC: "intent match" });
    const on = script(new FakeAgents());
    const onProject = workflowProject(["ralph"], PLAN);
    const [offResult, onResult] = await Promise.all([run(offProject, offEnv), run(onProject, workflowEnv(on, { RALPH_REVIEWERS: "claude", MAX_ITERATIONS: "1" }))]);
    expect(offResult.code, offResult.stderr).toBe(0);
    expect(off.calls()).toBe(1);
    expect(offResult.stderr).not.toMatch(/jury|completion check|reviewer/i);
    expect(lastWorkflowLine(offResult.stderr)).toMatch(/^ralph: Completion signal detected \(session log: /);
    expect(sessionLog(join(offProject, ".ralph"))).not.toContain("Jury:");
    expect(notes(offEnv)).toEqual([]);
    // The same agent with one reviewer: a second call, read-only, whose response has no verdict.
    expect(onResult.code, onResult.stderr).toBe(0);
    expect(on.calls()).toBe(2);
    expect(on.argv(2)).toContain("dontAsk");
    expect(onResult.stderr).toContain("ralph: iteration 1: jury: 0 of 1 approved (quorum 1)");
  });

  it.concurrent("a reviewer whose call fails MAX_RETRIES times ends the run as a failing agent would: Ralph exit code 4, the reviewer named", async () => {
    const fake = new FakeAgents()
      .step(1, { out: claudeStream(`Done.\n${COMPLETE}`) })
      .step(2, { err: "boom\n", code: 1 });
    const project = workflowProject(["ralph"], PLAN);
    const result = await run(project, workflowEnv(fake, { RALPH_REVIEWERS: "claude:sonnet:correctness", MAX_RETRIES: "1" }));
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain("loopx: script ralph:build exited with code 4\n");
    expect(lastWorkflowLine(result.stderr)).toMatch(/^ralph: Reviewer correctness \(claude, sonnet\) failure exceeded retries \(1 failed attempts, MAX_RETRIES=1\): /);
    expect(fake.calls()).toBe(2);
    expect(sessionLog(join(project, ".ralph"))).toMatch(/Status: failed\n/);
  });

  it.concurrent("a reviewer CLI missing from PATH, or an unknown lens: one line before any agent call", async () => {
    const fake = new FakeAgents();
    const project = workflowProject(["ralph"], PLAN);
    const noCli = await run(project, workflowEnv(fake, { RALPH_REVIEWERS: "codex", RALPH_REVIEWER_CODEX_CLI: "no-such-reviewer" }));
    expect(noCli.code).toBe(1);
    expect(noCli.stderr).toContain("ralph: reviewer CLI not found on PATH: no-such-reviewer (codex in RALPH_REVIEWERS; set RALPH_REVIEWER_CODEX_CLI to another command)\n");
    const noLens = await run(project, workflowEnv(fake, { RALPH_REVIEWERS: "claude::nosuch" }));
    expect(noLens.code).toBe(1);
    expect(noLens.stderr).toMatch(/ralph: no lens "nosuch": add .*\.ralph\/lenses\/nosuch\.md \(lenses: adversarial, correctness, tests\)\n/);
    expect(fake.calls()).toBe(0);
  });
});
