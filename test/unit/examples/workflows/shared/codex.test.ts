/**
 * What the shipped workflows read from the real Codex CLI's `exec --json` stream (0.169.0; the
 * shapes recorded from it against the Responses API stand-in): a recovered `error` is no
 * failure, a usage-limit reset is the END of the minute codex names (with a fixed clock), the
 * live view says a limit once, only completed items and turns are progress, and a resumed
 * thread's cumulative usage is diffed.
 */
import { describe, expect, it } from "vitest";
import { PRESETS, displayEvent, streamFailure } from "../../../../../examples/workflows/shared/agent.ts";
import { codexLimit, codexModel, codexProgress, codexResetTime, receiptTokens, usageDelta } from "../../../../../examples/workflows/shared/codex.ts";
import { usageLimit } from "../../../../../examples/workflows/shared/limits.ts";
import { splitArgs } from "../../../../../examples/workflows/shared/util.ts";
import { tempDir } from "../../../../helpers.js";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

// As codex 0.169.0 printed them against the stand-in.
const THREAD = { type: "thread.started", thread_id: "01a21327-e88a-7ec2-b79c-34b90ebfe0fe" };
const RECONNECT = { type: "error", message: "Reconnecting... 1/2 (stream disconnected before completion: error sending request)" };
const DONE = { type: "turn.completed", usage: { input_tokens: 1000, cached_input_tokens: 400, cache_write_input_tokens: 0, output_tokens: 50, reasoning_output_tokens: 10 } };
const LIMIT = "You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at 12:52 PM.";
const limitStream = [THREAD, { type: "turn.started" }, { type: "error", message: LIMIT }, { type: "turn.failed", error: { message: LIMIT } }];

describe("codex: failures", () => {
  it("a Reconnecting… error followed by turn.completed is no failure", () => {
    const recovered = [THREAD, { type: "turn.started" }, RECONNECT, { type: "item.completed", item: { id: "item_1", type: "agent_message", text: "recovered" } }, DONE];
    expect(streamFailure("codex", recovered)).toBeUndefined();
  });

  it("turn.failed, or no turn.completed (the last error named), is a failure", () => {
    expect(streamFailure("codex", limitStream)).toContain("You’ve hit your usage limit");
    expect(streamFailure("codex", [THREAD, { type: "turn.started" }, RECONNECT])).toBe(`the stream has no turn.completed event (last error: ${RECONNECT.message})`);
  });

  it("the preset runs unsandboxed (it commits); the judge stays read-only; no removed --full-auto", () => {
    expect(splitArgs(PRESETS.codex.args)).toEqual(["exec", "--json", "--dangerously-bypass-approvals-and-sandbox", "-"]);
    expect(splitArgs(PRESETS.codex.readOnlyArgs)).toEqual(["exec", "--json", "--sandbox", "read-only", "-"]);
  });
});

describe("codex: usage-limit reset", () => {
  const now = new Date(2026, 10, 25, 12, 51, 15).getTime(); // the true reset: 12:52:40, shown as "12:52 PM"

  it("waits to the end of the minute named, never earlier than the true reset", () => {
    const limit = usageLimit("codex", limitStream.map((e) => structuredClone(e)));
    expect(limit).toMatchObject({ kind: "usage_limit" });
    expect(codexResetTime(LIMIT, now)).toBe(new Date(2026, 10, 25, 12, 53, 0).getTime());
    expect(codexResetTime(LIMIT, now)).toBeGreaterThan(new Date(2026, 10, 25, 12, 52, 40).getTime());
    // Read a few seconds after the minute ended (a slow call): still that minute, not tomorrow's.
    expect(codexResetTime(LIMIT, new Date(2026, 10, 25, 12, 53, 20).getTime())).toBe(new Date(2026, 10, 25, 12, 53, 0).getTime());
  });

  it("the typographic apostrophe, the date form, 'later', and a resets_at when one is given", () => {
    expect(codexLimit(limitStream)?.message).toMatch(/^You’ve hit your usage limit/);
    expect(codexResetTime("… try again at Dec 29th, 2026 10:15 PM.", now)).toBe(new Date(2026, 11, 29, 22, 16).getTime());
    expect(codexResetTime("You’ve hit your usage limit. Try again later.", now)).toBeUndefined();
    const resetsAt = Math.floor(now / 1000) + 100;
    expect(codexLimit([{ type: "turn.failed", error: { message: LIMIT, resets_at: resetsAt } }])?.resetsAt).toBe(resetsAt * 1000);
  });

  it("a recovered 429 before another failure is no usage limit", () => {
    const events = [THREAD, { type: "error", message: "Reconnecting... 1/5 (unexpected status 429 Too Many Requests)" }, { type: "turn.failed", error: { message: "stream disconnected" } }];
    expect(codexLimit(events)).toBeUndefined();
  });
});

describe("codex: live view and progress", () => {
  it("a usage limit is shown once (the error, not again the turn.failed repeating it)", () => {
    const shown = limitStream.map((e, i) => displayEvent("codex", e, limitStream.slice(0, i + 1))).filter((line) => line?.includes("usage limit"));
    expect(shown).toEqual([`✗ ${LIMIT.slice(0, 159)}…`]);
  });

  it("progress is a completed item or a turn, not a Reconnecting… error or an item starting", () => {
    expect(codexProgress(RECONNECT)).toBe(false);
    expect(codexProgress({ type: "item.started", item: { type: "command_execution" } })).toBe(false);
    expect(codexProgress({ type: "item.completed", item: { type: "command_execution" } })).toBe(true);
    expect(codexProgress(DONE)).toBe(true);
  });
});

describe("codex: usage for receipts", () => {
  const u = (input: number, output: number) => ({ input, cacheRead: input / 2, cacheWrite: 0, output, reasoning: 1 });

  it("a resumed thread's cumulative usage is diffed; a fresh one (or a count that went down) is taken whole", () => {
    expect(usageDelta(u(2000, 100), u(1000, 50))).toEqual({ input: 1000, cacheRead: 500, cacheWrite: 0, output: 50, reasoning: 0 });
    expect(usageDelta(u(1000, 50), undefined)).toEqual(u(1000, 50));
    expect(usageDelta(u(1000, 50), u(2000, 10))).toEqual(u(1000, 50));
  });

  it("a receipt's buckets do not overlap: cached input out of input, reasoning out of output", () => {
    expect(receiptTokens({ input: 1000, cacheRead: 400, cacheWrite: 0, output: 50, reasoning: 10 })).toEqual({ input: 600, cacheRead: 400, cacheWrite: 0, output: 40, reasoning: 10 });
  });

  it("the model: -m / --model / -c model=, else config.toml's top-level model", () => {
    const home = tempDir("loopx-codex-home-");
    mkdirSync(join(home, ".codex"));
    writeFileSync(join(home, ".codex", "config.toml"), 'model = "gpt-5-codex"\n[profiles.x]\nmodel = "o3"\n');
    expect(codexModel(["exec", "-m", "o4-mini"], { HOME: home })).toBe("o4-mini");
    expect(codexModel(["exec", "-c", 'model="o3"'], { HOME: home })).toBe("o3");
    expect(codexModel(["exec", "--json"], { HOME: home })).toBe("gpt-5-codex");
    expect(codexModel(["exec"], { CODEX_HOME: join(home, "none") })).toBeUndefined();
  });
});
