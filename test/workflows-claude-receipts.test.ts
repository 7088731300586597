/**
 * ralph on the real Claude Code CLI (the dev dependency) against the local Messages API stand-in
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
import { RUNTIMES, runLoopx, startLoopx, waitFor } from "./helpers.js";
import { FakeAgents, recordedReceipts, sessionLog, workflowEnv, workflowProject } from "./fixtures/agents/support.js";
import { realClaudeBin, realClaudeEnv, startMessagesApi, type Answer, type MessagesApi, type Usage } from "./fixtures/agents/messages-api.js";
import { events, recordIds, waitForEvent } from "./fixtures/control/support.js";

const NODE = RUNTIMES[0]!;
const COMPLETE = "<promise>COMPLETE</promise>";
const MODEL = "claude-sonnet-4-5";
const U1: Usage = { input_tokens: 1200, output_tokens: 340, cache_read_input_tokens: 5000, cache_creation_input_tokens: 70 };
const U2: Usage = { input_tokens: 800, output_tokens: 120, cache_read_input_tokens: 6000, cache_creation_input_tokens: 0 };
const U3: Usage = { input_tokens: 30, output_tokens: 45, cache_read_input_tokens: 0, cache_creation_input_tokens: 900 };

const tokensOf = (u: Usage) => ({ input: u.input_tokens, output: u.output_tokens, cacheRead: u.cache_read_input_tokens, cacheWrite: u.cache_creation_input_tokens });

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
    const [cost1, cost2] = resultCosts(project);
    expect(cost1).toBeGreaterThan(0);
    expect(recordedReceipts(env)).toEqual([receipt(1, kind, U1, cost1), receipt(2, kind, U2, cost2)]);
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
    const [cost1, cost3] = resultCosts(project).filter((cost) => cost > 0);
    expect(recordIds(env)).toEqual([id]);
    expect(events(env, id).filter((e) => e.type === "receipt").map((e) => e.n)).toEqual([1, 2, 2]);
    expect(recordedReceipts(env)).toEqual([receipt(1, "estimate", U1, cost1), receipt(2, undefined, U2), receipt(2, "estimate", U3, cost3)]);
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
