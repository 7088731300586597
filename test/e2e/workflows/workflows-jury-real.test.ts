/**
 * converge's jury on the real agent CLIs, offline: real Claude Code (worker, and two reviewers with
 * their own models and lenses) and real Codex (the adversarial reviewer) against their local API
 * stand-ins (fixtures/agents/messages-api.ts, responses-api.ts), with a deterministic gate. 1 of 3
 * approves → the rejecting findings, attributed, reach the worker's next request at the stand-in;
 * an APPROVE whose rubric has one dimension at 0.2 (the other 0.95) is rejected; a reviewer that
 * writes a file does not count; 2 of 3 → converged; a receipt per reviewer call with its model.
 * Node only (several real CLI calls).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RUNTIMES, runLoopx } from "../../helpers.js";
import { FakeAgents, recordedEvents, workflowEnv, workflowProject } from "../../fixtures/agents/support.js";
import { realClaudeBin, realClaudeEnv, startMessagesApi, type Answer, type MessagesApi } from "../../fixtures/agents/messages-api.js";
import { realCodexBin, realCodexEnv, startResponsesApi, type Reply, type ResponsesApi } from "../../fixtures/agents/responses-api.js";

const SONNET = "claude-sonnet-4-5";
const OPUS = "claude-opus-4-1";

describe("converge's jury on real Claude Code and real Codex", () => {
  it("node: 1 of 3 sends attributed findings the stand-in sees; a rubric with one dimension at 0.2 rejects; a reviewer that writes does not count; 2 of 3 converge; receipts per reviewer with their models", async (context) => {
    const scores = (intent: number, evidence: number) => `<score dimension="intent match">${intent}</score>\n<score dimension="evidence quality">${evidence}</score>\n<verdict>APPROVE</verdict>`;
    let claude!: MessagesApi;
    let codex!: ResponsesApi;
    const rounds = { claudeReviews: 0, codexReviews: 0 };
    const claudeAnswer = (n: number): Answer => {
      const body = JSON.stringify(claude.requests[n - 1]!.body);
      if (body.includes("You are the worker")) {
        if (body.includes("The jury did not approve")) return { text: "Handled the empty file and the directory." };
        return body.includes("tool_result") ? { text: "Wrote the answer." } : { tool: { command: "echo 42 > answer.txt" } };
      }
      rounds.claudeReviews++;
      if (body.includes("Lens: correctness")) return { text: rounds.claudeReviews <= 2 ? "An empty answer.txt is not handled.\n<confidence>70%</confidence>\n<verdict>REJECT</verdict>" : `Correct now.\n${scores(0.9, 0.9)}` };
      // The tests lens approves both rounds; in round 1 its evidence scores 0.2, which the rubric does not pass.
      return { text: rounds.claudeReviews <= 2 ? `The tests cover it, thinly.\n<confidence>90%</confidence>\n${scores(0.95, 0.2)}` : `The tests cover it.\n${scores(0.95, 0.95)}` };
    };
    const codexReply = (_n: number, body: Record<string, any>): Reply => {
      const text = JSON.stringify(body.input ?? []);
      if (text.includes("function_call_output")) return { text: "Fixed it myself.\n<verdict>APPROVE</verdict>" };
      rounds.codexReviews++;
      return rounds.codexReviews === 1 ? { text: "answer.txt as a directory breaks the reader.\n<verdict>REJECT</verdict>" } : { exec: "echo patched > sneaky.txt" };
    };
    claude = await startMessagesApi(claudeAnswer);
    codex = await startResponsesApi(codexReply);
    context.onTestFinished(async () => {
      await claude.stop();
      await codex.stop();
    });
    const project = workflowProject(["converge"]);
    const base = workflowEnv(new FakeAgents());
    const env = {
      ...base,
      ...realClaudeEnv(claude, base.HOME!),
      ...realCodexEnv(codex, base.HOME!),
      PATH: `${realClaudeBin()}:${realCodexBin()}:${base.PATH}`,
      CONVERGE_TASK: "Write the answer, 42, into answer.txt.",
      CONVERGE_GATE: "grep -qx 42 answer.txt",
      CONVERGE_REVIEWERS: `claude:${SONNET}:correctness codex:gpt-5-codex:adversarial claude:${OPUS}:tests`,
      CONVERGE_JURY_CONCURRENCY: "1",
      CONVERGE_RUBRIC: "intent match, evidence quality",
      CONVERGE_RUBRIC_THRESHOLD: "0.6",
      // The adversary may write (not codex's read-only sandbox): its write is caught by the tree check.
      CONVERGE_REVIEWER_CODEX_ARGS: "exec --json --dangerously-bypass-approvals-and-sandbox -",
      CONVERGE_MAX_ROUNDS: "3",
    };
    const result = await runLoopx(RUNTIMES[0]!, ["run", "converge"], { cwd: project, env, timeoutMs: 240_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(readFileSync(join(project, "answer.txt"), "utf8")).toBe("42\n");
    // Round 2's worker request, as the stand-in got it, holds the two rejections, attributed.
    const worker2 = claude.requests.map((r) => JSON.stringify(r.body)).find((body) => body.includes("You are the worker") && body.includes("The jury did not approve"));
    expect(worker2).toBeDefined();
    expect(worker2).toContain(`### correctness (claude, ${SONNET}): rejected\\n\\nAn empty answer.txt is not handled.`);
    expect(worker2).toContain("### adversarial (codex, gpt-5-codex): rejected\\n\\nanswer.txt as a directory breaks the reader.");
    // The tests lens said APPROVE, but one dimension at 0.2 sinks the geometric mean: its findings go too.
    expect(worker2).toContain(`### tests (claude, ${OPUS}): rubric: geometric mean 0.44 under 0.6 (evidence quality 0.2)\\n\\nThe tests cover it, thinly.`);
    // The adversary's write happened, and its APPROVE did not count.
    expect(existsSync(join(project, "sneaky.txt"))).toBe(true);
    expect(result.stderr).toContain("converge: round 2: adversarial (codex, gpt-5-codex): does not approve (changed files (A sneaky.txt))\n");
    expect(result.stderr).toMatch(/converge: converged after 2 rounds \(.*\): gate `grep -qx 42 answer.txt` passed and the jury approved, 2 of 3 approved \(quorum 2\)/);
    // Each reviewer's model reached its CLI's API, and came back in its receipts.
    const models = claude.requests.map((r) => r.body.model);
    // (Claude Code resolves an older opus name to its current one: the family is what reaches the API.)
    const opus = models.find((model: string) => model.startsWith("claude-opus-4"));
    expect(models).toContain(SONNET);
    expect(opus).toBeDefined();
    const events = recordedEvents(env);
    const receiptModels = events.filter((e) => e.type === "receipt").map((e) => `${e.agent}:${e.model}`);
    for (const model of [`claude-code:${SONNET}`, `claude-code:${opus}`, "codex:gpt-5-codex"]) expect(receiptModels.filter((m) => m === model)).toHaveLength(2);
    const verdicts = events.filter((e) => e.type === "note").map((e) => [e.data.round, e.data.reviewer, e.data.approves]);
    expect(verdicts).toEqual([
      [1, `correctness (claude, ${SONNET})`, false],
      [1, "adversarial (codex, gpt-5-codex)", false],
      [1, `tests (claude, ${OPUS})`, false],
      [2, `correctness (claude, ${SONNET})`, true],
      [2, "adversarial (codex, gpt-5-codex)", false],
      [2, `tests (claude, ${OPUS})`, true],
    ]);
  }, 300_000);
});
