/**
 * The ralph workflow driving the real Gemini CLI, opencode, Pi, Qwen Code and Copilot CLI (dev
 * dependencies), offline: each points at a local stand-in (Gemini API or Chat Completions) on
 * 127.0.0.1, and the stand-in's tool calls make the CLI's own shell tool run the commands (git
 * commit) for real. Every CLI's scenarios run concurrently; each CLI's own retries are bounded in
 * its test configuration (fixtures/agents/real-clis.ts). Node, except Ctrl-C and --timeout for Pi
 * (the quickest to start), which run on bun and the standalone binary too: these CLIs are slow to start.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, type TestContext } from "vitest";
import { CLIS, RUNTIMES, runCli, runLoopx, taggedSurvivors, waitFor } from "../../helpers.js";
import { cliAlone } from "../../fixtures/local-server.js";
import { DEFAULT_CHAT_USAGE, isOwnRequest, isSideCall, startChatApi, type ChatReply } from "../../fixtures/agents/chat-completions-api.js";
import { DEFAULT_GEMINI_USAGE, GOOGLE_QUOTA_DETAILS, startGeminiApi, type GeminiReply } from "../../fixtures/agents/gemini-api.js";
import { PRICE, REAL_CLIS, realCliSetup, type RealCli } from "../../fixtures/agents/real-clis.js";
import { FakeAgents, lastWorkflowLine, sessionLog, workflowEnv, workflowProject } from "../../fixtures/agents/support.js";
import { PRESETS } from "../../../examples/workflows/shared/agent.ts";

const COMPLETE = "<promise>COMPLETE</promise>";
/** A whole ralph run on a CLI that takes many seconds to start on a loaded 2-core box. */
const RUN_MS = 420_000;

/** An answer both stand-ins give (a stream error: the Chat Completions one only). */
type Reply = ChatReply | GeminiReply;

/**
 * A stand-in for `cli` answering its n-th main request with `script(n)` (side calls: a short text),
 * stopped with the test. A judge's read-only requests (no shell tool) are its main ones.
 */
async function standIn(context: TestContext, cli: RealCli, script: (n: number) => Reply, judging = false) {
  let main = 0;
  const api =
    cli === "gemini"
      ? await startGeminiApi(() => script(++main) as GeminiReply)
      : await startChatApi((_n, body) => ((judging ? isOwnRequest : isSideCall)(body) ? { text: "Side answer" } : (script(++main) as ChatReply)));
  context.onTestFinished(() => api.stop());
  return { api, mainCalls: () => main };
}

function runEnv(cli: RealCli, origin: string, extra: Record<string, string> = {}): Record<string, string> {
  const env = workflowEnv(new FakeAgents());
  const setup = realCliSetup(cli, env.HOME!, origin);
  return {
    ...env,
    ...setup,
    PATH: `${cliAlone(cli)}:${env.PATH}`,
    AGENT_TYPE: cli,
    GIT_AUTHOR_NAME: "Agent",
    GIT_AUTHOR_EMAIL: "agent@example.com",
    GIT_COMMITTER_NAME: "Agent",
    GIT_COMMITTER_EMAIL: "agent@example.com",
    ...extra,
  };
}

function receipts(env: Record<string, string>): Array<Record<string, any>> {
  const dir = join(env.XDG_STATE_HOME!, "loopx", "runs");
  const files = existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith(".jsonl")) : [];
  return files
    .flatMap((name) => readFileSync(join(dir, name), "utf8").trim().split("\n").filter(Boolean).map((line) => JSON.parse(line)))
    .filter((event) => event.type === "receipt")
    .map(({ time: _t, v: _v, run: _r, type: _type, n: _n, workflow: _w, ...rest }) => rest);
}

function notes(env: Record<string, string>): Array<Record<string, any>> {
  const dir = join(env.XDG_STATE_HOME!, "loopx", "runs");
  const files = existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith(".jsonl")) : [];
  return files.flatMap((name) => readFileSync(join(dir, name), "utf8").trim().split("\n").filter(Boolean).map((line) => JSON.parse(line))).filter((event) => event.type === "note");
}

