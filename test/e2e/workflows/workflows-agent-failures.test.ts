/**
 * What the shipped workflows make of an agent that fails: its own stderr on the
 * terminal with a known cause explained, a stream without JSON events explained, arguments added
 * to a preset (AGENT_EXTRA_ARGS), an agent that hangs (AGENT_IDLE_TIMEOUT), an API error shown as
 * an error, multi-line tool output kept on its lines, an interrupted iteration's cost, and what
 * converge and ralph say when Ctrl-C or a loopx time limit ends them. Fake agents, under node.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RUNTIMES, processAlive, runLoopx, taggedSurvivors, waitFor, type RunResult } from "../../helpers.js";
import { FakeAgents, claudeStream, lastWorkflowLine, sessionLog, workflowEnv, workflowProject } from "../../fixtures/agents/support.js";

const NODE = RUNTIMES[0]!;
const COMPLETE = "<promise>COMPLETE</promise>";
const ROOT_REFUSAL = "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons";

function run(cwd: string, args: string[], env: Record<string, string>, onSpawn?: Parameters<typeof runLoopx>[2]["onSpawn"]): Promise<RunResult> {
  return runLoopx(NODE, args, { cwd, env, onSpawn, timeoutMs: 60_000 });
}

/** A Claude stream whose `result` event gets `patch` (an error result as Claude reports it). */
const patchResult = (stream: string, patch: Record<string, unknown>): string =>
  stream
    .trimEnd()
    .split("\n")
    .map((line) => {
      const event = JSON.parse(line);
      return JSON.stringify(event.type === "result" ? { ...event, ...patch } : event);
    })
    .join("\n") + "\n";

const convergeEnv = (fake: FakeAgents, extra: Record<string, string> = {}) =>
  workflowEnv(fake, { CONVERGE_TASK: "Write ok into done.txt.", CONVERGE_GATE: "grep -qx ok done.txt", ...extra });

