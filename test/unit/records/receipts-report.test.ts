/** A receipt's line in `loopx runs show` / `runs tail` (src/records/receipts-report.ts describeReceipt). */
import { describe, expect, it } from "vitest";
import type { ReceiptEvent } from "../../../src/core/events.js";
import { describeReceipt } from "../../../src/records/receipts-report.js";

const event = (fields: Partial<ReceiptEvent>) => ({ v: 1, run: "r", type: "receipt", time: "2026-11-28T12:00:05.000Z", ...fields }) as ReceiptEvent;
const local = (iso: string) => iso.replace("T", " ").slice(0, 19);

describe("describeReceipt", () => {
  it("cost, tokens, who, the usage window, and the class of a call that failed", () => {
    const line = describeReceipt(event({ cost: { usd: 0.0123, kind: "billed" }, tokens: { input: 1000, output: 340 }, model: "claude-sonnet-4-5", agent: "claude-code", agentVersion: "2.1.197", window: { type: "five_hour", status: "allowed_warning", utilization: 0.42, resetsAt: "2026-11-28T19:00:00.000Z" }, failure: "usage_window" }), local);
    expect(line).toBe("  receipt 12:00:05 · $0.0123 · 1340 tokens · claude-sonnet-4-5 · claude-code 2.1.197 · failed: usage_window · five_hour allowed_warning 42% until 2026-11-28 19:00:00");
  });

  it("a failure class from a record is shown as text (control characters escaped)", () => {
    expect(describeReceipt(event({ tokens: { input: 1 }, failure: "x\u001b[31m" }), local)).not.toContain("\u001b");
  });
});
