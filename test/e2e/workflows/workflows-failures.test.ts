/**
 * The workflows' one failure vocabulary (examples/workflows/shared/failures.ts), against the
 * streams the real CLIs printed when a local stand-in answered 401, 429, 503, 500 or a
 * context-length error (recorded by fixtures/agents/record-streams.ts into
 * fixtures/agents/streams/), and against Claude Code's and Codex's recorded shapes. Also each
 * new preset's receipts from its recorded successful stream, exact to the token.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type PRESETS, finalAnswer, responseText, streamFailure } from "../../../examples/workflows/shared/agent.ts";
import { classifyFailure, failurePolicies, FAILURE_READERS, POLICIES, streamError, type FailureClass } from "../../../examples/workflows/shared/failures.ts";
import { streamReceipts } from "../../../examples/workflows/shared/presets/index.ts";
import { ROOT } from "../../helpers.js";
import { DEFAULT_CHAT_USAGE } from "../../fixtures/agents/chat-completions-api.js";
import { DEFAULT_GEMINI_USAGE } from "../../fixtures/agents/gemini-api.js";
import { PRICE } from "../../fixtures/agents/real-clis.js";
import { claudeApiRetry429Stream, claudeLimitStream, claudeStream, codexLimitStream } from "../../fixtures/agents/support.js";

const STREAMS = join(ROOT, "test", "fixtures", "agents", "streams");
const parse = (text: string) =>
  text
    .split("\n")
    .filter((l) => l.trim().startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, any>);

function recorded(name: string) {
  const meta = JSON.parse(readFileSync(join(STREAMS, `${name}.json`), "utf8")) as { code: number | null; signal: string | null; stderr: string[]; requests: number };
  return { events: parse(readFileSync(join(STREAMS, `${name}.ndjson`), "utf8")), ...meta };
}

/** The class each stand-in case must give (the stand-in's answer, see record-streams.ts). */
const EXPECTED: Record<string, FailureClass> = { auth: "auth", window: "usage_window", retryinfo: "usage_window", rate: "rate_limit", overload: "overload", server: "server", context: "context_overflow" };

const recordings = existsSync(STREAMS) ? readdirSync(STREAMS).filter((f) => f.endsWith(".ndjson")).map((f) => f.slice(0, -".ndjson".length)) : [];

