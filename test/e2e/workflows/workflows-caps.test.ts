/**
 * Usage-window caps in the shipped workflows (issue 40 item 4), black-box: loopx runs ralph with
 * fake agents. LIMIT_CAP_5H over Claude's reported five_hour utilization: no call until the
 * window resets, for this loop and for another loop on the account (the shared limits file).
 * LIMIT_PROBE reporting the 7 d window over LIMIT_CAP_7D: no call, ralph ends paused (exit 75)
 * with the `loopx runs resume <id>` command, and that command goes on after the reset. A bad cap
 * and a failing probe. (MAX_LIMIT_WAIT → 75: workflows-limits.test.ts.)
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RUNTIMES, runLoopx, tempDir, waitFor, type RunResult } from "../../helpers.js";
import { LATER, callTime, limitsFile, resetsAfterCall, resetsAt, timed } from "../../fixtures/agents/limit-clock.js";
import { FakeAgents, claudeStream, codexStream, lastWorkflowLine, recordedReceipts, sessionLog, workflowEnv, workflowProject } from "../../fixtures/agents/support.js";

const NODE = RUNTIMES[0]!;
const COMPLETE = "<promise>COMPLETE</promise>";

function run(cwd: string, args: string[], env: Record<string, string>): Promise<RunResult> {
  return runLoopx(NODE, args, { cwd, env, timeoutMs: 60_000 });
}


/** Claude's answer `text` with a rate_limit_event: five_hour allowed_warning at `utilization` (resetsAt LATER). */
function claudeWarning(text: string, utilization: number): string {
  const warning = JSON.stringify({ type: "rate_limit_event", rate_limit_info: { status: "allowed_warning", resetsAt: LATER, rateLimitType: "five_hour", utilization, isUsingOverage: false } });
  const [init, ...rest] = claudeStream(text).trimEnd().split("\n");
  return [init, warning, ...rest].join("\n") + "\n";
}


