/**
 * Usage limits in the shipped workflows (deliverable 6), with fake agents printing what
 * each CLI prints when it hits one: Claude's `rate_limit_event` rejected with `resetsAt`, a 429
 * without a reset time (API-key users: `api_retry` events), Codex's usage-limit error. The
 * iteration parks until the reset (the wait is no retry), says so on stderr, in the session log
 * and as a note in the run's record, shares what it saw with the other loops of the account, and
 * ends with its own exit code past MAX_LIMIT_WAIT. Under node; the real Claude Code CLI against a
 * local API stand-in is workflows-claude-real.test.ts.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, NODE as NODE_EXE, RUNTIMES, runCommand, runLoopx, taggedSurvivors, waitFor, type RunResult } from "../../helpers.js";
import { LATER, callTime, limitsFile, resetsAfterCall, resetsAt, timed } from "../../fixtures/agents/limit-clock.js";
import { FakeAgents, claudeApiRetry429Stream, claudeLimitStream, claudeStream, codexLimitStream, codexStream, lastWorkflowLine, sessionLog, workflowEnv, workflowProject } from "../../fixtures/agents/support.js";

const NODE = RUNTIMES[0]!;
const COMPLETE = "<promise>COMPLETE</promise>";

function run(cwd: string, args: string[], env: Record<string, string>, onSpawn?: Parameters<typeof runLoopx>[2]["onSpawn"]): Promise<RunResult> {
  return runLoopx(NODE, args, { cwd, env, onSpawn, timeoutMs: 60_000 });
}


/** The newest run's `loopx runs show` text, in the environment `env` (its XDG_STATE_HOME). */
async function showLatestRun(cwd: string, env: Record<string, string>): Promise<string> {
  const list = await run(cwd, ["runs", "--json"], env);
  const id = JSON.parse(list.stdout.split("\n")[0]!).id as string;
  const show = await run(cwd, ["runs", "show", id], env);
  expect(show.code, show.stderr).toBe(0);
  return show.stdout;
}


