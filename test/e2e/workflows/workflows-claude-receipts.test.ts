/**
 * ralph on the real Claude Code CLI (installed by scripts/agent-clis.mjs) against the local Messages API stand-in
 * (fixtures/agents/messages-api.ts), which answers with the token usage each test gives: the
 * run's record holds one receipt per agent call with exactly those tokens and exactly the cost
 * Claude's own `result` printed (read back from ralph's session log), labelled `estimate` for a
 * subscriber (OAuth token) and `billed` with an API key; after SIGKILL of loopx mid-call and
 * `runs resume`, and after Ctrl-C mid-call, the usage of the interrupted call is there too.
 * One channel, node: the workflow code is the same under bun and the binary (workflows-e2e).
 */
import { mkdirSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, type TestContext } from "vitest";
import { RUNTIMES, runLoopx, startLoopx, waitFor } from "../../helpers.js";
import { FakeAgents, recordedReceipts, sessionLog, workflowEnv, workflowProject } from "../../fixtures/agents/support.js";
import { realClaudeBin, realClaudeEnv, startMessagesApi, type Answer, type MessagesApi, type Usage } from "../../fixtures/agents/messages-api.js";
import { events, recordIds, waitForEvent } from "../../fixtures/control/support.js";

const NODE = RUNTIMES[0]!;
const COMPLETE = "<promise>COMPLETE</promise>";
const MODEL = "claude-sonnet-4-5";
const U1: Usage = { input_tokens: 1200, output_tokens: 340, cache_read_input_tokens: 5000, cache_creation_input_tokens: 70 };
const U2: Usage = { input_tokens: 800, output_tokens: 120, cache_read_input_tokens: 6000, cache_creation_input_tokens: 0 };
const U3: Usage = { input_tokens: 30, output_tokens: 45, cache_read_input_tokens: 0, cache_creation_input_tokens: 900 };

const tokensOf = (u: Usage) => ({ input: u.input_tokens, output: u.output_tokens, cacheRead: u.cache_read_input_tokens, cacheWrite: u.cache_creation_input_tokens });
const nano = (usd: number) => Math.round(usd * 1e9);

/** Tokens summed field by field, all five (as loopx's totals show them). */
function tokenSum(...usages: Usage[]) {
  const sum = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 };
  for (const u of usages) for (const [key, value] of Object.entries(tokensOf(u))) sum[key as keyof typeof sum] += value ?? 0;
  return sum;
}

/** The totals line of `loopx runs show <id> --json`, its dollars in nano-dollars (exact). */
async function shownTotals(project: string, env: Record<string, string>, id: string) {
  const show = await runLoopx(NODE, ["runs", "show", id, "--json"], { cwd: project, env });
  expect(show.code, show.stderr).toBe(0);
  const totals = show.stdout.trim().split("\n").map((line) => JSON.parse(line)).find((line) => line.type === "totals");
  const money = (cost: { billed: number; estimate: number }) => ({ billed: nano(cost.billed), estimate: nano(cost.estimate) });
  const each = (all: Record<string, any>) => Object.fromEntries(Object.entries(all).map(([key, t]) => [key, { ...t, costUsd: money(t.costUsd) }]));
  return { costUsd: money(totals.costUsd), tokens: totals.tokens, receipts: totals.receipts, models: each(totals.models), iterations: each(totals.iterations) };
}

async function standIn(context: TestContext, answer: (n: number) => Answer): Promise<MessagesApi> {
  const api = await startMessagesApi(answer);
  context.onTestFinished(() => api.stop());
  return api;
}

/** ralph on the real claude (pinned to one model), as a subscriber or with an API key. */
function claudeEnv(api: MessagesApi, auth: "subscription" | "api key"): Record<string, string> {
  const env = workflowEnv(new FakeAgents(), { AGENT_EXTRA_ARGS: `--model ${MODEL}` });
  mkdirSync(join(env.HOME!, ".claude"), { recursive: true });
  const claude = realClaudeEnv(api, env.HOME!);
  if (auth === "api key") {
    delete claude.CLAUDE_CODE_OAUTH_TOKEN;
    claude.ANTHROPIC_API_KEY = "sk-ant-api03-loopx-test-key";
  }
  return { ...env, ...claude, PATH: `${realClaudeBin()}:${env.PATH}` };
}

