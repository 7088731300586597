/**
 * The ralph and converge workflows (examples/workflows), end to end with fake agents that speak
 * each preset's streaming format: the whole case matrix, under node. The workflow logic is the
 * same TypeScript under every runtime; what depends on the runtime (spawning the agent, streaming,
 * signals, imports, install) is covered under node, bun and the binary by workflows-e2e.test.ts.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RUNTIMES, processAlive, runLoopx, taggedSurvivors, tempDir, waitFor, type RunResult } from "../../helpers.js";
import {
  FakeAgents,
  WORKFLOWS,
  ampStream,
  claudeStream,
  clineStream,
  codexStream,
  lastWorkflowLine,
  sessionLog,
  workflowEnv,
  workflowProject,
} from "../../fixtures/agents/support.js";

const NODE = RUNTIMES[0]!;
const COMPLETE = "<promise>COMPLETE</promise>";
const RULE = "=".repeat(80);
const THIN = "-".repeat(80);

function run(cwd: string, args: string[], env: Record<string, string>, onSpawn?: Parameters<typeof runLoopx>[2]["onSpawn"]): Promise<RunResult> {
  return runLoopx(NODE, args, { cwd, env, onSpawn, timeoutMs: 60_000 });
}

/** A failed run: loopx exit 1 naming the script and the Ralph exit code, the reason just before it. */
function expectRalphExit(result: RunResult, target: string, code: number, reason: string): void {
  expect(result.stdout).toBe("");
  expect(result.code, result.stderr).toBe(1);
  expect(result.stderr).toContain(`loopx: script ${target} exited with code ${code}\n`);
  expect(lastWorkflowLine(result.stderr)).toContain(reason);
  expect(result.stderr).not.toContain("    at ");
}

const ralphDir = (project: string): string => join(project, ".ralph");

