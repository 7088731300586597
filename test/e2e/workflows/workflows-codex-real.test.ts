/**
 * The shipped workflows driving the real OpenAI Codex CLI (@openai/codex, installed by scripts/agent-clis.mjs, its
 * native binary), offline: $CODEX_HOME/config.toml makes a local stand-in for the Responses API
 * (fixtures/agents/responses-api.ts) the model provider, and the stand-in's function calls make
 * codex's own shell tool run commands for real (git commit, npm test, sleep).
 * Expensive scenarios (several codex calls, or a wait for the end of a minute) run on node only;
 * the cheap ones (a dropped stream recovered; Ctrl-C and --timeout while codex's tool blocks) on
 * node, bun and the standalone binary.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, type TestContext } from "vitest";
import { LOOPX_STARTS, ROOT, taggedSurvivors, waitFor } from "../../helpers.js";
import { FakeAgents, lastWorkflowLine, sessionLog, workflowEnv, workflowProject } from "../../fixtures/agents/support.js";
import { realCodexBin, realCodexEnv, startResponsesApi, type Reply, type ResponsesApi } from "../../fixtures/agents/responses-api.js";

const COMPLETE = "<promise>COMPLETE</promise>";
const NODE = LOOPX_STARTS[0]!;

/** A stand-in for this test only, stopped when the test ends (tests here run concurrently). */
async function standIn(context: TestContext, reply: (n: number, body: Record<string, any>) => Reply): Promise<ResponsesApi> {
  const api = await startResponsesApi(reply);
  context.onTestFinished(() => api.stop());
  return api;
}

/** A workflow run's environment: isolated, the real codex first on PATH, AGENT_TYPE=codex, git identity for its commits. */
function codexRunEnv(api: ResponsesApi, extra: Record<string, string> = {}, streamRetries?: number): Record<string, string> {
  const env = workflowEnv(new FakeAgents());
  return {
    ...env,
    ...realCodexEnv(api, env.HOME!, streamRetries),
    PATH: `${realCodexBin()}:${env.PATH}`,
    AGENT_TYPE: "codex",
    GIT_AUTHOR_NAME: "Codex",
    GIT_AUTHOR_EMAIL: "codex@example.com",
    GIT_COMMITTER_NAME: "Codex",
    GIT_COMMITTER_EMAIL: "codex@example.com",
    ...extra,
  };
}

/** Every ralph session log of the project. */
const sessionLogs = (project: string): string[] => readdirSync(join(project, ".ralph", "logs")).map((name) => readFileSync(join(project, ".ralph", "logs", name), "utf8"));

/** What codex's tool sent back to the model: the function_call_output items of a request. */
const toolOutputs = (body: Record<string, any>): string[] => (body.input ?? []).filter((i: any) => i?.type === "function_call_output").map((i: any) => String(i.output));

/** The receipt events of every run recorded under this environment, oldest run first. */
function receipts(env: Record<string, string>): Array<Record<string, any>> {
  const dir = join(env.XDG_STATE_HOME!, "loopx", "runs");
  const files = existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith(".jsonl")) : [];
  const events = files.flatMap((name) => readFileSync(join(dir, name), "utf8").trim().split("\n").filter(Boolean).map((line) => JSON.parse(line)));
  return events.filter((event) => event.type === "receipt").sort((a, b) => a.time.localeCompare(b.time));
}

/** One codex call's receipt: `requests` stand-in responses (each USAGE), in buckets that do not overlap. */
const codexReceipt = (requests: number) => ({
  agent: "codex",
  agentVersion: CODEX_VERSION,
  provider: "openai",
  model: "gpt-5-codex",
  tokens: { input: 600 * requests, cacheRead: 400 * requests, cacheWrite: 0, output: 40 * requests, reasoning: 10 * requests },
});
const CODEX_VERSION = JSON.parse(readFileSync(join(ROOT, "test", "agent-clis", "locked", "node_modules", "@openai", "codex", "package.json"), "utf8")).version;

const git = (cwd: string, ...args: string[]): string => spawnSync("git", args, { cwd, encoding: "utf8" }).stdout;

