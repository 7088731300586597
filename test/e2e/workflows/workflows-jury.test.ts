/**
 * converge's jury and Ledger (examples/workflows/converge), end to end under node with the fake
 * agents that speak each CLI's stream (test/fixtures/agents): a jury of three on two agent CLIs
 * with lenses and models, a quorum of two; the rejecting findings, attributed, in the next round's
 * prompt; a reviewer that writes a file does not count; every verdict a note in the run's record.
 * The Ledger: round 2's prompt holds round 1's handoff; the milestone commit's body holds the
 * handoff and the compacted log; the scratch files are gitignored and cleared after it.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RUNTIMES, runLoopx } from "../../helpers.js";
import { FakeAgents, claudeStream, codexStream, recordedEvents, workflowEnv, workflowProject } from "../../fixtures/agents/support.js";

const NODE = RUNTIMES[0]!;
const TASK = "Create done.txt holding the word ok.";
const GATE = "grep -qx ok done.txt";
const IDENTITY = { GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@example.com", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@example.com" };

const git = (cwd: string, ...args: string[]) => spawnSync("git", args, { cwd, encoding: "utf8", env: { ...process.env, ...IDENTITY, GIT_CONFIG_GLOBAL: "/dev/null" } });

function notes(env: Record<string, string>): Array<Record<string, any>> {
  return recordedEvents(env).filter((event) => event.type === "note");
}

describe("converge's jury", () => {
  it.concurrent("three reviewers on claude and codex, quorum 2: 1 of 3 sends attributed findings back; a reviewer that writes a file does not count; 2 of 3 converge", async () => {
    const fake = new FakeAgents()
      .step(1, { out: claudeStream("Wrote it.", { cost: 0.1 }), run: "echo ok > done.txt" }) // worker, round 1
      .step(2, { out: claudeStream("The empty-file case is not handled.\n<confidence>70%</confidence>\n<verdict>REJECT</verdict>") }) // correctness
      .step(3, { out: codexStream("It breaks when done.txt is a directory.\n<verdict>REJECT</verdict>") }) // adversarial
      .step(4, { out: claudeStream("Tested enough. <confidence>80%</confidence> <verdict>APPROVE</verdict>") }) // tests
      .step(5, { out: claudeStream("Handled both.", { cost: 0.1 }) }) // worker, round 2
      .step(6, { out: claudeStream("Correct now. <verdict>APPROVE</verdict>") })
      .step(7, { out: codexStream("Fixed it myself. <verdict>APPROVE</verdict>"), run: "echo x > sneaky.txt" })
      .step(8, { out: claudeStream("<verdict>APPROVE</verdict>") });
    const project = workflowProject(["converge"]);
    const env = workflowEnv(fake, {
      CONVERGE_TASK: TASK,
      CONVERGE_GATE: GATE,
      CONVERGE_REVIEWERS: "claude:sonnet:correctness codex:gpt-5-codex:adversarial claude:opus:tests",
      CONVERGE_JURY_CONCURRENCY: "1",
    });
    const result = await runLoopx(NODE, ["run", "converge"], { cwd: project, env, timeoutMs: 90_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(fake.calls()).toBe(8);
    expect([2, 3, 4].map((n) => fake.argv(n).slice(0, 1).concat(fake.argv(n).slice(-2)))).toEqual([
      ["claude", "--model", "sonnet"],
      ["codex", "--model", "gpt-5-codex"],
      ["claude", "--model", "opus"],
    ]);
    // Read-only presets: claude's dontAsk, codex's read-only sandbox.
    expect(fake.argv(2)).toContain("dontAsk");
    expect(fake.argv(3).join(" ")).toContain("--sandbox read-only");
    expect(fake.prompt(2)).toContain("## Your lens\n\n# Lens: correctness");
    expect(fake.prompt(3)).toContain("# Lens: adversarial");
    expect(fake.prompt(2)).toContain("<confidence>N%</confidence>");
    // Round 2's worker gets the findings of the two that rejected, attributed; not the approver's.
    const findings = fake.prompt(5);
    expect(findings).toContain("The jury did not approve the work (1 of 3 approved (quorum 2))");
    expect(findings).toContain("### correctness (claude, sonnet): rejected\n\nThe empty-file case is not handled.");
    expect(findings).toContain("### adversarial (codex, gpt-5-codex): rejected\n\nIt breaks when done.txt is a directory.");
    expect(findings).not.toContain("Tested enough");
    expect(result.stderr).toContain("converge: round 2: adversarial (codex, gpt-5-codex): does not approve (changed files (A sneaky.txt))\n");
    expect(result.stderr).toMatch(/converge: converged after 2 rounds \(.*\): gate `grep -qx ok done.txt` passed and the jury approved, 2 of 3 approved \(quorum 2\); rounds 1: judge rejected · 2: approved\n/);
    // Every verdict is a note in the run's record, with the reviewer's type, model and lens.
    const verdicts = notes(env).map((note) => [note.data.round, note.data.reviewer, note.data.approves, note.data.model]);
    expect(verdicts).toEqual([
      [1, "correctness (claude, sonnet)", false, "sonnet"],
      [1, "adversarial (codex, gpt-5-codex)", false, "gpt-5-codex"],
      [1, "tests (claude, opus)", true, "opus"],
      [2, "correctness (claude, sonnet)", true, "sonnet"],
      [2, "adversarial (codex, gpt-5-codex)", false, "gpt-5-codex"],
      [2, "tests (claude, opus)", true, "opus"],
    ]);
    expect(notes(env)[0]!.data).toMatchObject({ lens: "correctness", verdict: "REJECT", confidence: 0.7 });
    expect(notes(env)[4]!.data.changed).toEqual(["A sneaky.txt"]);
  });

  it.concurrent("a rubric: an APPROVE whose dimensions' geometric mean is under the threshold does not approve", async () => {
    const score = (a: number, b: number) => `<score dimension="intent match">${a}</score>\n<score dimension="evidence quality">${b}</score>\n<verdict>APPROVE</verdict>`;
    const fake = new FakeAgents()
      .step(1, { out: claudeStream("Wrote it."), run: "echo ok > done.txt" })
      .step(2, { out: claudeStream(`Thin evidence.\n${score(0.95, 0.2)}`) })
      .step(3, { out: claudeStream("More evidence.") })
      .step(4, { out: claudeStream(score(0.95, 0.9)) });
    const project = workflowProject(["converge"]);
    const env = workflowEnv(fake, { CONVERGE_TASK: TASK, CONVERGE_GATE: GATE, CONVERGE_RUBRIC: "intent match, evidence quality", CONVERGE_RUBRIC_THRESHOLD: "0.6" });
    const result = await runLoopx(NODE, ["run", "converge"], { cwd: project, env, timeoutMs: 90_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(fake.prompt(2)).toContain("- evidence quality");
    expect(result.stderr).toContain("converge: round 1: judge: does not approve (rubric: geometric mean 0.44 under 0.6 (evidence quality 0.2))\n");
    expect(fake.prompt(3)).toContain("### judge: rubric: geometric mean 0.44 under 0.6 (evidence quality 0.2)\n\nThin evidence.");
    expect(notes(env).map((note) => note.data.mean)).toEqual([0.4359, 0.9247]);
  });

  it.concurrent("the Ledger: round 2's prompt holds round 1's handoff and log; the milestone commit's body holds the handoff and the compacted log; the scratch files are gitignored and cleared", async () => {
    const fake = new FakeAgents()
      .step(1, { out: claudeStream("Looked around."), run: "echo 'Found the spec; next: write done.txt' > .converge/memory/handoff.md" })
      .step(2, { out: claudeStream("Wrote it."), run: "echo ok > done.txt && echo 'done.txt written; nothing left' > .converge/memory/handoff.md" })
      .step(3, { out: claudeStream("<verdict>APPROVE</verdict>") });
    const project = workflowProject(["converge"]);
    git(project, "commit", "-q", "--allow-empty", "-m", "init");
    const env = workflowEnv(fake, { CONVERGE_TASK: TASK, CONVERGE_GATE: GATE, CONVERGE_MEMORY: "1", CONVERGE_MILESTONE: "1", ...IDENTITY });
    const result = await runLoopx(NODE, ["run", "converge"], { cwd: project, env, timeoutMs: 90_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(fake.prompt(1)).toContain("### Handoff from the last round\n\n(none yet)");
    expect(fake.prompt(2)).toContain("Found the spec; next: write done.txt");
    expect(fake.prompt(2)).toContain("- round 1: gate failed (exit code 2)");
    const commit = git(project, "log", "-1", "--format=%s%n%b").stdout;
    expect(commit).toMatch(/^converge: milestone \(round 2\)\ndone\.txt written; nothing left\n\nLog:\n- round 1: gate failed \(exit code 2\)\n- round 2: converged\n/);
    expect(git(project, "show", "--name-only", "--format=", "HEAD").stdout.trim().split("\n")).toEqual(["done.txt"]);
    expect(existsSync(join(project, ".converge", "memory", "handoff.md"))).toBe(false);
    expect(existsSync(join(project, ".converge", "memory", "log.md"))).toBe(false);
    expect(git(project, "check-ignore", "-q", ".converge/memory/handoff.md").status).toBe(0);
    expect(git(project, "status", "--porcelain").stdout).not.toContain(".converge/memory");
  });
});
