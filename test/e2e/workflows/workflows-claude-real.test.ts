/**
 * The shipped workflows driving the real Claude Code CLI (@anthropic-ai/claude-code, a dev
 * dependency), offline: ANTHROPIC_BASE_URL points at a local stand-in for the Messages API
 * (fixtures/agents/messages-api.ts). A subscriber's usage window — a 429 with the unified
 * rate-limit headers, reset a few seconds ahead — parks the iteration until the reset and then
 * completes, on node, bun and the standalone binary; two loops on one account share the limit
 * (counted in the stand-in's request log); a cap over the window Claude reports from the API's
 * warning headers holds the next call until the reset; Claude's own refusal to skip permissions as root
 * reaches the terminal.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, type TestContext } from "vitest";
import { LOOPX_STARTS, IS_ROOT, RUNTIMES, runLoopx, waitFor, type RunOptions } from "../../helpers.js";
import { FakeAgents, lastWorkflowLine, recordedReceipts, sessionLog, workflowEnv, workflowProject } from "../../fixtures/agents/support.js";
import { limitsFile } from "../../fixtures/agents/limit-clock.js";
import { realClaudeBin, realClaudeEnv, startMessagesApi, type MessagesApi } from "../../fixtures/agents/messages-api.js";

const COMPLETE = "<promise>COMPLETE</promise>";


/** A stand-in for this test only, stopped when the test ends (tests here run concurrently). */
async function standIn(context: TestContext, answer: Parameters<typeof startMessagesApi>[0]): Promise<MessagesApi> {
  const api = await startMessagesApi(answer);
  context.onTestFinished(() => api.stop());
  return api;
}

/** The environment of a ralph run on the real CLI: the fake agents' env with the real claude first on PATH. */
function claudeRunEnv(api: MessagesApi, extra: Record<string, string> = {}): Record<string, string> {
  const env = workflowEnv(new FakeAgents(), extra);
  mkdirSync(join(env.HOME!, ".claude"), { recursive: true });
  return { ...env, ...realClaudeEnv(api, env.HOME!), PATH: `${realClaudeBin()}:${env.PATH}`, ...extra };
}