describe("failures.ts: the recorded streams of the real CLIs", () => {
  it("there are recordings of every new CLI", () => {
    for (const cli of ["gemini", "pi", "copilot", "opencode", "qwen"]) expect(recordings.some((r) => r.startsWith(`${cli}-`)), cli).toBe(true);
  });

  for (const name of recordings.filter((r) => !r.endsWith("-ok") && !r.endsWith("-streamerror"))) {
    const [cli, kind] = name.split("-") as [keyof typeof PRESETS, string];
    it(`${name}: the call failed, classified ${EXPECTED[kind]} from the CLI's structured fields`, () => {
      const run = recorded(name);
      const failedInStream = streamError(cli, run.events, run.code);
      // Whatever the exit code (pi and qwen exit 0), the call is a failure.
      expect(run.code !== 0 || failedInStream !== undefined).toBe(true);
      const failure = classifyFailure(cli, { events: run.events, code: run.code, signal: run.signal, stderr: run.stderr });
      expect(failure.class, failure.evidence).toBe(EXPECTED[kind]);
      // Structured first: the CLI's own reader found it (not the stderr fallback).
      expect(FAILURE_READERS[cli](run.events, { events: run.events, code: run.code, signal: run.signal, stderr: [] })?.class).toBe(EXPECTED[kind]);
      expect(failure.evidence).not.toMatch(/^stderr/);
      if (kind !== "context") expect(failure.status).toBe(kind === "auth" ? 401 : kind === "overload" ? 503 : kind === "server" ? 500 : 429);
    });
  }

  it("*-streamerror (an error object in a 200's stream): Pi and Qwen exit 0, success_with_error; opencode passes the API's body on, whose type server_error is server; Copilot says only that it failed", () => {
    const expected: Record<string, FailureClass> = { pi: "success_with_error", qwen: "success_with_error", opencode: "server", copilot: "unknown" };
    for (const [cli, cls] of Object.entries(expected)) {
      const run = recorded(`${cli}-streamerror`);
      const failure = classifyFailure(cli as keyof typeof PRESETS, { events: run.events, code: run.code, signal: run.signal, stderr: run.stderr });
      expect([failure.class, run.code === 0], `${cli}: ${failure.evidence}`).toEqual([cls, cls === "success_with_error"]);
    }
  });

  it("gemini-retryinfo: the reset Google's RetryInfo gives (retryDelay 7s), which Gemini CLI prints as its suggested retry, is the window's", () => {
    const run = recorded("gemini-retryinfo");
    const failure = classifyFailure("gemini", { events: run.events, code: run.code, signal: run.signal, stderr: run.stderr });
    expect(failure).toMatchObject({ class: "usage_window", status: 429, retryAfterMs: 7000 });
  });

  it("gemini-context in the Gemini API's own words (\"The input token count (…) exceeds the maximum number of tokens allowed\") is a context overflow too", () => {
    const run = recorded("gemini-context");
    const own = "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).";
    const events = run.events.map((e) => (e.type === "result" ? { ...e, error: { ...e.error, message: String(e.error.message).replace(/This model's maximum context length[^"\\]*/, own) } } : e));
    expect(JSON.stringify(events)).toContain(own);
    expect(classifyFailure("gemini", { events, code: run.code, signal: run.signal, stderr: [] })).toMatchObject({ class: "context_overflow", status: 400 });
  });

  it("a usage window whose reset is only in the API's words (\"resets at 2030-01-01T00:00:00Z\"): the reset, from every CLI that passes the message on", () => {
    for (const name of recordings.filter((r) => r.endsWith("-window"))) {
      const run = recorded(name);
      const failure = classifyFailure(name.split("-")[0] as keyof typeof PRESETS, { events: run.events, code: run.code, signal: run.signal, stderr: [] });
      expect(failure, name).toMatchObject({ class: "usage_window", resetsAt: Date.parse("2030-01-01T00:00:00Z") });
    }
    // A time without its zone could be any zone's: no reset (LIMIT_BACKOFF applies).
    const local = [{ type: "message_end", message: { role: "assistant", stopReason: "error", errorMessage: "429 Usage limit reached, resets at 2030-01-01 08:00:00" } }];
    const zoneless = classifyFailure("pi", { events: local, code: 0, signal: null, stderr: [] });
    expect([zoneless.class, zoneless.resetsAt]).toEqual(["usage_window", undefined]);
  });

  for (const name of recordings.filter((r) => r.endsWith("-ok"))) {
    const cli = name.slice(0, -3) as keyof typeof PRESETS;
    it(`${name}: a success, its answer and tool call read, nothing classified`, () => {
      const run = recorded(name);
      expect(streamError(cli, run.events, 0)).toBeUndefined();
      expect(streamFailure(cli, run.events)).toBeUndefined();
      expect(finalAnswer(cli, run.events)).toContain("DONE-FROM-FAKE");
      expect(responseText(cli, run.events)).not.toContain("Create done.txt"); // never the prompt
    });
  }
});

describe("receipts of the new presets, from their recorded streams, exact to the token", () => {
  const chat = DEFAULT_CHAT_USAGE;
  const uncached = chat.prompt_tokens - chat.cached_tokens!;
  it("pi: one receipt per assistant message_end, tokens and the cost from the configured prices (billed)", () => {
    const usd = (uncached * PRICE.input + chat.completion_tokens * PRICE.output + chat.cached_tokens! * PRICE.cacheRead) / 1e6;
    const receipts = streamReceipts("pi", recorded("pi-ok").events, { HOME: "/nonexistent" }, []);
    expect(receipts).toHaveLength(2);
    for (const r of receipts) {
      expect(r).toMatchObject({ agent: "pi", model: "fake-model", provider: "fake", tokens: { input: uncached, output: chat.completion_tokens, cacheRead: chat.cached_tokens } });
      expect(r.cost!.kind).toBe("billed");
      expect(r.cost!.usd).toBeCloseTo(usd, 12);
    }
  });

  it("gemini: one receipt per model of result.stats, tokens only (Gemini gives no cost)", () => {
    const g = DEFAULT_GEMINI_USAGE;
    const receipts = streamReceipts("gemini", recorded("gemini-ok").events, {}, []);
    expect(receipts).toEqual([{ agent: "gemini-cli", model: "gemini-2.5-flash", provider: "google", tokens: { input: 2 * (g.promptTokenCount - g.cachedContentTokenCount!), output: 2 * g.candidatesTokenCount, cacheRead: 2 * g.cachedContentTokenCount! } }]);
  });

  it("copilot: no receipt (its JSON has no token counts)", () => {
    expect(streamReceipts("copilot", recorded("copilot-ok").events, {}, [])).toEqual([]);
  });
});

describe("failures.ts: Claude Code and Codex", () => {
  const events = (text: string) => parse(text);
  it("claude: a rejected rate_limit_event with resetsAt is a usage window with its reset", () => {
    const resetsAt = 2_000_000_000;
    const failure = classifyFailure("claude", { events: events(claudeLimitStream(resetsAt)), code: 1, signal: null, stderr: [] });
    expect(failure).toMatchObject({ class: "usage_window", resetsAt: resetsAt * 1000, window: "five_hour" });
    expect(failure.evidence).toContain("rate_limit_event.status=rejected");
  });

  it("claude: a 429 without a reset time is a rate limit, with api_retry's delay as the hint", () => {
    const failure = classifyFailure("claude", { events: events(claudeApiRetry429Stream()), code: 1, signal: null, stderr: [] });
    expect(failure).toMatchObject({ class: "rate_limit", status: 429, retryAfterMs: 1000 });
    expect(failure.evidence).toContain("result.api_error_status=429");
  });

  it("claude: is_error with exit 0 and no status is success_with_error; a 401 is auth", () => {
    const swe = classifyFailure("claude", { events: events(claudeStream("It went wrong", { isError: true })), code: 0, signal: null, stderr: [] });
    expect(swe.class).toBe("success_with_error");
    const patched = events(claudeStream("Invalid API key · Fix external API key"));
    Object.assign(patched.at(-1)!, { is_error: true, api_error_status: 401 });
    expect(classifyFailure("claude", { events: patched, code: 1, signal: null, stderr: [] })).toMatchObject({ class: "auth", status: 401 });
  });

  it("codex: a usage limit is a usage window with the reset it names; a 401 in turn.failed is auth", () => {
    const failure = classifyFailure("codex", { events: events(codexLimitStream("You've hit your usage limit. Try again at 2:44 PM.")), code: 1, signal: null, stderr: [] });
    expect(failure.class).toBe("usage_window");
    expect(new Date(failure.resetsAt!).getMinutes()).toBe(45); // the end of the minute codex names
    const auth = classifyFailure("codex", { events: events(codexLimitStream("unexpected status 401 Unauthorized: Missing bearer")), code: 1, signal: null, stderr: [] });
    expect(auth).toMatchObject({ class: "auth", status: 401 });
  });

  it("the order: could not start, the idle watchdog, fields, then words on stderr, then the exit", () => {
    expect(classifyFailure("claude", { events: [], code: 127, signal: null, spawnError: "spawn claude ENOENT", stderr: [] }).class).toBe("tool_or_cli_crash");
    expect(classifyFailure("pi", { events: [], code: null, signal: "SIGTERM", idle: true, stderr: [] }).class).toBe("hang");
    expect(classifyFailure("opencode", { events: [], code: 1, signal: null, stderr: ["Error: 529 overloaded_error"] }).class).toBe("overload");
    expect(classifyFailure("opencode", { events: [], code: 1, signal: null, stderr: ["Segmentation fault"] }).class).toBe("tool_or_cli_crash");
    expect(classifyFailure("gemini", { events: [], code: 173, signal: null, stderr: [] })).toMatchObject({ class: "rate_limit", status: 429 });
  });
});

describe("failure policies", () => {
  it("defaults: auth stops, windows park, 5xx back off, context gets a fresh session; FAILURE_POLICY_<CLASS> overrides", () => {
    expect(POLICIES).toMatchObject({ auth: "stop", usage_window: "park", overload: "backoff", server: "backoff", context_overflow: "fresh", success_with_error: "retry" });
    expect(failurePolicies({ FAILURE_POLICY_SERVER: "fail" }).server).toBe("fail");
    expect(() => failurePolicies({ FAILURE_POLICY_AUTH: "ignore" })).toThrow("FAILURE_POLICY_AUTH must be one of stop, park, backoff, fresh, retry, fail, got \"ignore\"");
  });
});