describe("usage limits: park until the reset, then the same iteration again", () => {
  it.concurrent("claude's rate_limit_event rejected with resetsAt: waits for the reset, runs again, no retry counted; a note in the record", async () => {
    const resetsAt = Math.ceil(Date.now() / 1000) + 2;
    const allowed = JSON.stringify({ type: "rate_limit_event", rate_limit_info: { status: "allowed", resetsAt: resetsAt + 3600, rateLimitType: "five_hour" } });
    const [init, ...rest] = claudeStream(`Planned.\n${COMPLETE}`, { cost: 0.01 }).trimEnd().split("\n");
    const fake = new FakeAgents()
      .step(1, { out: claudeLimitStream(resetsAt), code: 1 })
      .step(2, { out: [init, allowed, ...rest].join("\n") + "\n", run: timed(2) }); // "allowed" on a normal run: no reason to wait
    const project = workflowProject(["ralph"]);
    const env = workflowEnv(fake, { LIMIT_MARGIN: "0.5s" });
    const result = await run(project, ["run", "ralph:plan"], env);
    expect(result.code, result.stderr).toBe(0);
    expect(fake.calls()).toBe(2);
    expect(callTime(fake, 2)).toBeGreaterThanOrEqual(resetsAt * 1000 + 500);
    expect(result.stderr).toMatch(/\nralph: usage limit \(five_hour\) — resets \d\d:\d\d:\d\d; waiting until \d\d:\d\d:\d\d \(\d+s\), then the same call runs again \[You've hit your session limit · resets 7:55pm \(UTC\)\]\n/);
    expect(result.stderr).not.toContain("attempt 1 failed");
    expect(lastWorkflowLine(result.stderr)).toMatch(/^ralph: Completion signal detected/);
    const log = sessionLog(join(project, ".ralph"));
    expect(log).toMatch(/Usage limit: usage limit \(five_hour\) — resets/);
    expect(log).toMatch(/Usage limit: waited \d+s, resuming\n/);
    expect(log).toMatch(/Status: complete\nRetries: 0\n/);
    expect(await showLatestRun(project, env)).toMatch(/\n {2}note \d\d:\d\d:\d\d · ralph: usage limit \(five_hour\) — resets .* then the same call runs again/);
  });

  it.concurrent("a 429 without a reset time (API key: api_retry events, then a 429 result): a bounded back-off, then the same iteration", async () => {
    const fake = new FakeAgents().step(1, { out: claudeApiRetry429Stream(), code: 1 }).step(2, { out: claudeStream(`Done.\n${COMPLETE}`) });
    const project = workflowProject(["ralph"]);
    const result = await run(project, ["run", "ralph:plan"], workflowEnv(fake, { LIMIT_BACKOFF: "1s" }));
    expect(result.code, result.stderr).toBe(0);
    expect(fake.calls()).toBe(2);
    expect(result.stderr).toContain("ralph: usage limit (rate_limit) — no reset time given: backing off 1s; waiting until ");
    expect(sessionLog(join(project, ".ralph"))).toMatch(/Retries: 0\n/);
  });

  it.concurrent("a 429 rate_limit_event without resetsAt (no unified headers) backs off too", async () => {
    const fake = new FakeAgents().step(1, { out: claudeLimitStream(undefined), code: 1 }).step(2, { out: claudeStream(`Done.\n${COMPLETE}`) });
    const project = workflowProject(["ralph"]);
    const result = await run(project, ["run", "ralph:plan"], workflowEnv(fake, { LIMIT_BACKOFF: "1s" }));
    expect(result.code, result.stderr).toBe(0);
    expect(fake.calls()).toBe(2);
    expect(result.stderr).toContain("ralph: usage limit (rate_limit) — no reset time given: backing off 1s");
  });

  it.concurrent("codex's usage-limit error: parked, then the same iteration runs again", async () => {
    const fake = new FakeAgents()
      .step(1, { out: codexLimitStream("You've hit your usage limit. Visit https://chatgpt.com/codex/settings/usage to purchase more credits or try again later."), code: 1 })
      .step(2, { out: codexStream(`Done.\n${COMPLETE}`) });
    const project = workflowProject(["ralph"]);
    const result = await run(project, ["run", "ralph:plan"], workflowEnv(fake, { AGENT_TYPE: "codex", LIMIT_BACKOFF: "1s" }));
    expect(result.code, result.stderr).toBe(0);
    expect(fake.calls()).toBe(2);
    expect(result.stderr).toContain("ralph: usage limit (usage_limit) — no reset time given: backing off 1s");
  });

  it.concurrent("a reset beyond MAX_LIMIT_WAIT ends the run at once, paused and resumable: exit code 75 and the `loopx runs resume` command", async () => {
    const fake = new FakeAgents().step("default", { out: claudeLimitStream(Math.ceil(Date.now() / 1000) + 3600, "seven_day"), code: 1 });
    const project = workflowProject(["ralph"]);
    const started = Date.now();
    const result = await run(project, ["run", "ralph:plan"], workflowEnv(fake, { MAX_LIMIT_WAIT: "10m" }));
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain("loopx: script ralph:plan exited with code 75\n");
    expect(lastWorkflowLine(result.stderr)).toMatch(
      /^ralph: Paused: usage limit \(seven_day\): waiting until .* would exceed MAX_LIMIT_WAIT=10m \(0s waited already\) — go on with: loopx runs resume \S+ \(exit code 75;/,
    );
    expect(fake.calls()).toBe(1);
    expect(sessionLog(join(project, ".ralph"))).toMatch(/Status: limit\n[\s\S]*Exit Code: 75\n/);
  });

  it.concurrent("Ctrl-C while parked: exit 130, nothing left, and `loopx runs show` says what it waited for", async () => {
    const fake = new FakeAgents().step(1, { out: claudeLimitStream(Math.ceil(Date.now() / 1000) + 600), code: 1 });
    const project = workflowProject(["ralph"]);
    const env = workflowEnv(fake);
    const result = await run(project, ["run", "ralph:plan"], env, (child) => {
      void waitFor(() => existsSync(limitsFile(env)), 30_000).then(() => setTimeout(() => child.kill("SIGINT"), 300));
    });
    expect(result.code, result.stderr).toBe(130);
    expect(await waitFor(() => taggedSurvivors(env.HARDENING_TAG!).length === 0, 10_000)).toBe(true);
    expect(fake.calls()).toBe(1);
    expect(sessionLog(join(project, ".ralph"))).toMatch(/Exit Reason: Interrupted by SIGINT\nExit Code: 130\n/);
    const shown = await showLatestRun(project, env);
    expect(shown).toMatch(/^run \S+ · interrupted by SIGINT · 1 iteration/);
    expect(shown).toMatch(/\n {2}note \d\d:\d\d:\d\d · ralph: usage limit \(five_hour\) — resets \d\d:\d\d:\d\d; waiting until/);
  });

  it.concurrent("two loops on one account: after the first sees a limit, the second waits before calling its agent", async () => {
    // The reset is 10 s after the first loop's agent call: time for the second loop to start and
    // look at the shared limit before it resets, however loaded the machine.
    const first = new FakeAgents().step(1, { out: claudeLimitStream(LATER), run: resetsAfterCall(1, 10), code: 1 }).step(2, { out: claudeStream(`A done.\n${COMPLETE}`), run: timed(2) });
    const second = new FakeAgents().step(1, { out: claudeStream(`B done.\n${COMPLETE}`), run: timed(1) });
    const env = workflowEnv(first, { LIMIT_MARGIN: "0.5s" });
    const envB = { ...env, PATH: env.PATH!.replace(first.bin, second.bin), FAKE_AGENT_DIR: second.dir };
    const [projectA, projectB] = [workflowProject(["ralph"]), workflowProject(["ralph"])];
    const a = run(projectA, ["run", "ralph:plan"], env);
    expect(await waitFor(() => existsSync(limitsFile(env)), 30_000)).toBe(true);
    const b = await run(projectB, ["run", "ralph:plan"], envB);
    const resultA = await a;
    expect(resultA.code, resultA.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    expect(second.calls()).toBe(1);
    expect(callTime(second, 1)).toBeGreaterThanOrEqual(resetsAt(first, 1) * 1000 + 500);
    expect(b.stderr).toMatch(/\nralph: usage limit \(five_hour\) seen by another loop on this account — resets \d\d:\d\d:\d\d; waiting until/);
  });

  it.concurrent("on a terminal: a countdown on one line while parked, cleared before the run goes on", async () => {
    // Room for loopx, ralph and its preflight to start on a loaded box before the limit is seen.
    const resetsAt = Math.ceil(Date.now() / 1000) + 7;
    const fake = new FakeAgents().step(1, { out: claudeLimitStream(resetsAt), code: 1 }).step(2, { out: claudeStream(`Done.\n${COMPLETE}`) });
    const project = workflowProject(["ralph"]);
    const env = workflowEnv(fake, { LIMIT_MARGIN: "0.5s", TERM: "xterm-256color", LOOPX_PROGRESS: "0" });
    const command = [NODE_EXE, BIN, "run", "ralph:plan"].map((arg) => `'${arg}'`).join(" ");
    const result = await runCommand("script", ["-qfec", command, "/dev/null"], { cwd: project, env, timeoutMs: 60_000 });
    expect(result.code, result.stdout).toBe(0);
    const screen = result.stdout; // script(1) puts the terminal's output on stdout
    expect(screen).toMatch(/\r\x1b\[Kralph: waiting for the usage limit · [1-8]s left/);
    expect(screen).toContain("\r\x1b[K· session"); // cleared, then the next attempt's view
    expect(fake.calls()).toBe(2);
  });
});