/** One model call's receipt, from the stand-in's usage: what each CLI reports for it. */
function callReceipts(cli: RealCli, calls: number): Array<Record<string, unknown>> {
  const c = DEFAULT_CHAT_USAGE;
  const uncached = c.prompt_tokens - c.cached_tokens!;
  const usd = (uncached * PRICE.input + c.completion_tokens * PRICE.output + c.cached_tokens! * PRICE.cacheRead) / 1e6;
  const one = { model: "fake-model", provider: "fake", tokens: { input: uncached, output: c.completion_tokens, cacheRead: c.cached_tokens } };
  if (cli === "pi") return Array.from({ length: calls }, () => ({ agent: "pi", ...one, tokens: { ...one.tokens, cacheWrite: 0 }, cost: { usd: expect.closeTo(usd, 12), kind: "billed" } }));
  if (cli === "opencode") return Array.from({ length: calls }, () => ({ agent: "opencode", ...one, tokens: { ...one.tokens, cacheWrite: 0 }, cost: { usd: expect.closeTo(usd, 12), kind: "billed" } }));
  if (cli === "gemini") {
    const g = DEFAULT_GEMINI_USAGE;
    return [{ agent: "gemini-cli", model: "gemini-2.5-flash", provider: "google", tokens: { input: calls * (g.promptTokenCount - g.cachedContentTokenCount!), output: calls * g.candidatesTokenCount, cacheRead: calls * g.cachedContentTokenCount! } }];
  }
  if (cli === "qwen") return [{ agent: "qwen-code", model: "fake-model", tokens: { input: calls * uncached, output: calls * c.completion_tokens, cacheRead: calls * c.cached_tokens! } }];
  return []; // copilot: no token counts in its JSON
}

const git = (cwd: string, ...args: string[]): string => spawnSync("git", args, { cwd, encoding: "utf8" }).stdout;
const loopx = (args: string[], cwd: string, env: Record<string, string>) => runLoopx(RUNTIMES[0]!, args, { cwd, env, timeoutMs: RUN_MS });