describe("ralph", () => {
  it.concurrent("plan: completes after 3 iterations; prompt substituted; session log in the reference layout", async () => {
    const fake = new FakeAgents()
      .step(1, { out: claudeStream("Wrote the first tasks.", { cost: 0.01 }), err: "claude: warming up\n", run: 'echo "- [ ] task" > .ralph/implementation_plan.md' })
      .step(2, { out: claudeStream("Refined the plan.", { cost: 0.02 }) })
      .step(3, { out: claudeStream(`The plan is complete.\n${COMPLETE}`, { cost: 0.03 }) });
    const project = workflowProject(["ralph"]);
    // Started from another directory (as a --worktree run is): the agent's PWD is still its cwd.
    const result = await run(project, ["run", "ralph:plan"], workflowEnv(fake, { SPECS_DIR: "docs/specs", PWD: tempDir() }));
    expect(result.stderr).not.toContain("    at ");
    expect(result.stdout).toBe("");
    expect(result.code, result.stderr).toBe(0);
    expect(fake.calls()).toBe(3);

    // The preset's invocation, in the project root, prompt on stdin with the variables substituted.
    expect(fake.argv(1)).toEqual(["claude", "-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"]);
    expect(fake.cwd(1)).toBe(project);
    expect(fake.inheritedPwd(1)).toBe(project);
    expect(fake.prompt(1)).toContain("You are in PLAN mode (iteration 1)");
    expect(fake.prompt(1)).toContain("specifications in `docs/specs/`");
    expect(fake.prompt(3)).toContain("(iteration 3)");
    expect(fake.prompt(1)).toContain("`.ralph/implementation_plan.md`");
    expect(fake.prompt(1)).not.toMatch(/\$\{[A-Z_]+\}/);

    // The live view: human-readable lines, not raw JSON.
    expect(result.stderr).toContain("→ Bash: echo done >> progress.txt\n");
    expect(result.stderr).toContain("Wrote the first tasks.\n");
    expect(result.stderr).toContain("✓ result: success, 2 turns, $0.030000");
    expect(result.stderr).not.toContain('{"type"');
    expect(lastWorkflowLine(result.stderr)).toMatch(/^ralph: Completion signal detected \(session log: \.ralph\/logs\/session-\d{8}-\d{6}\.log\)$/);

    const log = sessionLog(ralphDir(project));
    const header = (n: number) => `${RULE}\nITERATION ${n}\n${RULE}\nMode: plan\nStart Time: \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\n${THIN}\n`;
    const footer = (n: number, cost: string, status: string) =>
      `${THIN}\nITERATION ${n} COMPLETE\nEnd Time: \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\nDuration: \\d+s\nIteration Cost: \\$${cost} billed\nStatus: ${status}\nRetries: 0\n${RULE}\n\n`;
    const body = "(?:.*\n)*?"; // the raw stream and the agent's stderr
    const layout = new RegExp(
      `^${header(1)}${body}${footer(1, "0\\.010000", "success")}${header(2)}${body}${footer(2, "0\\.020000", "success")}${header(3)}${body}${footer(3, "0\\.030000", "complete")}` +
        `${RULE}\nSESSION SUMMARY\n${RULE}\nTotal Iterations: 3\nSuccessful: 3\nFailed: 0\nTotal Duration: \\d+s\nTotal Cost: \\$0\\.060000 billed\nExit Reason: Completion signal detected\nExit Code: 0\n${RULE}\n$`,
    );
    expect(log).toMatch(layout);
    expect(log).toContain('{"type":"system","subtype":"init"'); // raw NDJSON
    expect(log).toContain("claude: warming up\n"); // the agent's stderr goes to the log…
    expect(result.stderr).not.toContain("warming up"); // …not to the terminal
    expect(existsSync(join(ralphDir(project), "implementation_plan.md"))).toBe(true);
  });

  it.concurrent("build: <promise>REPLAN</promise> ends the run with Ralph exit code 3", async () => {
    const fake = new FakeAgents().step(1, { out: claudeStream("Did a task.") }).step(2, { out: claudeStream("The plan is stale.\n<promise>REPLAN</promise>") });
    const project = workflowProject(["ralph"], { ".ralph/implementation_plan.md": "- [ ] a\n" });
    const result = await run(project, ["run", "ralph:build"], workflowEnv(fake));
    expectRalphExit(result, "ralph:build", 3, "Agent requested re-planning. Run 'loopx run ralph:plan' to regenerate the implementation plan.");
    expect(fake.calls()).toBe(2);
    expect(fake.prompt(1)).toContain("You are in BUILD mode");
    const log = sessionLog(ralphDir(project));
    expect(log).toContain("Mode: build\n");
    expect(log).toContain("Status: replan\n");
    expect(log).toMatch(/Total Iterations: 2\nSuccessful: 2\nFailed: 0\n(?:.*\n)*?Exit Reason: Agent requested re-planning[^\n]*\nExit Code: 3\n/);
  });

  it.concurrent.each([
    ["amp", "echoes the prompt (which holds the tag) as a user message", (prompt: string) => ampStream(prompt, "Still planning.")],
    ["cline", "echoes the prompt as say \"task\"", (prompt: string) => clineStream(prompt, "Still planning.")],
    ["claude", "returns the tag in a tool result", () => claudeStream("Still planning.", { toolResult: `PROMPT_plan.md says: ${COMPLETE}` })],
  ] as const)("the completion tag outside the assistant's response does not stop the loop (%s %s)", async (type, _what, stream) => {
    const project = workflowProject(["ralph"]);
    const prompt = readFileSync(join(WORKFLOWS, "ralph", "PROMPT_plan.md"), "utf8");
    expect(prompt).toContain(COMPLETE);
    const fake = new FakeAgents().step("default", { out: stream(prompt) });
    const result = await run(project, ["run", "ralph:plan"], workflowEnv(fake, { AGENT_TYPE: type, MAX_ITERATIONS: "2" }));
    expect(result.code, result.stderr).toBe(0);
    expect(fake.calls()).toBe(2);
    expect(lastWorkflowLine(result.stderr)).toContain("Max iterations reached (MAX_ITERATIONS=2)");
    const log = sessionLog(ralphDir(project));
    expect(log).not.toContain("Status: complete");
    expect(log).toMatch(/Total Iterations: 2\nSuccessful: 2\n/);
    expect(log).toContain(COMPLETE); // it was in the raw stream all along
  });

  it.concurrent.each([
    ["codex", ["codex", "exec", "--json", "--dangerously-bypass-approvals-and-sandbox", "-"], () => codexStream(`All done.\n${COMPLETE}`), "→ $ bash -lc 'cat progress.txt'", undefined],
    ["amp", ["amp", "-x", "--stream-json", "--dangerously-allow-all"], (p: string) => ampStream(p, `All done.\n${COMPLETE}`), `All done.\n${COMPLETE}`, ["Iteration Cost: $0.250000 billed", "Balance: $9.75"]],
    ["cline", ["cline", "--json", "-y"], (p: string) => clineStream(p, `All done.\n${COMPLETE}`, 0.0125), "→ $ cat progress.txt", ["Iteration Cost: $0.012500 billed"]],
  ] as const)("preset %s: its invocation, its live view, completion and cost", async (type, argv, stream, shown, costLines) => {
    const project = workflowProject(["ralph"]);
    const prompt = readFileSync(join(WORKFLOWS, "ralph", "PROMPT_plan.md"), "utf8");
    const fake = new FakeAgents().balance("10.00").step(1, { out: stream(prompt.replace(/\$\{[A-Z_]+\}/g, "x")), balance: "9.75" });
    const result = await run(project, ["run", "ralph:plan"], workflowEnv(fake, { AGENT_TYPE: type }));
    expect(result.code, result.stderr).toBe(0);
    expect(fake.calls()).toBe(1);
    expect(fake.argv(1)).toEqual(argv);
    expect(result.stderr).toContain(`${shown}\n`);
    expect(result.stderr).not.toContain('{"type"');
    const log = sessionLog(ralphDir(project));
    expect(log).toContain("Status: complete\n");
    for (const line of costLines ?? []) expect(log).toContain(`${line}\n`);
    if (!costLines) expect(log).not.toContain("Cost:");
  });

  it.concurrent("an agent crashing twice then succeeding is retried (MAX_RETRIES=3)", async () => {
    const fake = new FakeAgents()
      .step(1, { code: 1, err: "boom 1\n" })
      .step(2, { out: '{"type":"system","subtype":"init"}\nnot json, then death\n', code: 2 })
      .step(3, { out: claudeStream(`Done.\n${COMPLETE}`) });
    const project = workflowProject(["ralph"]);
    const result = await run(project, ["run", "ralph:plan"], workflowEnv(fake));
    expect(result.code, result.stderr).toBe(0);
    expect(fake.calls()).toBe(3);
    expect(fake.prompt(3)).toBe(fake.prompt(1)); // same prompt, same iteration
    expect(result.stderr).toContain("ralph: attempt 1 failed: claude exited with code 1 — retrying\n");
    expect(result.stderr).toContain("ralph: attempt 2 failed: claude exited with code 2 — retrying\n");
    const log = sessionLog(ralphDir(project));
    expect(log.match(/^ITERATION 1$/gm)).toHaveLength(1);
    expect(log).toContain("boom 1\n");
    expect(log).toContain("boom 1\nAttempt 1 failed: claude exited with code 1\n");
    expect(log).toContain("not json, then death\n\nAttempt 2 failed: claude exited with code 2\n");
    expect(log).toMatch(/Status: complete\nRetries: 2\n/);
    expect(log).toMatch(/Total Iterations: 1\nSuccessful: 1\nFailed: 0\n/);
  });

  it.concurrent("an agent failing past MAX_RETRIES ends the run with Ralph exit code 4", async () => {
    const fake = new FakeAgents().step("default", { out: claudeStream("Crashed.", { isError: true }) });
    const project = workflowProject(["ralph"]);
    const result = await run(project, ["run", "ralph:plan"], workflowEnv(fake, { MAX_RETRIES: "2" }));
    expectRalphExit(result, "ralph:plan", 4, "Agent failure exceeded retries (2 failed attempts, MAX_RETRIES=2)");
    expect(fake.calls()).toBe(2);
    const log = sessionLog(ralphDir(project));
    expect(log).toMatch(/Status: failed\nRetries: 1\n/);
    expect(log).toMatch(/Total Iterations: 1\nSuccessful: 0\nFailed: 1\n.*\n.*\nExit Reason: Agent failure exceeded retries[^\n]*the agent reported an error \(error_during_execution\)[^\n]*\nExit Code: 4\n/);
  });

  it.concurrent("BUDGET_USD: the run stops once the reported cost reaches the budget", async () => {
    const fake = new FakeAgents().step("default", { out: claudeStream("Working.", { cost: 0.2 }) });
    const project = workflowProject(["ralph"], { ".ralph/implementation_plan.md": "- [ ] a\n" });
    const result = await run(project, ["run", "ralph:build"], workflowEnv(fake, { BUDGET_USD: "0.5" }));
    expect(result.code, result.stderr).toBe(0);
    expect(fake.calls()).toBe(3);
    expect(result.stderr).toContain("ralph: BUDGET_USD=0.5 is ralph's own cap for this sitting (billed cost; estimates too with BUDGET_COUNT_ESTIMATES=1); loopx run --max-cost is loopx's budget for the whole run\n");
    expect(lastWorkflowLine(result.stderr)).toContain("Budget exceeded: $0.600000 billed in this sitting, BUDGET_USD=0.5");
    expect(result.stderr).toContain("ralph: iteration 2 success, cost $0.200000 billed (total $0.400000 billed)\n");
    expect(sessionLog(ralphDir(project))).toMatch(/Total Iterations: 3\n(?:.*\n){3}Total Cost: \$0\.600000 billed\nExit Reason: Budget exceeded[^\n]*\nExit Code: 0\n/);
  });

  it.concurrent.for([
    ["a subscriber's estimates do not count", {}, 3, "Max iterations reached (MAX_ITERATIONS=3)", "$0.600000 estimate"],
    ["BUDGET_COUNT_ESTIMATES=1 counts them", { BUDGET_COUNT_ESTIMATES: "1" }, 2, "Budget exceeded: $0.400000 billed and estimated in this sitting, BUDGET_USD=0.3", "$0.400000 estimate"],
  ] as const)("BUDGET_USD on a subscription: %s", async ([, extra, calls, reason, total]) => {
    const fake = new FakeAgents().step("default", { out: claudeStream("Working.", { cost: 0.2, subscription: true }) });
    const project = workflowProject(["ralph"], { ".ralph/implementation_plan.md": "- [ ] a\n" });
    const result = await run(project, ["run", "ralph:build"], workflowEnv(fake, { BUDGET_USD: "0.3", MAX_ITERATIONS: "3", ...extra }));
    expect(result.code, result.stderr).toBe(0);
    expect(fake.calls()).toBe(calls);
    expect(lastWorkflowLine(result.stderr)).toContain(reason);
    expect(result.stderr).toContain(`ralph: iteration 1 success, cost $0.200000 estimate (total $0.200000 estimate)\n`);
    expect(sessionLog(ralphDir(project))).toContain(`Total Cost: ${total}\n`);
  });

  it.concurrent("build without implementation_plan.md: Ralph exit code 2, no agent call", async () => {
    const fake = new FakeAgents().step("default", { out: claudeStream(COMPLETE) });
    const project = workflowProject(["ralph"]);
    const result = await run(project, ["run", "ralph:build"], workflowEnv(fake));
    expectRalphExit(result, "ralph:build", 2, "Implementation plan not found. Run 'loopx run ralph:plan' first.");
    expect(fake.calls()).toBe(0);
    expect(sessionLog(ralphDir(project))).toMatch(/^={80}\nSESSION SUMMARY\n={80}\nTotal Iterations: 0\n(?:.*\n){4}Exit Code: 2\n={80}\n$/);
  });

  it.concurrent("prompt: the template comes from RALPH_PROMPT_FILE, with variables from the config file and the environment", async () => {
    const fake = new FakeAgents().step(1, { out: claudeStream(`Analysed.\n${COMPLETE}`) });
    const project = workflowProject(["ralph"], {
      "prompts/refactor.md": `Mode \${MODE}, specs in $SPECS_DIR, team \${TEAM}, unset [\${NOT_SET}]. Say ${COMPLETE} when done.\n`,
      "ralph.conf": "SPECS_DIR=from-config\nTEAM='from config'\nMAX_RETRIES=1\n",
    });
    const env = workflowEnv(fake, { RALPH_PROMPT_FILE: "prompts/refactor.md", RALPH_CONFIG: "ralph.conf", SPECS_DIR: "from-env", AGENT_ARGS: "--model 'big one' -p" });
    const result = await run(project, ["run", "ralph:prompt"], env);
    expect(result.code, result.stderr).toBe(0);
    expect(fake.prompt(1)).toBe(`Mode prompt, specs in from-env, team from config, unset []. Say ${COMPLETE} when done.\n`);
    expect(fake.argv(1)).toEqual(["claude", "--model", "big one", "-p"]);
    expect(sessionLog(ralphDir(project))).toContain("Mode: prompt\n");
  });

  it.concurrent("prompt: a prompt file without the completion tag is refused before any agent call", async () => {
    const fake = new FakeAgents().step("default", { out: claudeStream(COMPLETE) });
    const project = workflowProject(["ralph"], { "prompts/bad.md": "Do things forever.\n" });
    const result = await run(project, ["run", "ralph:prompt"], workflowEnv(fake, { RALPH_PROMPT_FILE: "prompts/bad.md" }));
    expectRalphExit(result, "ralph:prompt", 1, "does not contain <promise>COMPLETE</promise>");
    expect(fake.calls()).toBe(0);
  });

  it.concurrent("prerequisites: no git repository, or no agent CLI on PATH: one line, no agent call", async () => {
    const fake = new FakeAgents().step("default", { out: claudeStream(COMPLETE) });
    const project = workflowProject(["ralph"]);
    const noAgent = await run(project, ["run", "ralph:plan"], workflowEnv(fake, { AGENT_CLI: "no-such-agent" }));
    expectRalphExit(noAgent, "ralph:plan", 1, "agent CLI not found on PATH: no-such-agent");
    const { rmSync } = await import("node:fs");
    rmSync(join(project, ".git"), { recursive: true });
    const noGit = await run(project, ["run", "ralph:plan"], workflowEnv(fake));
    expectRalphExit(noGit, "ralph:plan", 1, "not a git repository");
    expect(fake.calls()).toBe(0);
  });

  it.concurrent("Ctrl-C during an agent call: exit 130, nothing survives, the session log says why", async () => {
    const fake = new FakeAgents().step(1, { out: claudeStream("Thinking…").split("\n").slice(0, 2).join("\n") + "\n", sleep: 120 });
    const project = workflowProject(["ralph"]);
    const env = workflowEnv(fake);
    const result = await run(project, ["run", "ralph:plan"], env, (child) => {
      void waitFor(() => existsSync(fake.file("1.grandchild")) && existsSync(fake.file("1.started")), 30_000).then(() => child.kill("SIGINT"));
    });
    expect(result.code, result.stderr).toBe(130);
    expect(await waitFor(() => taggedSurvivors(env.HARDENING_TAG!).length === 0, 10_000)).toBe(true);
    expect(processAlive(Number(readFileSync(fake.file("1.grandchild"), "utf8")))).toBe(false);
    expect(processAlive(Number(readFileSync(fake.file("1.started"), "utf8")))).toBe(false);
    expect(fake.calls()).toBe(1); // no retry after an interrupt
    const log = sessionLog(ralphDir(project));
    expect(log).toMatch(/Status: interrupted\n={80}\n\n={80}\nSESSION SUMMARY\n={80}\nTotal Iterations: 1\nSuccessful: 0\nFailed: 1\n.*\nExit Reason: Interrupted by SIGINT\nExit Code: 130\n/);
  });
});