/** ralph's session logs (one per sitting: a resumed run starts another), oldest first. */
function sessionLogs(project: string): string {
  const logs = join(project, ".ralph", "logs");
  return readdirSync(logs)
    .filter((name) => name.endsWith(".log"))
    .sort()
    .map((name) => readFileSync(join(logs, name), "utf8"))
    .join("");
}

/** The `total_cost_usd` of each `result` event in ralph's session logs (the CLI's own numbers). */
function resultCosts(project: string): number[] {
  return sessionLogs(project)
    .split("\n")
    .filter((line) => line.startsWith('{"type":"result"'))
    .map((line) => JSON.parse(line).total_cost_usd as number);
}

/** Waits until the real claude printed the assistant message of request `n` (its tool call is running). */
async function toolRunning(project: string, n: number): Promise<void> {
  const printed = () => {
    try {
      return sessionLogs(project).includes(`"id":"msg_standin_${n}"`);
    } catch {
      return false;
    }
  };
  expect(await waitFor(printed, 60_000)).toBe(true);
}

const receipt = (n: number, kind: "billed" | "estimate" | undefined, usage: Usage, usd?: number) => ({
  n,
  workflow: "ralph",
  model: MODEL,
  agent: "claude-code",
  agentVersion: expect.stringMatching(/^\d+\.\d+\.\d+$/),
  provider: "anthropic",
  tokens: tokensOf(usage),
  ...(kind && usd !== undefined ? { cost: { usd, kind } } : {}),
});

