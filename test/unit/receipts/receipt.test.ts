/**
 * A receipt as a script gives it (src/receipts/receipt.ts, what `receipt()` and `loopx receipt`
 * check): one TypeError naming the field, nothing dropped or fixed silently, and what passes is
 * exactly what is recorded.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RECEIPT_MAX_BYTES, parseReceipt } from "../../../src/receipts/receipt.js";

describe("parseReceipt", () => {
  it("keeps exactly the fields given; a window's reset time becomes ISO 8601 UTC", () => {
    expect(parseReceipt({ cost: { usd: 0.25, kind: "billed" } })).toEqual({ cost: { usd: 0.25, kind: "billed" } });
    expect(parseReceipt({ tokens: { input: 3, output: 4 }, model: "m", agent: "claude" })).toEqual({ tokens: { input: 3, output: 4 }, model: "m", agent: "claude" });
    expect(parseReceipt({ tokens: { input: 0 }, failure: "usage_window" })).toEqual({ tokens: { input: 0 }, failure: "usage_window" });
    expect(parseReceipt({ window: { type: "five_hour", status: "allowed", resetsAt: "2026-11-28T15:00:00+01:00", utilization: 0.5 } }).window).toEqual({ type: "five_hour", status: "allowed", resetsAt: "2026-11-28T14:00:00.000Z", utilization: 0.5 });
  });

  it.each<[string, unknown, RegExp]>([
    ["not an object", [1], /^receipt must be an object, got an array$/],
    ["empty", {}, /^receipt is empty: give cost, tokens or window$/],
    ["an unknown field", { tokens: { input: 1 }, price: 1 }, /^price is not a receipt field \(/],
    ["an unknown token kind", { tokens: { inputs: 1 } }, /^tokens\.inputs is not a receipt field \(/],
    ["negative tokens", { tokens: { input: -1 } }, /^tokens\.input must be a non-negative integer, got -1$/],
    ["fractional tokens", { tokens: { output: 1.5 } }, /^tokens\.output must be a non-negative integer, got 1\.5$/],
    ["a cost past the cap", { cost: { usd: 2_000_000, kind: "billed" } }, /^cost\.usd must be a number from 0 to 1000000, got 2000000$/],
    ["a cost kind", { cost: { usd: 1, kind: "free" } }, /^cost\.kind must be "billed" or "estimate", got "free"$/],
    ["an empty model", { tokens: { input: 1 }, model: " " }, /^model must be a non-empty string, got " "$/],
    ["a failure that is no text", { tokens: { input: 1 }, failure: 5 }, /^failure must be a non-empty string, got 5$/],
    ["a long model", { tokens: { input: 1 }, model: "m".repeat(201) }, /^model is over 200 characters$/],
    ["a reset time that is no time", { window: { type: "t", status: "s", resetsAt: "tomorrow" } }, /^window\.resetsAt must be an ISO 8601 time, got "tomorrow"$/],
  ])("refuses %s, naming the field", (_label, value, message) => {
    expect(() => parseReceipt(value)).toThrow(TypeError);
    expect(() => parseReceipt(value)).toThrow(message);
  });

  it(`refuses a receipt over ${RECEIPT_MAX_BYTES} bytes as JSON`, () => {
    const agent = "😀".repeat(200); // 200 characters, 800 bytes
    expect(() => parseReceipt({ tokens: { input: 1 }, model: agent, provider: agent, agent, agentVersion: agent, window: { type: agent, status: agent } })).toThrow(`receipt is over ${RECEIPT_MAX_BYTES} bytes as JSON`);
  });

  it("what passes reads back the same (what is recorded is what was reported)", () => {
    const count = fc.nat({ max: 1e9 });
    const receipt = fc.record(
      {
        cost: fc.record({ usd: fc.double({ min: 0, max: 1e6, noNaN: true }), kind: fc.constantFrom("billed", "estimate") }),
        tokens: fc.record({ input: count, output: count, cacheRead: count }, { requiredKeys: [] }),
        model: fc.string({ minLength: 1, maxLength: 20 }).filter((s) => s.trim() !== ""),
      },
      { requiredKeys: ["tokens"] },
    );
    fc.assert(
      fc.property(receipt, (value) => {
        expect(parseReceipt(parseReceipt(value))).toEqual(parseReceipt(value));
      }),
    );
  });
});
