/**
 * The shipped workflows' reading of an agent's answer and of its limits (examples/workflows/shared):
 * completion and REPLAN only on a line of their own in the final answer (table-driven, the
 * narrated case included), the final answer of each preset's stream, and the usage limits each
 * CLI reports (Claude's rate_limit_event, a 429, Codex's usage-limit error and its reset time).
 */
import { describe, expect, it } from "vitest";
import { finalAnswer, signalled } from "../../../../../examples/workflows/shared/agent.ts";
import { codexResetTime } from "../../../../../examples/workflows/shared/codex.ts";
import { usageLimit } from "../../../../../examples/workflows/shared/limits.ts";
import { ampStream, claudeApiRetry429Stream, claudeLimitStream, claudeStream, clineStream, codexLimitStream, codexStream } from "../../../../fixtures/agents/support.js";

const COMPLETE = "<promise>COMPLETE</promise>";
const events = (ndjson: string) => ndjson.trim().split("\n").map((line) => JSON.parse(line));

describe("signalled: the tag on a line of its own, outside code blocks", () => {
  it.each([
    [`All done.\n${COMPLETE}`, true],
    [`${COMPLETE}`, true],
    [`All done.\n  ${COMPLETE}  \n`, true],
    [`All done.\r\n${COMPLETE}\r\n`, true],
    [`I will not print ${COMPLETE} yet: two tasks remain.`, false],
    [`All done. ${COMPLETE}`, false],
    [`Not ${COMPLETE}`, false],
    [`> ${COMPLETE}`, false],
    [`\`${COMPLETE}\``, false],
    [`**${COMPLETE}**`, false],
    ["```\n" + COMPLETE + "\n```", false],
    ["~~~\n" + COMPLETE + "\n~~~\nmore", false],
    ["```\ncode\n```\n" + COMPLETE, true],
    [`<promise>COMPLETE</promise>.`, false],
    ["", false],
  ])("%j → %s", (answer, expected) => {
    expect(signalled(answer, COMPLETE)).toBe(expected);
  });
});

describe("finalAnswer: what the agent ended with", () => {
  it("claude: the result event's text, not earlier assistant messages", () => {
    const stream = events(claudeStream("The end."));
    stream.splice(1, 0, { type: "assistant", message: { content: [{ type: "text", text: `Earlier.\n${COMPLETE}` }] } });
    expect(finalAnswer("claude", stream)).toBe("The end.");
    expect(finalAnswer("claude", stream.filter((e) => e.type !== "result"))).toBe("The end.");
  });
  it("amp: the result, never the echoed prompt; codex: the last agent message; cline: the completion result", () => {
    expect(finalAnswer("amp", events(ampStream(`Say ${COMPLETE}`, "Fine.")))).toBe("Fine.");
    expect(finalAnswer("codex", events(codexStream("Last words.")))).toBe("Last words.");
    expect(finalAnswer("cline", events(clineStream(`Say ${COMPLETE}`, "Completed.")))).toBe("Completed.");
  });
});

describe("usageLimit: what each CLI reports", () => {
  it("claude: rate_limit_event rejected with resetsAt → its reset and window", () => {
    expect(usageLimit("claude", events(claudeLimitStream(1795466790, "seven_day")))).toEqual({
      resetsAt: 1795466790_000,
      kind: "seven_day",
      message: "You've hit your session limit · resets 7:55pm (UTC)",
    });
  });
  it("claude: rejected without resetsAt, and an API-key 429 after api_retry events → no reset time", () => {
    expect(usageLimit("claude", events(claudeLimitStream(undefined)))).toMatchObject({ resetsAt: undefined, kind: "rate_limit" });
    expect(usageLimit("claude", events(claudeApiRetry429Stream()))).toEqual({ kind: "rate_limit", message: "API Error: Request rejected (429) · Rate limited" });
  });
  it("claude: an allowed rate_limit_event on a normal run, or another error, is no limit", () => {
    const normal = events(claudeStream("ok"));
    normal.splice(1, 0, { type: "rate_limit_event", rate_limit_info: { status: "allowed", resetsAt: 1795466790 } });
    expect(usageLimit("claude", normal)).toBeUndefined();
    expect(usageLimit("claude", events(claudeStream("boom", { isError: true })))).toBeUndefined();
  });
  it("codex: the usage-limit error, with its reset time when it gives one", () => {
    const now = new Date(2026, 10, 23, 14, 0, 0).getTime();
    const at = usageLimit("codex", events(codexLimitStream("You've hit your usage limit. Try again at 3:05 PM.")));
    expect(at).toMatchObject({ kind: "usage_limit" });
    // The end of the minute named (codex shows the true reset rounded down to it).
    expect(codexResetTime("You've hit your usage limit. Try again at 3:05 PM.", now)).toBe(new Date(2026, 10, 23, 15, 6).getTime());
    expect(codexResetTime("… or try again at 1:05 PM.", now)).toBe(new Date(2026, 10, 24, 13, 6).getTime()); // past: tomorrow
    expect(codexResetTime("… or try again at Dec 29th, 2026 10:15 PM.", now)).toBe(new Date(2026, 11, 29, 22, 16).getTime());
    expect(codexResetTime("You've hit your usage limit. Try again later.", now)).toBeUndefined();
    expect(usageLimit("codex", events(codexStream("fine")))).toBeUndefined();
  });
});