describe.concurrent("ralph on the real agent CLIs, against local stand-ins", () => {
  for (const cli of REAL_CLIS) {
    it(`${cli}: plan, then build, to completion; the CLI's own shell tool commits; receipts exact to the token`, { timeout: 2 * RUN_MS + 30_000 }, async (context) => {
      const commands = [
        "mkdir -p .ralph && printf -- '- [ ] say hello\\n' > .ralph/implementation_plan.md && git add .ralph/implementation_plan.md && git commit -qm 'plan: say hello'",
        "echo hello > hello.txt && sed -i 's/- \\[ \\]/- [x]/' .ralph/implementation_plan.md && git add hello.txt .ralph/implementation_plan.md && git commit -qm 'build: say hello'",
      ];
      const { api, mainCalls } = await standIn(context, cli, (n) => (n % 2 === 1 ? { tool: commands[(n - 1) / 2] ?? "true" } : { text: `Committed.\n${COMPLETE}` }));
      const project = workflowProject(["ralph"], { "specs/hello.md": "Say hello in hello.txt.\n" });
      const env = runEnv(cli, api.origin);
      const plan = await loopx(["run", "ralph:plan"], project, env);
      expect(plan.code, plan.stderr).toBe(0);
      expect(plan.stderr).toContain(`ralph: plan mode, agent ${cli} (`);
      expect(plan.stderr).toMatch(/→ \S+: mkdir -p \.ralph/); // the tool call, shown as Claude's is
      const build = await loopx(["run", "ralph:build"], project, env);
      expect(build.code, build.stderr).toBe(0);
      expect(build.stderr, build.stderr).not.toContain("attempt 1 failed");
      expect(lastWorkflowLine(build.stderr)).toMatch(/^ralph: Completion signal detected/);
      expect(git(project, "log", "--format=%an %s")).toBe("Agent build: say hello\nAgent plan: say hello\n");
      expect(readFileSync(join(project, "hello.txt"), "utf8")).toBe("hello\n");
      expect(mainCalls()).toBe(4);
      expect(receipts(env)).toEqual([...callReceipts(cli, 2), ...callReceipts(cli, 2)]);
    });

    it(`${cli}: a 401 ends the run at once — one call, no retry, one line naming the fix, exit code 6; the class in the record`, { timeout: RUN_MS + 30_000 }, async (context) => {
      const { api, mainCalls } = await standIn(context, cli, () => ({ status: 401, message: "Incorrect API key provided" }));
      const project = workflowProject(["ralph"]);
      const env = runEnv(cli, api.origin, { MAX_RETRIES: "3" });
      const result = await loopx(["run", "ralph:plan"], project, env);
      expect(result.code, result.stderr).toBe(1);
      expect(lastWorkflowLine(result.stderr)).toMatch(/^ralph: Agent unusable \(auth, policy stop, no retry\): .*(not logged in|key was refused).*\(exit code 6; session log/);
      // One call of the CLI: copilot itself tries a 401 three times within it (not configurable).
      expect(mainCalls()).toBe(cli === "copilot" ? 3 : 1);
      expect(notes(env).filter((n) => n.data?.kind === "agent.failure")).toEqual([expect.objectContaining({ n: 1, data: expect.objectContaining({ class: "auth", policy: "stop", attempt: 1 }) })]);
    });
  }

  // An error object in a 200's stream: Pi and Qwen exit 0 and say so in their stream (Pi's
  // stopReason, Qwen's "[API Error: …]" result); Copilot and opencode exit 1 (a failure like any other).
  for (const cli of ["pi", "qwen"] as const) {
    it(`${cli}: an API error inside a successful exit (exit 0, the stream says error) fails the iteration: success_with_error, retried, then Ralph exit code 4`, { timeout: RUN_MS + 30_000 }, async (context) => {
      const { api, mainCalls } = await standIn(context, cli, () => ({ streamError: "the model stream broke" }));
      const project = workflowProject(["ralph"]);
      const env = runEnv(cli, api.origin, { MAX_RETRIES: "2" });
      const result = await loopx(["run", "ralph:plan"], project, env);
      expect(result.code, result.stderr).toBe(1);
      expect(lastWorkflowLine(result.stderr)).toMatch(/^ralph: Agent failure exceeded retries \(2 failed attempts, MAX_RETRIES=2\): the agent reported an error: success_with_error/);
      expect(mainCalls()).toBe(2);
      const failures = notes(env).filter((n) => n.data?.kind === "agent.failure").map((n) => n.data);
      expect(failures).toEqual([expect.objectContaining({ class: "success_with_error", policy: "retry", attempt: 1 }), expect.objectContaining({ class: "success_with_error", policy: "retry", attempt: 2 })]);
    });
  }

  // A 500, a 503 and a quota 429 in turn, in one ralph run: each is classified (server, overload,
  // usage_window) and its policy applied — backed off, backed off, parked for LIMIT_BACKOFF with no
  // call before it ends — and the same iteration's next call succeeds. Then a quota 429 with its
  // reset: Gemini gets it in the Gemini API's own shape (google.rpc.RetryInfo, retryDelay 6s);
  // opencode, Pi, Copilot and Qwen in the message's words ("resets at <ISO time>", 6 s ahead),
  // which they pass on: parked until that reset. Gemini and Pi make one request per call (their
  // retries are off in the test config); Copilot and opencode retry within the call (5 times each),
  // at once given `retry-after: 0`, and Qwen 6 times, so every request of a failing call fails.
  // opencode's quota 429 without a reset comes without the hint, which opencode would take for
  // the reset.
  const INNER_REQUESTS: Partial<Record<RealCli, number>> = { copilot: 6, opencode: 6, qwen: 7 };
  const QUOTA = "You exceeded your current quota, please check your plan and billing details.";
  interface Transient {
    status: number;
    /** The error's message (a function: made when the stand-in answers). */
    message: string | (() => string);
    /** The answer's headers, `retry-after: 0` unless given. */
    headers?: Record<string, string>;
    details?: unknown[];
    failure: string;
    policy: "backoff" | "park";
    shown: string;
  }
  const TRANSIENT: Transient[] = [
    { status: 500, message: "Internal error", failure: "server", policy: "backoff", shown: "a 500" },
    { status: 503, message: "The model is overloaded", failure: "overload", policy: "backoff", shown: "a 503" },
    { status: 429, message: QUOTA, failure: "usage_window", policy: "park", shown: "a quota 429" },
  ];
  const RESET: Transient = { status: 429, message: QUOTA, details: GOOGLE_QUOTA_DETAILS("6s"), failure: "usage_window", policy: "park", shown: "a quota 429 with RetryInfo" };
  // The reset in the API's words only: opencode, Pi and Copilot pass the message on.
  const RESET_TEXT: Transient = { status: 429, message: () => `Usage limit reached, resets at ${new Date(Date.now() + 6000).toISOString()}`, failure: "usage_window", policy: "park", shown: "a 429 whose message names the reset" };
  const RESETS = [RESET, RESET_TEXT];
  /** One ralph run whose stand-in fails each call of `failures` in turn, then answers: checked. */
  async function transientRun(context: TestContext, cli: RealCli, failures: Transient[]): Promise<void> {
    const failing = INNER_REQUESTS[cli] ?? 1;
    const calls: number[] = [];
    const { api } = await standIn(context, cli, (n) => {
      calls.push(Date.now());
      const failure = failures[Math.floor((n - 1) / failing)];
      if (!failure) return { text: `Done.\n${COMPLETE}` };
      return { status: failure.status, message: typeof failure.message === "function" ? failure.message() : failure.message, headers: failure.headers ?? { "retry-after": "0" }, ...(failure.details ? { details: failure.details } : {}) };
    });
    const project = workflowProject(["ralph"]);
    const env = runEnv(cli, api.origin, { RETRY_BACKOFF: "1s", MAX_RETRIES: "3", LIMIT_BACKOFF: "4s", LIMIT_MARGIN: "0" });
    const result = await loopx(["run", "ralph:plan"], project, env);
    expect(result.code, result.stderr).toBe(0);
    expect(lastWorkflowLine(result.stderr)).toMatch(/^ralph: Completion signal detected/);
    expect(calls).toHaveLength(failures.length * failing + 1);
    // A failure that is backed off counts as an attempt; a parked one waits for the same attempt.
    let attempt = 0;
    const expected = failures.map(({ status, failure, policy }) => expect.objectContaining({ class: failure, policy, status, attempt: policy === "park" ? attempt + 1 : ++attempt }));
    expect(notes(env).filter((n) => n.data?.kind === "agent.failure").map((n) => n.data)).toEqual(expected);
    // After each park, no call before its end: LIMIT_BACKOFF without a reset, else the reset.
    failures.forEach((failure, i) => {
      if (failure.policy !== "park") return;
      const next = (i + 1) * failing;
      expect(calls[next]! - calls[next - 1]!).toBeGreaterThanOrEqual(RESETS.includes(failure) ? 6000 : 4000);
    });
    if (failures.some((f) => f.shown === TRANSIENT[2]!.shown)) expect(result.stderr).toContain("ralph: usage limit (usage_window) — no reset time given: backing off 4s");
    if (failures.some((f) => RESETS.includes(f))) expect(result.stderr).toMatch(/ralph: usage limit \(usage_window\) — resets \S+; waiting until/);
  }

  const transientRuns: Array<{ cli: RealCli; runs: Transient[][] }> = [
    { cli: "gemini", runs: [[...TRANSIENT, RESET]] },
    { cli: "pi", runs: [[...TRANSIENT, RESET_TEXT]] },
    { cli: "copilot", runs: [[...TRANSIENT, RESET_TEXT]] },
    // opencode takes a retry-after hint for the window's reset: its quota 429 without a reset has
    // none, and opencode retries it for about a minute itself (2, 4, 8, 16, 32 s), side by side.
    { cli: "opencode", runs: [[...TRANSIENT.slice(0, 2), RESET_TEXT], [{ ...TRANSIENT[2]!, headers: {} }]] },
    // Qwen retries each failed request 6 times with a backoff of its own (~75 s, whatever its
    // settings or a retry-after say): one failure per run, the four runs side by side in one test.
    { cli: "qwen", runs: [...TRANSIENT, RESET_TEXT].map((failure) => [failure]) },
  ];
  for (const { cli, runs } of transientRuns) {
    const names = runs.flat().map(({ shown, failure }) => `${shown} is ${failure}`).join(", ");
    const side = runs.length > 1 ? ` (in ${runs.length} runs side by side)` : "";
    it(`${cli}: ${names}, each with its policy${side}, and the same iteration's next call succeeds`, { timeout: RUN_MS + 30_000 }, async (context) => {
      await Promise.all(runs.map((failures) => transientRun(context, cli, failures)));
    });
  }

  // Ctrl-C and --timeout while the CLI's own shell tool blocks: every CLI on node; Pi (the quickest
  // to start) on bun and the standalone binary too. Each limit is about twice what a CLI took to
  // reach its tool and be interrupted under a full CI run (opencode 51 s, gemini 33, qwen 19,
  // pi 13, copilot 8): long enough that the tool blocks first, no longer than the test must wait.
  const LIMITS: Record<RealCli, { option: string; shown: string }> = {
    opencode: { option: "100s", shown: "1m 40s" },
    gemini: { option: "60s", shown: "1m 00s" },
    qwen: { option: "45s", shown: "45s" },
    pi: { option: "30s", shown: "30s" },
    copilot: { option: "30s", shown: "30s" },
  };
  const channels = (cli: RealCli) => (cli === "pi" ? CLIS : CLIS.slice(0, 1));
  const stops = REAL_CLIS.flatMap((cli) =>
    channels(cli).flatMap((channel) => [
      { cli, channel, how: "Ctrl-C", options: [] as string[], code: 130 },
      { cli, channel, how: "--timeout", options: ["--timeout", LIMITS[cli].option], code: 124 },
    ]),
  );
  for (const { cli, channel, how, options, code } of stops) {
    it(`${cli} (${channel.name}): ${how} while the CLI's tool runs sleep 300 leaves no process behind`, { timeout: RUN_MS + 30_000 }, async (context) => {
      const { api } = await standIn(context, cli, () => ({ tool: 'echo "$HARDENING_TAG" > started.txt; sleep 300' }));
      const project = workflowProject(["ralph"]);
      const env = runEnv(cli, api.origin);
      const started = join(project, "started.txt");
      const result = await runCli(channel, ["run", ...options, "ralph:plan"], {
        cwd: project,
        env,
        timeoutMs: RUN_MS,
        onSpawn: (child) => {
          if (how === "Ctrl-C") void waitFor(() => existsSync(started), RUN_MS - 30_000).then(() => setTimeout(() => child.kill("SIGINT"), 300));
        },
      });
      expect(result.code, result.stderr).toBe(code);
      expect(readFileSync(started, "utf8").trim()).toBe(env.HARDENING_TAG);
      expect(await waitFor(() => taggedSurvivors(env.HARDENING_TAG!).length === 0, 15_000)).toBe(true);
      const reason = how === "Ctrl-C" ? "Interrupted by SIGINT" : `Timed out by loopx --timeout (${LIMITS[cli].shown} per script)`;
      expect(sessionLog(join(project, ".ralph"))).toContain(`Exit Reason: ${reason}\n`);
    });
  }

  // converge over two rounds with each CLI as the worker and another as the judge (in its
  // read-only or plan mode where it has one): every CLI works once and judges once.
  const PAIRS: Array<[RealCli, RealCli]> = [["pi", "gemini"], ["gemini", "pi"], ["opencode", "qwen"], ["qwen", "copilot"], ["copilot", "opencode"]];
  for (const [workerCli, judgeCli] of PAIRS) {
    it(`converge over two rounds: ${workerCli} works, ${judgeCli} judges; a failing gate, then approval`, { timeout: RUN_MS + 30_000 }, async (context) => {
      const work: ChatReply[] = [{ tool: "echo 41 > answer.txt" }, { text: "Wrote the answer." }, { tool: "echo 42 > answer.txt" }, { text: "Fixed the answer." }];
      const worker = await standIn(context, workerCli, (n) => work[n - 1] ?? { text: "unexpected call" });
      const judge = await standIn(context, judgeCli, () => ({ text: "The answer is right.\n<verdict>APPROVE</verdict>" }), true);
      const project = workflowProject(["converge"], {
        "check.sh": "got=$(cat answer.txt); [ \"$got\" = 42 ] || { echo \"answer.txt: expected 42, got $got\"; exit 1; }\n",
      });
      const base = runEnv(workerCli, worker.api.origin);
      // The judge's own settings (its stand-in's address, its key) beside the worker's, in the same HOME.
      const { AGENT_EXTRA_ARGS: judgeArgs, ...judging } = realCliSetup(judgeCli, base.HOME!, judge.api.origin);
      const env = {
        ...base,
        ...judging,
        PATH: `${cliAlone(judgeCli)}:${base.PATH}`,
        CONVERGE_WORKER_TYPE: workerCli,
        CONVERGE_WORKER_EXTRA_ARGS: base.AGENT_EXTRA_ARGS ?? "",
        CONVERGE_JUDGE_TYPE: judgeCli,
        CONVERGE_JUDGE_EXTRA_ARGS: judgeArgs ?? "",
        CONVERGE_TASK: "Write the answer, 42, into answer.txt.",
        CONVERGE_GATE: "sh check.sh",
        CONVERGE_MAX_ROUNDS: "3",
      };
      const result = await loopx(["run", "converge"], project, env);
      expect(result.code, result.stderr).toBe(0);
      expect(readFileSync(join(project, "answer.txt"), "utf8")).toBe("42\n");
      expect(worker.mainCalls()).toBe(4);
      expect(judge.mainCalls()).toBe(1);
      expect(lastWorkflowLine(result.stderr)).toMatch(/^converge: converged after 2 rounds .*rounds 1: gate failed · 2: approved$/);
      // The judge ran in its CLI's read-only or plan mode.
      expect(result.stderr).toContain(`judge (${judgeCli}: ${PRESETS[judgeCli].cli} ${PRESETS[judgeCli].readOnlyArgs}`);
    });
  }
  // A context overflow, in every CLI: one fresh session, then the iteration fails. Gemini gets the
  // Gemini API's own words for it; the others the Chat Completions wording. opencode would compact
  // and retry without end: the workflow ends the call at its first overflow.
  const overflow = (cli: RealCli): string =>
    cli === "gemini" ? "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)." : "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.";
  for (const cli of REAL_CLIS) {
    it(`${cli}: a context-length error gets one fresh session, then the iteration fails (Ralph exit code 4)`, { timeout: RUN_MS + 30_000 }, async (context) => {
      const { api } = await standIn(context, cli, () => ({ status: 400, message: overflow(cli) }));
      const project = workflowProject(["ralph"]);
      const env = runEnv(cli, api.origin, { MAX_RETRIES: "5" });
      const result = await loopx(["run", "ralph:plan"], project, env);
      expect(result.code, result.stderr).toBe(1);
      expect(lastWorkflowLine(result.stderr)).toMatch(/^ralph: Agent failure exceeded retries \(2 failed attempts, MAX_RETRIES=5\)/);
      const failures = notes(env).filter((n) => n.data?.kind === "agent.failure").map((n) => n.data);
      expect(failures).toEqual([expect.objectContaining({ class: "context_overflow", policy: "fresh", attempt: 1 }), expect.objectContaining({ class: "context_overflow", policy: "fresh", attempt: 2 })]);
    });
  }
});