describe.concurrent("ralph's receipts on the real Claude Code CLI", () => {
  it.for([
    ["subscription", "estimate"],
    ["api key", "billed"],
  ] as const)("%s: one receipt per call, the CLI's tokens and cost exactly, labelled %s", async ([auth, kind], context) => {
    const api = await standIn(context, (n) => (n === 1 ? { text: "Planned.", usage: U1 } : { text: `Done.\n${COMPLETE}`, usage: U2 }));
    const project = workflowProject(["ralph"]);
    const env = claudeEnv(api, auth);
    const result = await runLoopx(NODE, ["run", "ralph:plan"], { cwd: project, env, timeoutMs: 90_000 });
    expect(result.code, result.stderr).toBe(0);
    const [cost1, cost2] = resultCosts(project) as [number, number];
    expect(cost1).toBeGreaterThan(0);
    expect(recordedReceipts(env)).toEqual([receipt(1, kind, U1, cost1), receipt(2, kind, U2, cost2)]);
    const other = kind === "billed" ? "estimate" : "billed";
    const money = (usd: number) => ({ [kind]: nano(usd), [other]: 0 });
    expect(await shownTotals(project, env, recordIds(env)[0]!)).toEqual({
      costUsd: money(cost1 + cost2),
      tokens: tokenSum(U1, U2),
      receipts: 2,
      models: { [MODEL]: { costUsd: money(cost1 + cost2), tokens: tokenSum(U1, U2), receipts: 2 } },
      iterations: { 1: { costUsd: money(cost1), tokens: tokenSum(U1), receipts: 1 }, 2: { costUsd: money(cost2), tokens: tokenSum(U2), receipts: 1 } },
    });
  });

  it("SIGKILL of loopx mid-call, then runs resume: the killed call's tokens are kept, the resumed call adds its own", async (context) => {
    const api = await standIn(context, (n) => (n === 1 ? { text: "Planned.", usage: U1 } : n === 2 ? { tool: { command: "sleep 60" }, usage: U2 } : { text: `Done.\n${COMPLETE}`, usage: U3 }));
    const project = workflowProject(["ralph"]);
    const env = claudeEnv(api, "subscription");
    const first = startLoopx(NODE, ["run", "ralph:plan"], { cwd: project, env, timeoutMs: 90_000 });
    await toolRunning(project, 2);
    first.child.kill("SIGKILL");
    await first.result;
    // The run's guardian ends ralph (which reports what claude used so far) and closes the run.
    const id = await waitForEvent(env, (event) => event.type === "run.end");
    const resumed = await runLoopx(NODE, ["runs", "resume", id], { cwd: project, env, timeoutMs: 90_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    const [cost1, cost3] = resultCosts(project).filter((cost) => cost > 0) as [number, number];
    expect(recordIds(env)).toEqual([id]);
    expect(events(env, id).filter((e) => e.type === "receipt").map((e) => e.n)).toEqual([1, 2, 2]);
    expect(recordedReceipts(env)).toEqual([receipt(1, "estimate", U1, cost1), receipt(2, undefined, U2), receipt(2, "estimate", U3, cost3)]);
    expect(await shownTotals(project, env, id)).toEqual({
      costUsd: { billed: 0, estimate: nano(cost1 + cost3) },
      tokens: tokenSum(U1, U2, U3),
      receipts: 3,
      models: { [MODEL]: { costUsd: { billed: 0, estimate: nano(cost1 + cost3) }, tokens: tokenSum(U1, U2, U3), receipts: 3 } },
      iterations: {
        1: { costUsd: { billed: 0, estimate: nano(cost1) }, tokens: tokenSum(U1), receipts: 1 },
        2: { costUsd: { billed: 0, estimate: nano(cost3) }, tokens: tokenSum(U2, U3), receipts: 2 },
      },
    });
  });

  it("a subscriber's run stopped by --max-cost --count-estimates after the iteration that crossed it, then extended by runs resume", async (context) => {
    const api = await standIn(context, (n) => (n === 1 ? { text: "Planned.", usage: U1 } : { text: `Done.\n${COMPLETE}`, usage: U2 }));
    const project = workflowProject(["ralph"]);
    const env = claudeEnv(api, "subscription");
    const first = await runLoopx(NODE, ["run", "--max-cost", "0.001", "--count-estimates", "ralph:plan"], { cwd: project, env, timeoutMs: 90_000 });
    expect(first.code, first.stderr).toBe(3);
    const [cost1] = resultCosts(project) as [number];
    expect(first.stderr).toContain(`loopx: budget reached: --max-cost $0.00`);
    const id = recordIds(env)[0]!;
    const more = await runLoopx(NODE, ["runs", "resume", id, "--max-cost", "5", "--count-estimates"], { cwd: project, env, timeoutMs: 90_000 });
    expect(more.code, more.stderr).toBe(0);
    const [, cost2] = resultCosts(project) as [number, number];
    expect(recordedReceipts(env)).toEqual([receipt(1, "estimate", U1, cost1), receipt(2, "estimate", U2, cost2)]);
    expect((await shownTotals(project, env, id)).costUsd).toEqual({ billed: 0, estimate: nano(cost1 + cost2) });
  });

  it("Ctrl-C mid-call: the interrupted call's tokens are reported before ralph exits 130", async (context) => {
    const api = await standIn(context, () => ({ tool: { command: "sleep 60" }, usage: U1 }));
    const project = workflowProject(["ralph"]);
    const env = claudeEnv(api, "api key");
    const run = startLoopx(NODE, ["run", "ralph:plan"], { cwd: project, env, timeoutMs: 90_000 });
    await toolRunning(project, 1);
    run.child.kill("SIGINT");
    const result = await run.result;
    expect(result.code, result.stderr).toBe(130);
    expect(recordedReceipts(env)).toEqual([receipt(1, undefined, U1)]);
    expect(sessionLog(join(project, ".ralph"))).toMatch(/Status: interrupted\n/);
  });
});
