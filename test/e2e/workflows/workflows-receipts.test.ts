/**
 * The shipped workflows report every agent call as loopx receipts (examples/workflows/shared/
 * usage.ts, report.ts), seen in the run's record: fake agents speaking Claude Code's recorded
 * stream (fixtures/agents/claude-*.ndjson: an API-key session with two models, a subscription
 * session, a call killed before its result), amp's and cline's; and what an agent still running
 * when the script is ended had used, reported within loopx's grace. Under node (the workflow
 * code is the same under every runtime; workflows-claude-real.test.ts runs the real CLI).
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RUNTIMES, runLoopx, taggedSurvivors, waitFor, type RunResult } from "../../helpers.js";
import { FakeAgents, ampStream, claudeFixture, clineStream, recordedReceipts, sessionLog, workflowEnv, workflowProject } from "../../fixtures/agents/support.js";

const NODE = RUNTIMES[0]!;
const COMPLETE = "<promise>COMPLETE</promise>";
const CLAUDE = { agent: "claude-code", agentVersion: "2.1.328", provider: "anthropic", workflow: "ralph" };
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

function run(cwd: string, env: Record<string, string>, onSpawn?: Parameters<typeof runLoopx>[2]["onSpawn"]): Promise<RunResult> {
  return runLoopx(NODE, ["run", "ralph:plan"], { cwd, env, onSpawn, timeoutMs: 60_000 });
}

describe.concurrent("the workflows' receipts", () => {
  it("claude: per model (API key, billed), the assistant usage of a call without a result, a subscription's estimate, each window", async () => {
    const fake = new FakeAgents()
      .step(1, { out: claudeFixture("claude-api-key-models.ndjson", "Planned."), run: 'echo "- [ ] a" > .ralph/implementation_plan.md' })
      .step(2, { out: claudeFixture("claude-no-result.ndjson", "Working…"), code: 143 }) // killed before its result: retried
      .step(3, { out: claudeFixture("claude-oauth.ndjson", `Done.\n${COMPLETE}`) });
    const project = workflowProject(["ralph"]);
    const env = workflowEnv(fake);
    const result = await run(project, env);
    expect(result.code, result.stderr).toBe(0);
    expect(recordedReceipts(env)).toEqual([
      {
        n: 1,
        ...CLAUDE,
        model: "claude-sonnet-4-5",
        cost: { usd: 0.033675, kind: "billed" },
        tokens: { input: 1500, output: 480, cacheRead: 61000, cacheWrite: 500, reasoning: 120 },
        window: { type: "five_hour", status: "allowed", resetsAt: iso(1764100800), utilization: 0.42, source: "claude-stream" },
      },
      { n: 1, ...CLAUDE, model: "claude-haiku-4-5", cost: { usd: 0.0011, kind: "billed" }, tokens: { input: 800, output: 60, cacheRead: 0, cacheWrite: 0 } },
      // The call that failed (exit 143 without a result) says so on its receipts: its class (failures.ts), OTel's error.type.
      { n: 2, ...CLAUDE, model: "claude-sonnet-4-5", tokens: { input: 950, output: 285, cacheRead: 41000, cacheWrite: 300 }, failure: "unknown" },
      { n: 2, ...CLAUDE, model: "claude-haiku-4-5", tokens: { input: 400, output: 52 }, failure: "unknown" },
      {
        n: 2,
        ...CLAUDE,
        model: "claude-opus-4-5",
        cost: { usd: 0.0523, kind: "estimate" },
        tokens: { input: 12, output: 940, cacheRead: 18000, cacheWrite: 4200 },
        window: { type: "five_hour", status: "allowed_warning", resetsAt: iso(1764100800), utilization: 0.91, source: "claude-stream" },
      },
      { n: 2, ...CLAUDE, window: { type: "seven_day", status: "allowed", resetsAt: iso(1764600000), source: "claude-stream" } },
    ]);
    expect(result.stderr).toContain("ralph: iteration 1 success, cost $0.034775 billed (total $0.034775 billed)\n");
    expect(result.stderr).toContain("ralph: iteration 2 complete, cost $0.052300 estimate (total $0.034775 billed, $0.052300 estimate)\n");
    expect(sessionLog(join(project, ".ralph"))).toContain("Total Cost: $0.034775 billed, $0.052300 estimate\n");
  });

  it.for([
    ["amp", () => ampStream("p", `Done.\n${COMPLETE}`), [{ tokens: { input: 12783, output: 8 } }, { cost: { usd: 0.25, kind: "billed" } }]],
    ["cline", () => clineStream("p", `Done.\n${COMPLETE}`, 0.0125), [{ tokens: { input: 1200, output: 80 }, cost: { usd: 0.0125, kind: "billed" } }]],
  ] as const)("%s: what its stream reports", async ([type, stream, receipts]) => {
    const fake = new FakeAgents().balance("10.00").step(1, { out: stream(), balance: "9.75" });
    const project = workflowProject(["ralph"]);
    const env = workflowEnv(fake, { AGENT_TYPE: type });
    const result = await run(project, env);
    expect(result.code, result.stderr).toBe(0);
    expect(recordedReceipts(env)).toEqual(receipts.map((r) => ({ n: 1, workflow: "ralph", ...r, agent: type })));
  });

  it("converge: the worker's and the judge's calls, each in the iteration of its script, each with its own kind", async () => {
    const fake = new FakeAgents()
      .step(1, { out: claudeFixture("claude-oauth.ndjson", "Wrote it."), run: "echo ok > done.txt" }) // worker: a subscription
      .step(2, { out: clineStream("p", "<verdict>APPROVE</verdict>", 0.0125) }); // judge: cline, billed
    const project = workflowProject(["converge"]);
    const env = workflowEnv(fake, { CONVERGE_TASK: "Write ok into done.txt.", CONVERGE_GATE: "grep -qx ok done.txt", CONVERGE_JUDGE_TYPE: "cline" });
    const result = await runLoopx(NODE, ["run", "converge"], { cwd: project, env, timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    const receipts = recordedReceipts(env);
    expect(receipts.map((r) => [r.n, r.workflow, r.agent, r.cost])).toEqual([
      [1, "converge", "claude-code", { usd: 0.0523, kind: "estimate" }],
      [1, "converge", "claude-code", undefined], // the seven-day window
      [3, "converge", "cline", { usd: 0.0125, kind: "billed" }],
    ]);
    expect(result.stderr).toMatch(/total cost \$0\.052300 estimate, \$0\.012500 billed\)|total cost \$0\.012500 billed, \$0\.052300 estimate\)/);
  });

  it("Ctrl-C while an agent ignores it: what it used so far is reported within loopx's grace, the iteration closed, nothing left", async () => {
    const partial = claudeFixture("claude-no-result.ndjson", "Working…").split("\n").slice(0, 3).join("\n") + "\n";
    const fake = new FakeAgents().step(1, { out: partial, run: "trap '' INT TERM HUP", sleep: 120 });
    const project = workflowProject(["ralph"]);
    const env = workflowEnv(fake);
    const result = await run(project, env, (child) => {
      void waitFor(() => fake.calls() === 1, 30_000).then(() => setTimeout(() => child.kill("SIGINT"), 500));
    });
    expect(result.code, result.stderr).toBe(130);
    expect(recordedReceipts(env)).toEqual([{ n: 1, ...CLAUDE, agentVersion: "2.1.328", model: "claude-sonnet-4-5", tokens: { input: 900, output: 75, cacheRead: 20000, cacheWrite: 300 } }]);
    // ralph closed the iteration itself (before loopx's SIGKILL), after ending the agent.
    expect(sessionLog(join(project, ".ralph"))).toMatch(/Status: interrupted\n[\s\S]*Exit Reason: Interrupted by SIGINT\n/);
    expect(taggedSurvivors(env.HARDENING_TAG!)).toEqual([]);
  });
});
