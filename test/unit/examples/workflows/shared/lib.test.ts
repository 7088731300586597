/**
 * The parsers inside the shipped workflows (examples/workflows/shared, copied into each workflow
 * by the pack step): AGENT_ARGS word splitting, envsubst-style templates, config files, and the response
 * text / cost / failure read from each agent's stream.
 */
import fc from "fast-check";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { agentSpec, responseText, streamFailure } from "../../../../../examples/workflows/shared/agent.ts";
import { codexReceipts } from "../../../../../examples/workflows/shared/codex.ts";
import { agentReceipts, receiptsCost } from "../../../../../examples/workflows/shared/usage.ts";
import { readKeyValueFile, splitArgs, substitute } from "../../../../../examples/workflows/shared/util.ts";
import { ampStream, claudeStream, clineStream, codexStream } from "../../../../fixtures/agents/support.js";
import { tempDir } from "../../../../helpers.js";

const events = (ndjson: string) => ndjson.trim().split("\n").map((line) => JSON.parse(line));

describe("splitArgs", () => {
  it("gives back any list of words, each single-quoted the POSIX way", () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { maxLength: 8 }), (words) => {
        const quoted = words.map((w) => `'${w.replace(/'/g, "'\\''")}'`).join(" ");
        expect(splitArgs(quoted)).toEqual(words);
      }),
    );
  });

  it("splits like a shell: whitespace, double quotes, backslashes; no expansion", () => {
    expect(splitArgs(`  -p --model "big one"  a\\ b "x\\"y" '$HOME' `)).toEqual(["-p", "--model", "big one", "a b", 'x"y', "$HOME"]);
    expect(splitArgs("")).toEqual([]);
    expect(() => splitArgs(`--a "open`)).toThrow(/unterminated/);
  });
});

describe("substitute", () => {
  it("leaves text without $ alone", () => {
    fc.assert(fc.property(fc.string().filter((s) => !s.includes("$")), (text) => substitute(text, { A: "x" }) === text));
  });

  it("replaces ${NAME} and $NAME, unset ones with nothing (envsubst)", () => {
    expect(substitute("${MODE}/$MODE/${NOPE}/$1/$", { MODE: "plan" })).toBe("plan/plan//$1/$");
  });
});

it("readKeyValueFile: comments, quotes, export, invalid lines", () => {
  const file = join(tempDir(), "config");
  writeFileSync(file, "# c\nA=1\nexport B='two words'\nC=\"3\"\n1BAD=x\nno equals\nD=a=b # kept\n");
  expect(readKeyValueFile(file)).toEqual({ A: "1", B: "two words", C: "3", D: "a=b # kept" });
  expect(readKeyValueFile(join(tempDir(), "missing"))).toEqual({});
});

describe("agent streams", () => {
  const prompt = "Say <promise>COMPLETE</promise> when done.";
  it("responseText takes only the assistant's words, per preset", () => {
    expect(responseText("claude", events(claudeStream("Hi.", { toolResult: prompt })))).toBe("Hi.");
    expect(responseText("amp", events(ampStream(prompt, "Hi.")))).toBe("Hi.");
    expect(responseText("codex", events(codexStream("Hi.")))).toBe("Hi.");
    expect(responseText("cline", events(clineStream(prompt, "Hi.")))).toBe("Reading the plan.\nHi.");
  });

  it("the cost in a call's receipts: Claude's total_cost_usd, Cline's summed request costs, none for amp (no balance) and codex (tokens only)", () => {
    const cost = (type: "claude" | "cline" | "amp", ndjson: string) => receiptsCost(agentReceipts(type, events(ndjson), { env: {} }));
    expect(cost("claude", claudeStream("x", { cost: 0.5 }))).toEqual({ billed: 0.5 }); // the recording's init: an API key
    expect(cost("cline", clineStream(prompt, "x", 0.25))).toEqual({ billed: 0.25 });
    expect(cost("amp", ampStream(prompt, "x"))).toBeUndefined();
    const codex = codexReceipts({ cli: "codex", args: [] }, events(codexStream("x")), { HOME: tempDir("loopx-codex-home-"), XDG_STATE_HOME: tempDir("loopx-codex-state-") });
    expect(receiptsCost(codex)).toBeUndefined();
    expect(codex).toMatchObject([{ agent: "codex", provider: "openai", tokens: { input: 315, cacheRead: 24448, cacheWrite: 0, output: 58, reasoning: 64 } }]);
  });

  it("streamFailure: error results, failed turns, missing end events", () => {
    expect(streamFailure("claude", events(claudeStream("x")))).toBeUndefined();
    expect(streamFailure("claude", events(claudeStream("x", { isError: true })))).toMatch(/reported an error/);
    expect(streamFailure("claude", events(claudeStream("x")).slice(0, 2))).toBe("the stream has no result event");
    expect(streamFailure("codex", [{ type: "turn.failed", error: { message: "rate limited" } }])).toContain("rate limited");
    expect(streamFailure("amp", [])).toBe("no JSON events on stdout");
  });

  it("agentSpec: presets, overrides, and a bad type", () => {
    expect(agentSpec({}, "AGENT_")).toMatchObject({ type: "claude", cli: "claude" });
    expect(agentSpec({ AGENT_TYPE: "codex", AGENT_CLI: "/opt/codex", AGENT_ARGS: "exec --json -" }, "AGENT_")).toMatchObject({
      type: "codex",
      cli: "/opt/codex",
      args: ["exec", "--json", "-"],
    });
    expect(agentSpec({ AGENT_TYPE: "amp" }, "AGENT_").usageCmd).toBe("amp usage");
    expect(() => agentSpec({ AGENT_TYPE: "gpt" }, "AGENT_")).toThrow(/must be one of claude, codex, amp, cline/);
  });
});