describe("usage-window caps", () => {
  it.concurrent("five_hour at 85% with LIMIT_CAP_5H=80: no call until the reset, in this loop and in a second loop on the account", async () => {
    // Call 1 (iteration 1) reports 85 % of the 5 h window, resetting 8 s after it; call 2
    // (iteration 2) must wait for that. A second loop started meanwhile waits before its first call.
    const first = new FakeAgents().step(1, { out: claudeWarning("Planned a step.", 0.85), run: resetsAfterCall(1, 8) }).step(2, { out: claudeStream(`A done.\n${COMPLETE}`), run: timed(2) });
    const second = new FakeAgents().step(1, { out: claudeStream(`B done.\n${COMPLETE}`), run: timed(1) });
    const env = workflowEnv(first, { LIMIT_CAP_5H: "80%", LIMIT_MARGIN: "0.5s" });
    const envB = { ...env, PATH: env.PATH!.replace(first.bin, second.bin), FAKE_AGENT_DIR: second.dir };
    const [projectA, projectB] = [workflowProject(["ralph"]), workflowProject(["ralph"])];
    const a = run(projectA, ["run", "ralph:plan"], env);
    expect(await waitFor(() => existsSync(limitsFile(env)) && readFileSync(limitsFile(env), "utf8").includes('"windows:claude:'), 30_000)).toBe(true);
    const b = await run(projectB, ["run", "ralph:plan"], envB);
    const resultA = await a;
    expect(resultA.code, resultA.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    const reset = resetsAt(first, 1) * 1000;
    expect(first.calls()).toBe(2);
    expect(callTime(first, 2)).toBeGreaterThanOrEqual(reset + 500);
    expect(second.calls()).toBe(1);
    expect(callTime(second, 1)).toBeGreaterThanOrEqual(reset + 500);
    const line = /\nralph: 5h usage window at 85% \(LIMIT_CAP_5H=80%, from claude-stream\) — resets \d\d:\d\d:\d\d; waiting until \d\d:\d\d:\d\d \(\d+s\), then the call starts\n/;
    expect(resultA.stderr).toMatch(line);
    expect(b.stderr).toMatch(line);
    expect(sessionLog(join(projectA, ".ralph"))).toMatch(/Usage limit: 5h usage window at 85% \(LIMIT_CAP_5H=80%, from claude-stream\) — resets/);
  });

  it.concurrent("under the cap (five_hour at 50%, LIMIT_CAP_5H=80): the next call starts at once", async () => {
    const fake = new FakeAgents().step(1, { out: claudeWarning("Planned a step.", 0.5), run: resetsAfterCall(1, 30) }).step(2, { out: claudeStream(`Done.\n${COMPLETE}`) });
    const project = workflowProject(["ralph"]);
    const started = Date.now();
    const result = await run(project, ["run", "ralph:plan"], workflowEnv(fake, { LIMIT_CAP_5H: "80" }));
    expect(result.code, result.stderr).toBe(0);
    expect(fake.calls()).toBe(2);
    expect(Date.now() - started).toBeLessThan(25_000);
    expect(result.stderr).not.toContain("usage window at");
  });

  it.concurrent("LIMIT_PROBE says 7d at 92% with LIMIT_CAP_7D=90: no call, exit 75 and the resume command; `loopx runs resume` goes on after the reset", async () => {
    const fake = new FakeAgents().step(1, { out: claudeStream(`Done.\n${COMPLETE}`) });
    const project = workflowProject(["ralph"]);
    // The probe's first run sets the 7 d window's reset 5 s ahead (not from the test's start, which
    // a loaded machine can make seconds late); every run reports it at 92 %.
    const dir = tempDir("loopx-probe-");
    const probe = `f='${join(dir, "reset")}'; [ -f "$f" ] || echo $(( $(date +%s) + 5 )) > "$f"; printf '{"5h":{"usedPercent":10},"7d":{"usedPercent":92,"resetsAt":%s}}' "$(cat "$f")"`;
    const env = workflowEnv(fake, { LIMIT_CAP_7D: "90", LIMIT_PROBE: probe });
    const paused = await run(project, ["run", "ralph:plan"], env);
    expect(paused.code, paused.stderr).toBe(1);
    expect(fake.calls()).toBe(0);
    expect(paused.stderr).toContain("loopx: script ralph:plan exited with code 75\n");
    const last = lastWorkflowLine(paused.stderr);
    expect(last).toMatch(/^ralph: Paused: 7d usage window at 92% \(LIMIT_CAP_7D=90%, from probe\), resets \S+Z \(\d\d:\d\d:\d\d local\) — go on with: loopx runs resume \S+ \(exit code 75; session log: /);
    const id = /loopx runs resume (\S+) \(exit code 75/.exec(last)![1]!;
    const listed = JSON.parse((await run(project, ["runs", "--json"], env)).stdout.split("\n")[0]!);
    expect(listed.id).toBe(id);
    expect(sessionLog(join(project, ".ralph"))).toMatch(/Usage caps: 7d usage window at 92% .*: no call\n[\s\S]*Exit Code: 75\n/);
    // The receipt of what the probe saw.
    const reset = Number(readFileSync(join(dir, "reset"), "utf8"));
    expect(recordedReceipts(env)).toContainEqual(expect.objectContaining({ window: { type: "7d", status: "seen", utilization: 0.92, resetsAt: new Date(reset * 1000).toISOString(), source: "probe" } }));

    await waitFor(() => Date.now() > reset * 1000 + 200, 30_000);
    const resumed = await run(project, ["runs", "resume", id], env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(fake.calls()).toBe(1);
    expect(lastWorkflowLine(resumed.stderr)).toMatch(/^ralph: Completion signal detected/);
  });

  it.concurrent("a cap that is no percentage ends the run at start in one line naming it, before any call", async () => {
    const fake = new FakeAgents().step(1, { out: claudeStream(`Done.\n${COMPLETE}`) });
    const project = workflowProject(["ralph"]);
    const result = await run(project, ["run", "ralph:plan"], workflowEnv(fake, { LIMIT_CAP_5H: "120" }));
    expect(result.code, result.stderr).toBe(1);
    expect(fake.calls()).toBe(0);
    expect(lastWorkflowLine(result.stderr)).toBe("ralph: LIMIT_CAP_5H=120: not a percentage above 0 and at most 100 (e.g. 80 or 80%)");
  });

  it.concurrent("a probe that fails: one warning line, and the call goes on", async () => {
    const fake = new FakeAgents().step(1, { out: claudeStream(`Done.\n${COMPLETE}`) });
    const project = workflowProject(["ralph"]);
    const result = await run(project, ["run", "ralph:plan"], workflowEnv(fake, { LIMIT_CAP_5H: "80", LIMIT_PROBE: "echo 'no usage endpoint' >&2; exit 3" }));
    expect(result.code, result.stderr).toBe(0);
    expect(fake.calls()).toBe(1);
    expect(result.stderr).toContain("\nralph: LIMIT_PROBE exited with code 3: no usage endpoint; the call goes on\n");
  });

  it.concurrent("converge, codex: the worker's session rollout says 7d at 95% with LIMIT_CAP_7D=90: no judge call, exit 75 and the resume command", async () => {
    // The fake codex writes the rollout a real one writes under $CODEX_HOME/sessions for the
    // stream's thread (codexStream's thread id), its 7 d window at 95 % resetting in a day.
    const codexHome = tempDir("loopx-codex-home-");
    const day = join(codexHome, "sessions", "2026", "11", "28");
    const rollout = join(day, "rollout-2026-11-28T12-00-00-0199a213-81c0-7800-8aa1-bbab2a035a53.jsonl");
    const line = `{"timestamp":"%s","type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{"primary":{"used_percent":30,"window_minutes":300,"resets_in_seconds":3600},"secondary":{"used_percent":95,"window_minutes":10080,"resets_at":%s}}}}`;
    const writeRollout = `mkdir -p '${day}'; printf '${line}\\n' "$(date -u +%Y-%m-%dT%H:%M:%S.000Z)" $(( $(date +%s) + 86400 )) > '${rollout}'; echo ok > done.txt`;
    const fake = new FakeAgents().step(1, { out: codexStream("Wrote it."), run: writeRollout }).step(2, { out: codexStream("Looks right. <verdict>APPROVE</verdict>") });
    const project = workflowProject(["converge"]);
    const env = workflowEnv(fake, { CONVERGE_TASK: "Create done.txt holding the word ok.", CONVERGE_GATE: "grep -qx ok done.txt", AGENT_TYPE: "codex", CODEX_HOME: codexHome, LIMIT_CAP_7D: "90" });
    const result = await run(project, ["run", "converge"], env);
    expect(result.code, result.stderr).toBe(1);
    expect(fake.calls()).toBe(1);
    expect(result.stderr).toContain("loopx: script converge:judge exited with code 75\n");
    expect(lastWorkflowLine(result.stderr)).toMatch(
      /^converge: paused in round 1: 7d usage window at 95% \(LIMIT_CAP_7D=90%, from codex-rollout\), resets \S+Z \(\d\d:\d\d:\d\d local\) — go on with: loopx runs resume \S+ \(exit code 75\)$/,
    );
    expect(recordedReceipts(env)).toContainEqual(expect.objectContaining({ agent: "codex", window: expect.objectContaining({ type: "7d", status: "seen", utilization: 0.95, source: "codex-rollout" }) }));
  });
});