describe("the agent's own error reaches the user", () => {
  it.concurrent("converge: claude refusing to run as root — its message and the fix on the terminal and in converge's log", async () => {
    const fake = new FakeAgents().step("default", { out: "", err: `${ROOT_REFUSAL}\n`, code: 1 });
    const project = workflowProject(["converge"]);
    const result = await run(project, ["run", "converge"], convergeEnv(fake, { MAX_RETRIES: "2" }));
    expect(result.code, result.stderr).toBe(1);
    expect(fake.calls()).toBe(2);
    const explained = "claude exited with code 1 — Claude Code refuses --dangerously-skip-permissions as root: set IS_SANDBOX=1 if this is a sandbox or container, or run as another user";
    expect(result.stderr).toContain(`converge: round 1: worker attempt 1 failed: ${explained} — retrying\nconverge:   claude stderr: ${ROOT_REFUSAL}\n`);
    expect(lastWorkflowLine(result.stderr)).toContain(`the worker agent failed 2 times (MAX_RETRIES=2): ${explained}`);
    const logs = join(project, ".converge", "logs");
    const log = sessionLog(join(project, ".converge"));
    expect(log).toContain(`${ROOT_REFUSAL}\nAttempt 1 failed: ${explained}\n`);
    expect(readFileSync(join(logs, ".gitignore"), "utf8")).toContain("*\n");
  });

  it.concurrent("ralph: the last lines of the agent's stderr (at most 10) on the terminal; a missing login explained, and it ends the loop at once (class auth, policy stop)", async () => {
    const err = Array.from({ length: 14 }, (_, i) => `line ${i + 1}`).join("\n") + "\n";
    const notLoggedIn = patchResult(claudeStream("Not logged in · Please run /login"), { is_error: true, subtype: "success", api_error_status: null });
    const fake = new FakeAgents().step(1, { err, code: 1 }).step(2, { out: notLoggedIn, code: 1 }).step(3, { out: claudeStream(`Done.\n${COMPLETE}`) });
    const project = workflowProject(["ralph"]);
    const result = await run(project, ["run", "ralph:plan"], workflowEnv(fake));
    expect(result.code, result.stderr).toBe(1);
    const shown = result.stderr.split("\n").filter((l) => l.startsWith("ralph:   claude stderr: "));
    expect(shown).toEqual(Array.from({ length: 10 }, (_, i) => `ralph:   claude stderr: line ${i + 5}`));
    expect(fake.calls()).toBe(2); // no retry after the login failure
    expect(lastWorkflowLine(result.stderr)).toMatch(/^ralph: Agent unusable \(auth, policy stop, no retry\): claude exited with code 1 — claude is not logged in: run `claude` once and \/login, or set ANTHROPIC_API_KEY \(exit code 6; session log: /);
    const log = sessionLog(join(project, ".ralph"));
    expect(log).toContain("line 1\nline 2\n"); // the log has all of it
    expect(log).toMatch(/Attempt 1 class: tool_or_cli_crash; evidence: exit=1: line 14; policy: retry \(retrying\)\n/);
    expect(log).toMatch(/Attempt 2 class: auth; evidence: result\.result matched "Not logged in": .*; policy: stop \(the loop ends now, no retry\)\n/);
  });

  it.concurrent("ralph: a signed-out claude (`claude auth status` says so) ends the run before the first call, in one line, exit code 6", async () => {
    const fake = new FakeAgents().step(1, { out: claudeStream(`Done.\n${COMPLETE}`) });
    const project = workflowProject(["ralph"]);
    const result = await run(project, ["run", "ralph:plan"], workflowEnv(fake, { FAKE_AGENT_SIGNED_OUT: "1" }));
    expect(result.code, result.stderr).toBe(1);
    expect(fake.calls()).toBe(0);
    expect(result.stderr.split("\n").filter((l) => l.startsWith("ralph:"))).toEqual([
      "ralph: claude is not logged in (`claude auth status`): run `claude` once and /login, or set ANTHROPIC_API_KEY (exit code 6)",
    ]);
  });
});

describe("retries back off", () => {
  it.concurrent("ralph: a failed agent call is retried after an exponential, jittered wait (RETRY_BACKOFF), said on stderr", async () => {
    const at = 'date +%s%3N > "$dir/$n.at"';
    const fake = new FakeAgents()
      .step(1, { err: "boom\n", code: 1, run: at })
      .step(2, { err: "boom\n", code: 1, run: at })
      .step(3, { out: claudeStream(`Done.\n${COMPLETE}`), run: at });
    const project = workflowProject(["ralph"]);
    const result = await run(project, ["run", "ralph:plan"], workflowEnv(fake, { RETRY_BACKOFF: "400ms" }));
    expect(result.code, result.stderr).toBe(0);
    const waits = [...result.stderr.matchAll(/attempt (\d) failed: .* — retrying in (\d+\.\d)s\n/g)].map((m) => Number(m[2]) * 1000);
    expect(waits).toHaveLength(2);
    // 50-100 % of 400 ms, then of 800 ms (shown to 0.1 s).
    expect(waits[0]).toBeGreaterThanOrEqual(200);
    expect(waits[0]).toBeLessThanOrEqual(400);
    expect(waits[1]).toBeGreaterThanOrEqual(400);
    expect(waits[1]).toBeLessThanOrEqual(800);
    // The calls really were that far apart (a lower bound only: the machine may be slow).
    const times = [1, 2, 3].map((n) => Number(readFileSync(join(fake.dir, `${n}.at`), "utf8")));
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(waits[0]! - 60);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(waits[1]! - 60);
  });
});

describe("arguments", () => {
  it.concurrent("AGENT_ARGS without the stream arguments: one line naming them and AGENT_EXTRA_ARGS", async () => {
    const fake = new FakeAgents().step("default", { out: "Hello, plain text.\n" });
    const project = workflowProject(["ralph"]);
    const result = await run(project, ["run", "ralph:plan"], workflowEnv(fake, { AGENT_ARGS: "--model sonnet", MAX_RETRIES: "1" }));
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain("loopx: script ralph:plan exited with code 4\n");
    expect(result.stderr).toContain(
      "ralph: attempt 1 failed: no JSON events on stdout: claude streams JSON only with `-p --output-format stream-json --verbose` (arguments now: `--model sonnet`; to add arguments to the preset, set AGENT_EXTRA_ARGS instead of AGENT_ARGS)\n",
    );
  });

  it.concurrent("AGENT_EXTRA_ARGS is appended to the preset (ralph), CONVERGE_WORKER_EXTRA_ARGS to the worker's", async () => {
    const fake = new FakeAgents().step(1, { out: claudeStream(`Done.\n${COMPLETE}`) });
    const project = workflowProject(["ralph"]);
    const result = await run(project, ["run", "ralph:plan"], workflowEnv(fake, { AGENT_EXTRA_ARGS: "--model 'sonnet 5'" }));
    expect(result.code, result.stderr).toBe(0);
    expect(fake.argv(1)).toEqual(["claude", "-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions", "--model", "sonnet 5"]);

    const worker = new FakeAgents().step(1, { out: claudeStream("Wrote it."), run: "echo ok > done.txt" }).step(2, { out: claudeStream("Fine.\n<verdict>APPROVE</verdict>") });
    const converge = workflowProject(["converge"]);
    const converged = await run(converge, ["run", "converge"], convergeEnv(worker, { CONVERGE_WORKER_EXTRA_ARGS: "--model opus" }));
    expect(converged.code, converged.stderr).toBe(0);
    expect(worker.argv(1).slice(-3)).toEqual(["--dangerously-skip-permissions", "--model", "opus"]);
    expect(worker.argv(2)).not.toContain("opus");
  });
});

describe("an agent that hangs", () => {
  it.concurrent("AGENT_IDLE_TIMEOUT: no stream event for that long ends the agent and everything it started; the attempt fails with that reason", async () => {
    const hung = claudeStream("Thinking…").split("\n")[0] + "\n";
    const fake = new FakeAgents().step(1, { out: hung, sleep: 120 }).step(2, { out: claudeStream(`Done.\n${COMPLETE}`) });
    const project = workflowProject(["ralph"]);
    const env = workflowEnv(fake, { AGENT_IDLE_TIMEOUT: "1s" });
    const started = Date.now();
    const result = await run(project, ["run", "ralph:plan"], env);
    expect(result.code, result.stderr).toBe(0);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(fake.calls()).toBe(2);
    expect(result.stderr).toContain("ralph: attempt 1 failed: no stream event for 1s (AGENT_IDLE_TIMEOUT): ended claude and its processes — retrying\n");
    expect(processAlive(Number(readFileSync(fake.file("1.grandchild"), "utf8")))).toBe(false);
    expect(processAlive(Number(readFileSync(fake.file("1.started"), "utf8")))).toBe(false);
    expect(await waitFor(() => taggedSurvivors(env.HARDENING_TAG!).length === 0, 10_000)).toBe(true);
  });
});

describe("small things", () => {
  it.concurrent("an API error shows as an error, with its message; multi-line tool output keeps its lines (up to 8)", async () => {
    const toolOutput = Array.from({ length: 11 }, (_, i) => `out ${i + 1}`).join("\n");
    const apiError = patchResult(claudeStream("API Error: 500 Internal server error"), { is_error: true, subtype: "success", api_error_status: 500 });
    const fake = new FakeAgents().step(1, { out: apiError }).step(2, { out: claudeStream(`Done.\n${COMPLETE}`, { toolResult: toolOutput }) });
    const project = workflowProject(["ralph"]);
    const result = await run(project, ["run", "ralph:plan"], workflowEnv(fake));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/\n✗ result: error, API status 500, 2 turns, \$[\d.]+, [\d.]+s: API Error: 500 Internal server error\n/);
    expect(result.stderr).not.toContain("✗ result: success");
    expect(result.stderr).toContain(`  ← out 1\n${[2, 3, 4, 5, 6, 7, 8].map((n) => `    out ${n}\n`).join("")}    … 3 more lines\n`);
  });

  it.concurrent("an interrupted iteration's reported cost counts in the totals", async () => {
    const fake = new FakeAgents()
      .step(1, { out: claudeStream("Crashed.", { cost: 0.25, isError: true }) })
      .step(2, { out: claudeStream("Thinking…").split("\n")[0] + "\n", sleep: 120 });
    const project = workflowProject(["ralph"]);
    const env = workflowEnv(fake);
    const result = await run(project, ["run", "ralph:plan"], env, (child) => {
      void waitFor(() => fake.calls() === 2, 30_000).then(() => setTimeout(() => child.kill("SIGINT"), 500));
    });
    expect(result.code, result.stderr).toBe(130);
    expect(sessionLog(join(project, ".ralph"))).toMatch(/Iteration Cost: \$0\.250000 billed\nStatus: interrupted\n[\s\S]*Total Cost: \$0\.250000 billed\nExit Reason: Interrupted by SIGINT\n/);
  });

  it.concurrent("loopx --timeout during ralph: the session log says timed out, 124, as loopx exits", async () => {
    const fake = new FakeAgents().step(1, { out: claudeStream("Thinking…").split("\n")[0] + "\n", sleep: 120 });
    const project = workflowProject(["ralph"]);
    // 8 s: on a loaded 2-core box ralph's TypeScript may take seconds to reach its session log.
    const result = await run(project, ["run", "--timeout", "8s", "ralph:plan"], workflowEnv(fake));
    expect(result.code, result.stderr).toBe(124);
    const log = sessionLog(join(project, ".ralph"));
    expect(log).toMatch(/Status: timed-out\n[\s\S]*Exit Reason: Timed out by loopx --timeout \(8s per script\)\nExit Code: 124\n/);
    expect(log).not.toContain("SIGTERM");
  });

  it.concurrent.each([
    ["Ctrl-C", [] as string[], "SIGINT", 130, /^converge: interrupted by SIGINT in round 1 \(worker agent\), \d+s; rounds 1: unfinished$/],
    ["loopx --timeout", ["--timeout", "8s"], undefined, 124, /^converge: timed out by loopx --timeout \(8s per script\) in round 1 \(worker agent\), \d+s; rounds 1: unfinished$/],
  ] as const)("converge says where it stopped on %s", async (_name, options, signal, code, line) => {
    const fake = new FakeAgents().step(1, { out: claudeStream("Working…").split("\n")[0] + "\n", sleep: 120 });
    const project = workflowProject(["converge"]);
    const env = convergeEnv(fake);
    const result = await run(project, ["run", ...options, "converge"], env, (child) => {
      if (signal) void waitFor(() => fake.calls() === 1, 30_000).then(() => setTimeout(() => child.kill(signal), 500));
    });
    expect(result.code, result.stderr).toBe(code);
    expect(lastWorkflowLine(result.stderr)).toMatch(line);
    expect(await waitFor(() => taggedSurvivors(env.HARDENING_TAG!).length === 0, 10_000)).toBe(true);
  });
});