describe.concurrent("the workflows on the real Claude Code CLI, against a local Messages API", () => {
  it.concurrent.for(LOOPX_STARTS)("$name: a usage window reset a few seconds ahead parks ralph:plan, which then completes", async ({ loopx }, context) => {
    let resetsAt = 0; // a few seconds after the first request arrives
    const api = await standIn(context, (n) => (n === 1 ? { limit: { resetsAt: (resetsAt = Math.ceil(Date.now() / 1000) + 3) } } : { text: `The plan is ready.\n${COMPLETE}` }));
    const project = workflowProject(["ralph"]);
    const env = claudeRunEnv(api, { LIMIT_MARGIN: "0.5s" });
    const result = await loopx(["run", "ralph:plan"], { cwd: project, env, timeoutMs: 90_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(api.requests).toHaveLength(2);
    expect(api.requests[1]!.time).toBeGreaterThanOrEqual(resetsAt * 1000 + 500);
    expect(result.stderr).toMatch(/\nralph: usage limit \(five_hour\) — resets \d\d:\d\d:\d\d; waiting until \d\d:\d\d:\d\d \(\d+s\), then the same call runs again \[You've hit your session limit/);
    expect(lastWorkflowLine(result.stderr)).toMatch(/^ralph: Completion signal detected/);
    const log = sessionLog(join(project, ".ralph"));
    expect(log).toContain('"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":');
    expect(log).toMatch(/Status: complete\nRetries: 0\n/);
    // Each call is reported: the refused one (no tokens) with the window Claude saw, then the one that ran.
    expect(recordedReceipts(env).map((r) => [r.n, r.window, r.tokens])).toEqual([
      [1, { type: "five_hour", status: "rejected", resetsAt: new Date(resetsAt * 1000).toISOString(), source: "claude-stream" }, { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }],
      [1, undefined, { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 }],
    ]);
  });

  it("two ralph runs on one account: after the first sees the limit, the second waits without calling the API", async (context) => {
    // The reset 10 s after the first request: the second loop must start (loopx, ralph, its
    // preflight) and read the limit before it passes, which took over 4 s on a loaded CI box.
    let resetsAt = 0;
    const api = await standIn(context, (n) => (n === 1 ? { limit: { resetsAt: (resetsAt = Math.ceil(Date.now() / 1000) + 10) } } : { text: `Done.\n${COMPLETE}` }));
    const env = claudeRunEnv(api, { LIMIT_MARGIN: "0.5s" });
    const [projectA, projectB] = [workflowProject(["ralph"]), workflowProject(["ralph"])];
    const options = (cwd: string): RunOptions => ({ cwd, env, timeoutMs: 90_000 });
    const a = runLoopx(RUNTIMES[0]!, ["run", "ralph:plan"], options(projectA));
    expect(await waitFor(() => existsSync(limitsFile(env)), 60_000)).toBe(true);
    const b = runLoopx(RUNTIMES[0]!, ["run", "ralph:plan"], options(projectB));
    const [resultA, resultB] = await Promise.all([a, b]);
    expect(resultA.code, resultA.stderr).toBe(0);
    expect(resultB.code, resultB.stderr).toBe(0);
    // One request before the reset (the first loop's), then one per loop.
    expect(api.requests.map((r) => r.time < resetsAt * 1000)).toEqual([true, false, false]);
    expect(resultB.stderr).toContain("ralph: usage limit (five_hour) seen by another loop on this account");
  });

  it("a cap over the window Claude reports: 85% of the 5 h window (the API's headers) with LIMIT_CAP_5H=80% → no call until the reset, in this loop and in a second one on the account", async (context) => {
    // 8 s after the first request: on a loaded machine Claude has answered and exited and the loop
    // has read the window by then (a reading whose reset has passed is ignored, rightly).
    let resetsAt = 0;
    const api = await standIn(context, (n) =>
      n === 1 ? { text: "Planned a step.", warning: { window: "5h", utilization: 0.85, threshold: 0.8, resetsAt: (resetsAt = Math.ceil(Date.now() / 1000) + 8) } } : { text: `Done.\n${COMPLETE}` },
    );
    const env = claudeRunEnv(api, { LIMIT_CAP_5H: "80%", LIMIT_MARGIN: "0.5s" });
    const [projectA, projectB] = [workflowProject(["ralph"]), workflowProject(["ralph"])];
    const options = (cwd: string): RunOptions => ({ cwd, env, timeoutMs: 90_000 });
    const a = runLoopx(RUNTIMES[0]!, ["run", "ralph:plan"], options(projectA));
    expect(await waitFor(() => existsSync(limitsFile(env)) && readFileSync(limitsFile(env), "utf8").includes('"windows:claude:'), 60_000)).toBe(true);
    const b = runLoopx(RUNTIMES[0]!, ["run", "ralph:plan"], options(projectB));
    const [resultA, resultB] = await Promise.all([a, b]);
    expect(resultA.code, resultA.stderr).toBe(0);
    expect(resultB.code, resultB.stderr).toBe(0);
    // The first loop's first call, then its second and the second loop's first: both after the reset.
    expect(api.requests.map((r) => r.time >= resetsAt * 1000 + 500)).toEqual([false, true, true]);
    const line = /\nralph: 5h usage window at 85% \(LIMIT_CAP_5H=80%, from claude-stream\) — resets \d\d:\d\d:\d\d; waiting until \d\d:\d\d:\d\d \(\d+s\), then the call starts\n/;
    expect(resultA.stderr).toMatch(line);
    expect(resultB.stderr).toMatch(line);
    const log = sessionLog(join(projectA, ".ralph"));
    expect(log).toContain('"type":"rate_limit_event","rate_limit_info":{"status":"allowed_warning","resetsAt":');
    expect(log).toMatch(/Usage limit: 5h usage window at 85% \(LIMIT_CAP_5H=80%, from claude-stream\) — resets/);
  });

  it("a 7 d cap over the window Claude reports (92%, LIMIT_CAP_7D=90%): no call, the run ends resumable (exit 75); `loopx runs resume` goes on after the reset", async (context) => {
    let resetsAt = 0;
    const api = await standIn(context, (n) =>
      n === 1 ? { text: "Planned a step.", warning: { window: "7d", utilization: 0.92, threshold: 0.75, resetsAt: (resetsAt = Math.ceil(Date.now() / 1000) + 8) } } : { text: `Done.\n${COMPLETE}` },
    );
    const project = workflowProject(["ralph"]);
    const env = claudeRunEnv(api, { LIMIT_CAP_7D: "90%" });
    const paused = await runLoopx(RUNTIMES[0]!, ["run", "ralph:plan"], { cwd: project, env, timeoutMs: 90_000 });
    expect(paused.code, paused.stderr).toBe(1);
    expect(api.requests).toHaveLength(1);
    expect(paused.stderr).toContain("loopx: script ralph:plan exited with code 75\n");
    const last = lastWorkflowLine(paused.stderr);
    expect(last).toMatch(/^ralph: Paused: 7d usage window at 92% \(LIMIT_CAP_7D=90%, from claude-stream\), resets \S+Z \(\d\d:\d\d:\d\d local\) — go on with: loopx runs resume \S+ \(exit code 75; session log: /);
    const id = /loopx runs resume (\S+) \(exit code 75/.exec(last)![1]!;
    expect(await waitFor(() => Date.now() > resetsAt * 1000 + 200, 30_000)).toBe(true);
    const resumed = await runLoopx(RUNTIMES[0]!, ["runs", "resume", id], { cwd: project, env, timeoutMs: 90_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(api.requests).toHaveLength(2);
    expect(lastWorkflowLine(resumed.stderr)).toMatch(/^ralph: Completion signal detected/);
  });

  it.runIf(IS_ROOT)("as root without IS_SANDBOX: converge shows Claude's own message and what to do", async (context) => {
    const api = await standIn(context, () => ({ text: "unused" }));
    const project = workflowProject(["converge"]);
    const env = claudeRunEnv(api, { CONVERGE_TASK: "Write ok into done.txt.", CONVERGE_GATE: "true", MAX_RETRIES: "1" });
    delete env.IS_SANDBOX;
    const result = await runLoopx(RUNTIMES[0]!, ["run", "converge"], { cwd: project, env, timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain("converge:   claude stderr: --dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons\n");
    expect(result.stderr).toContain("set IS_SANDBOX=1 if this is a sandbox or container");
    expect(api.requests).toHaveLength(0);
    expect(spawnSync("ls", [join(project, ".converge", "logs")], { encoding: "utf8" }).stdout).toMatch(/converge-\d{8}-\d{6}\.log/);
  });
});