describe("converge", () => {
  const task = "Create done.txt holding the word ok.";
  const gate = "grep -qx ok done.txt && echo gate-ok || { echo 'done.txt is missing or wrong' >&2; exit 3; }";

  it.concurrent("the gate fails, then the judge rejects, then both pass: converged in 3 rounds", async () => {
    const judgePrompt = readFileSync(join(WORKFLOWS, "converge", "JUDGE.md"), "utf8");
    expect(judgePrompt).toContain("<verdict>APPROVE</verdict>"); // the echo below must not count
    const fake = new FakeAgents()
      .step(1, { out: claudeStream("I looked around.", { cost: 0.1 }) }) // worker, round 1
      .step(2, { out: claudeStream("Wrote it.", { cost: 0.1 }), run: "echo ok > done.txt" }) // worker, round 2
      .step(3, { out: ampStream(judgePrompt, "No test covers it; add one.\n<verdict>REJECT</verdict>") }) // judge, round 2
      .step(4, { out: claudeStream("Added a test.", { cost: 0.1 }), run: "echo test > done.test" }) // worker, round 3
      .step(5, { out: ampStream(judgePrompt, "Looks right. <verdict>APPROVE</verdict>") }); // judge, round 3
    const project = workflowProject(["converge"]);
    const env = workflowEnv(fake, { CONVERGE_TASK: task, CONVERGE_GATE: gate, CONVERGE_JUDGE_TYPE: "amp" });
    const result = await run(project, ["run", "converge"], env);
    expect(result.stderr).not.toContain("    at ");
    expect(result.stdout).toBe("");
    expect(result.code, result.stderr).toBe(0);
    expect(fake.calls()).toBe(5);
    expect([1, 2, 3, 4, 5].map((n) => fake.argv(n)[0])).toEqual(["claude", "claude", "amp", "claude", "amp"]);
    for (const n of [1, 2, 3, 4, 5]) expect(fake.cwd(n)).toBe(project);

    // Round 1: the task; no findings yet. Round 2: the gate's findings. Round 3: the judge's.
    expect(fake.prompt(1)).toContain(task);
    expect(fake.prompt(1)).not.toContain("Findings");
    expect(fake.prompt(2)).toContain("## Findings from round 1");
    expect(fake.prompt(2)).toContain("The gate `grep -qx ok done.txt");
    expect(fake.prompt(2)).toContain("failed (exit code 3)");
    expect(fake.prompt(2)).toContain("done.txt is missing or wrong");
    expect(fake.prompt(4)).toContain("## Findings from round 2");
    expect(fake.prompt(4)).toContain("The independent judge rejected the work:\n\nNo test covers it; add one.");
    // The judge: a fresh invocation that sees the task and the gate's output, never the worker's conversation.
    expect(fake.prompt(3)).toContain(task);
    expect(fake.prompt(3)).toContain("gate-ok");
    expect(fake.prompt(3)).not.toContain("Wrote it.");
    expect(fake.prompt(5)).not.toContain("Added a test.");

    const reports = result.stderr.split("\n").filter((l) => /^converge: round \d+: (gate (failed|passed)|.*findings go back)/.test(l));
    expect(reports).toEqual([
      "converge: round 1: gate failed (exit code 3) — findings go back to the worker",
      "converge: round 2: gate passed — asking the judge",
      "converge: round 2: gate passed, judge rejected: No test covers it; add one. — findings go back to the worker",
      "converge: round 3: gate passed — asking the judge",
      "converge: round 3: gate passed, judge approved",
    ]);
    expect(lastWorkflowLine(result.stderr)).toMatch(
      /^converge: converged after 3 rounds \(\d+s, total cost \$0\.300000 billed\): gate `.*` passed and the judge approved; rounds 1: gate failed · 2: judge rejected · 3: approved$/,
    );
  });

  it.concurrent("a judge without a verdict does not approve; CONVERGE_MAX_ROUNDS ends the run unconverged", async () => {
    const fake = new FakeAgents()
      .step(1, { out: codexStream("Wrote it."), run: "echo ok > done.txt" })
      .step(2, { out: codexStream("It seems fine to me.") }) // judge: no verdict tag
      .step(3, { out: codexStream("Tried again.") })
      .step(4, { out: codexStream("Missing tests. <verdict>REJECT</verdict>") });
    const project = workflowProject(["converge"]);
    const env = workflowEnv(fake, { CONVERGE_TASK: task, CONVERGE_GATE: gate, AGENT_TYPE: "codex", CONVERGE_MAX_ROUNDS: "2" });
    const result = await run(project, ["run", "converge"], env);
    expectRalphExit(result, "converge:judge", 1, "converge: not converged after 2 rounds (CONVERGE_MAX_ROUNDS=2)");
    expect(lastWorkflowLine(result.stderr)).toContain("rounds 1: judge rejected · 2: judge rejected; last findings: The independent judge rejected the work:");
    expect(result.stderr).toContain("converge: round 1: gate passed, judge gave no verdict — findings go back to the worker\n");
    expect(fake.prompt(3)).toContain("The independent judge gave no verdict, so the work is not accepted. Its response:\n\nIt seems fine to me.");
    expect(fake.argv(2)).toEqual(["codex", "exec", "--json", "--sandbox", "read-only", "-"]); // the judge: read-only
  });

  it.concurrent("loopx run -n caps the script runs (2 per round while the gate fails): exit 0 after the cap", async () => {
    const fake = new FakeAgents().step("default", { out: claudeStream("Trying.") });
    const project = workflowProject(["converge"]);
    const env = workflowEnv(fake, { CONVERGE_TASK: task, CONVERGE_GATE: "false" });
    const result = await run(project, ["run", "-n", "4", "converge"], env);
    expect(result.code, result.stderr).toBe(0);
    expect(fake.calls()).toBe(2); // worker, gate, worker, gate
    expect(lastWorkflowLine(result.stderr)).toBe("converge: round 2: gate failed (exit code 1) — findings go back to the worker");
  });

  it.concurrent("missing configuration: one line naming the variable, no agent call", async () => {
    const fake = new FakeAgents().step("default", { out: claudeStream("x") });
    const project = workflowProject(["converge"]);
    const noGate = await run(project, ["run", "converge"], workflowEnv(fake, { CONVERGE_TASK: task }));
    expectRalphExit(noGate, "converge:index", 1, "converge: no gate: set CONVERGE_GATE");
    const noTask = await run(project, ["run", "converge"], workflowEnv(fake, { CONVERGE_GATE: "true" }));
    expectRalphExit(noTask, "converge:index", 1, "converge: no task: set CONVERGE_TASK");
    writeFileSync(join(project, "x"), "");
    expect(fake.calls()).toBe(0);
  });
});