describe.concurrent("the workflows on the real Codex CLI, against a local Responses API", () => {
  it("node: ralph plan, then build, to completion; codex's own tool commits each time", async (context) => {
    const commands = [
      "mkdir -p .ralph && printf -- '- [ ] say hello\\n' > .ralph/implementation_plan.md && git add .ralph/implementation_plan.md && git commit -qm 'plan: say hello'",
      "echo hello > hello.txt && sed -i 's/- \\[ \\]/- [x]/' .ralph/implementation_plan.md && git add hello.txt .ralph/implementation_plan.md && git commit -qm 'build: say hello'",
    ];
    // Odd requests start a call (a shell command), even ones carry its output (the final answer).
    const api = await standIn(context, (n) => (n % 2 === 1 ? { exec: commands[(n - 1) / 2]! } : { text: `Committed.\n${COMPLETE}` }));
    const project = workflowProject(["ralph"], { "specs/hello.md": "Say hello in hello.txt.\n" });
    const env = codexRunEnv(api, { BUDGET_USD: "5" });
    const plan = await NODE.loopx(["run", "ralph:plan"], { cwd: project, env, timeoutMs: 90_000 });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stderr).toContain("ralph: plan mode, agent codex (codex exec --json --dangerously-bypass-approvals-and-sandbox -)");
    expect(plan.stderr.split("\n").filter((line) => line.includes("BUDGET_USD=5 does not apply: codex reports tokens, not cost"))).toHaveLength(1);
    const build = await NODE.loopx(["run", "ralph:build"], { cwd: project, env, timeoutMs: 90_000 });
    expect(build.code, build.stderr).toBe(0);
    expect(lastWorkflowLine(build.stderr)).toMatch(/^ralph: Completion signal detected/);
    expect(git(project, "log", "--format=%an %s")).toBe("Codex build: say hello\nCodex plan: say hello\n");
    expect(readFileSync(join(project, "hello.txt"), "utf8")).toBe("hello\n");
    expect(readFileSync(join(project, ".ralph", "implementation_plan.md"), "utf8")).toBe("- [x] say hello\n");
    expect(api.requests).toHaveLength(4);
    expect(toolOutputs(api.requests[3]!.body).join("\n")).toContain("Process exited with code 0"); // codex ran the commit itself
    // Each codex call (two responses each) is one receipt in its run's record.
    expect(receipts(env)).toEqual([expect.objectContaining(codexReceipt(2)), expect.objectContaining(codexReceipt(2))]);
  });

  it("node: a resumed codex thread reports its cumulative usage; the receipt is the new turn's share only", async (context) => {
    const api = await standIn(context, () => ({ text: `Planned.\n${COMPLETE}` }));
    const project = workflowProject(["ralph"]);
    const env = codexRunEnv(api);
    const first = await NODE.loopx(["run", "ralph:plan"], { cwd: project, env, timeoutMs: 60_000 });
    expect(first.code, first.stderr).toBe(0);
    const resume = { ...env, AGENT_ARGS: "exec resume --last --json --dangerously-bypass-approvals-and-sandbox -" };
    const second = await NODE.loopx(["run", "ralph:plan"], { cwd: project, env: resume, timeoutMs: 60_000 });
    expect(second.code, second.stderr).toBe(0);
    expect(sessionLogs(project).join("").match(/"input_tokens":2000/g)).toHaveLength(1); // codex's own count: both turns
    expect(receipts(env)).toEqual([expect.objectContaining(codexReceipt(1)), expect.objectContaining(codexReceipt(1))]);
  });

  it("node: loopx run --max-tokens stops a codex loop once its receipts reach the budget (exit 3); BUDGET_USD is said not to apply", async (context) => {
    const api = await standIn(context, () => ({ text: "Planned a little; more to do." })); // never complete
    const project = workflowProject(["ralph"]);
    const env = codexRunEnv(api, { BUDGET_USD: "5" });
    const result = await NODE.loopx(["run", "--max-tokens", "1200", "ralph:plan"], { cwd: project, env, timeoutMs: 90_000 });
    expect(result.code, result.stderr).toBe(3);
    expect(api.requests).toHaveLength(2); // 650 counted tokens a call (its 400 cache reads are not): the budget is reached after the second
    expect(receipts(env)).toEqual([expect.objectContaining({ n: 1, ...codexReceipt(1) }), expect.objectContaining({ n: 2, ...codexReceipt(1) })]);
    expect(result.stderr.split("\n").filter((line) => line.includes("BUDGET_USD=5 does not apply: codex reports tokens, not cost"))).toHaveLength(1);
  });

  it("node: converge over two rounds — a real failing `npm test` gate, then the read-only judge approves", async (context) => {
    const script: Reply[] = [
      { exec: "echo 41 > answer.txt" }, // round 1: wrong
      { text: "Wrote the answer." },
      { exec: "echo 42 > answer.txt" }, // round 2: the gate's output told it
      { text: "Fixed the answer." },
      { exec: "echo approved > judge-was-here.txt" }, // the judge tries to write: its sandbox refuses
      { text: "The answer is right.\n<verdict>APPROVE</verdict>" },
    ];
    const api = await standIn(context, (n) => script[n - 1] ?? { text: "unexpected call" });
    const project = workflowProject(["converge"], {
      "package.json": JSON.stringify({ name: "answer", private: true, scripts: { test: "node check.js" } }),
      "check.js": "const got = require('fs').readFileSync('answer.txt', 'utf8').trim(); if (got !== '42') { console.error('answer.txt: expected 42, got ' + got); process.exit(1); }\n",
    });
    const env = codexRunEnv(api, { CONVERGE_TASK: "Write the answer, 42, into answer.txt.", CONVERGE_GATE: "npm test", CONVERGE_MAX_ROUNDS: "3" });
    const result = await NODE.loopx(["run", "converge"], { cwd: project, env, timeoutMs: 90_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(readFileSync(join(project, "answer.txt"), "utf8")).toBe("42\n");
    expect(existsSync(join(project, "judge-was-here.txt"))).toBe(false);
    expect(api.requests).toHaveLength(6);
    // Round 2's worker was told why the gate failed (npm test's own output).
    expect(JSON.stringify(api.requests[2]!.body.input)).toContain("answer.txt: expected 42, got 41");
    expect(lastWorkflowLine(result.stderr)).toMatch(/^converge: converged after 2 rounds \(\d+s\): gate `npm test` passed and the judge approved; rounds 1: gate failed · 2: approved$/);
    // The judge's write ran in codex's read-only sandbox, and failed there.
    expect(toolOutputs(api.requests[5]!.body).join("\n")).toContain("judge-was-here.txt: Read-only file system");
  });

  it("node: a usage-limit 429 is parked until the end of the minute codex names, then the same call completes — no call before the reset", async (context) => {
    let resetsAt = 0; // epoch seconds, set when the first request arrives
    const api = await standIn(context, (n) => {
      if (n === 1) resetsAt = Math.floor(Date.now() / 1000) + 2;
      return Date.now() < resetsAt * 1000 ? { limit: { resetsAt } } : { text: `Planned.\n${COMPLETE}` };
    });
    const project = workflowProject(["ralph"]);
    const env = codexRunEnv(api, { LIMIT_MARGIN: "0.5s" });
    const result = await NODE.loopx(["run", "ralph:plan"], { cwd: project, env, timeoutMs: 120_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(api.requests).toHaveLength(2);
    const minuteEnd = (Math.floor(resetsAt / 60) + 1) * 60_000; // codex said "try again at <that minute>"
    expect(api.requests[1]!.time).toBeGreaterThanOrEqual(minuteEnd + 500);
    const shown = /usage limit \(usage_limit\) — resets (\d\d):(\d\d):(\d\d); waiting until/.exec(result.stderr);
    expect(shown, result.stderr).not.toBeNull();
    expect(Number(shown![3])).toBe(0); // the end of the named minute, never earlier than the true reset
    // The live view says the limit once (codex prints it as `error` and again as `turn.failed`).
    expect(result.stderr.split("\n").filter((line) => line.startsWith("✗ You’ve hit your usage limit"))).toHaveLength(1);
    expect(sessionLog(join(project, ".ralph"))).toMatch(/Status: complete\nRetries: 0\n/);
  }, 120_000); // the wait runs to the end of a minute: up to ~62 s

  it("node: AGENT_IDLE_TIMEOUT counts no progress — codex's Reconnecting… events do not keep a dead API's call alive", async (context) => {
    const api = await standIn(context, () => ({ drop: true }));
    const project = workflowProject(["ralph"]);
    const env = codexRunEnv(api, { AGENT_IDLE_TIMEOUT: "3s", MAX_RETRIES: "1" }, 8);
    const result = await NODE.loopx(["run", "ralph:plan"], { cwd: project, env, timeoutMs: 90_000 });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain("ralph: attempt 1 failed: no completed item or turn for 3s (AGENT_IDLE_TIMEOUT): ended codex and its processes\n");
    // codex's backoff puts its 7th request ~6 s after the turn started; every event re-arming the timer lets it get there.
    expect(api.requests.length).toBeLessThan(7);
    expect(await waitFor(() => taggedSurvivors(env.HARDENING_TAG!).length === 0, 10_000)).toBe(true);
  });

  it("node: an API that hangs mid-stream: AGENT_IDLE_TIMEOUT ends codex and everything it started", async (context) => {
    const api = await standIn(context, () => ({ hang: true }));
    const project = workflowProject(["ralph"]);
    // 10 s: the timer starts with codex, whose first request came after 1.6 s here; a loaded CI
    // machine (two cores, two test files at once) made it later than 5 s, twice in a row.
    const env = codexRunEnv(api, { AGENT_IDLE_TIMEOUT: "10s", MAX_RETRIES: "1" });
    const result = await NODE.loopx(["run", "ralph:plan"], { cwd: project, env, timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain("ralph: attempt 1 failed: no completed item or turn for 10s (AGENT_IDLE_TIMEOUT): ended codex and its processes\n");
    expect(api.requests).toHaveLength(1);
    expect(await waitFor(() => taggedSurvivors(env.HARDENING_TAG!).length === 0, 10_000)).toBe(true);
  });

  it.concurrent.for(LOOPX_STARTS)("$name: a dropped stream codex recovers from is no failure", async ({ loopx }, context) => {
    const api = await standIn(context, (n) => (n === 1 ? { drop: true } : { text: `Recovered.\n${COMPLETE}` }));
    const project = workflowProject(["ralph"]);
    const env = codexRunEnv(api);
    const result = await loopx(["run", "ralph:plan"], { cwd: project, env, timeoutMs: 90_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(api.requests).toHaveLength(2);
    expect(result.stderr).toContain("· Reconnecting... 1/2 (stream disconnected before completion");
    expect(result.stderr).not.toContain("attempt 1 failed");
    expect(sessionLog(join(project, ".ralph"))).toMatch(/Status: complete\nRetries: 0\n/);
    expect(receipts(env)).toEqual([expect.objectContaining({ type: "receipt", n: 1, workflow: "ralph", ...codexReceipt(1) })]);
  });

  const stops = LOOPX_STARTS.flatMap((channel) => [
    { ...channel, how: "Ctrl-C", options: [] as string[], code: 130 },
    // 25 s: on a loaded 2-core box ralph's TypeScript and codex's start took more than 10 s
    // before codex's tool ran (the run timed out before the command it should interrupt).
    { ...channel, how: "--timeout", options: ["--timeout", "25s"], code: 124 },
  ]);
  it.concurrent.for(stops)("$name: $how while codex's tool blocks leaves no process behind", async ({ loopx, options, code, how }, context) => {
    // The command proves it carries the run's tag (so the survivor check sees it), then blocks.
    const api = await standIn(context, () => ({ exec: 'echo "$HARDENING_TAG" > started.txt; sleep 300' }));
    const project = workflowProject(["ralph"]);
    const env = codexRunEnv(api);
    const started = join(project, "started.txt");
    const result = await loopx(["run", ...options, "ralph:plan"], {
      cwd: project,
      env,
      timeoutMs: 90_000,
      onSpawn: (child) => {
        if (how === "Ctrl-C") void waitFor(() => existsSync(started), 60_000).then(() => setTimeout(() => child.kill("SIGINT"), 300));
      },
    });
    expect(result.code, result.stderr).toBe(code);
    expect(readFileSync(started, "utf8").trim()).toBe(env.HARDENING_TAG);
    expect(await waitFor(() => taggedSurvivors(env.HARDENING_TAG!).length === 0, 10_000)).toBe(true);
    expect(sessionLog(join(project, ".ralph"))).toMatch(how === "Ctrl-C" ? /Exit Reason: Interrupted by SIGINT\n/ : /Exit Reason: Timed out by loopx --timeout/);
  });
});
