/**
 * A run's receipt totals (src/core/receipts.ts): exact dollars, tokens by kind, per model, and the
 * newest usage window of each type — what `runs show`, the dashboard and the hook get.
 */
import { describe, expect, it } from "vitest";
import type { RecordEvent } from "../../../src/core/events.js";
import { addRunTotals, emptyRunTotals, recordTotals } from "../../../src/core/receipts.js";

const receipt = (n: number, fields: Record<string, unknown>) => ({ v: 1, run: "r", type: "receipt", time: "2026-11-28T12:00:00.000Z", n, ...fields }) as unknown as RecordEvent;

describe("recordTotals", () => {
  it("adds cost to the nano-dollar, billed and estimated apart, tokens by kind, per model", () => {
    const { run, iterations } = recordTotals([
      receipt(1, { cost: { usd: 0.1, kind: "billed" }, tokens: { input: 10 }, model: "a" }),
      receipt(1, { cost: { usd: 0.2, kind: "billed" }, tokens: { output: 5 }, model: "a" }),
      receipt(2, { cost: { usd: 1, kind: "estimate" }, model: "b" }),
    ]);
    expect(run.costUsd).toEqual({ billed: 0.3, estimate: 1 });
    expect(run.tokens).toMatchObject({ input: 10, output: 5 });
    expect(run.models.a!.receipts).toBe(2);
    expect(iterations.get(1)!.costUsd.billed).toBe(0.3);
    expect(run.windows).toBeUndefined();
  });

  it("keeps the newest usage window of each type, in the order first seen; a malformed one is left out", () => {
    const { run } = recordTotals([
      receipt(1, { window: { type: "five_hour", status: "allowed", utilization: 0.3, resetsAt: "2026-11-28T15:00:00.000Z" } }),
      receipt(2, { window: { type: "seven_day", status: "allowed_warning", utilization: 0.91, source: "probe" } }),
      receipt(3, { window: { type: "five_hour", status: "allowed_warning", utilization: 0.85, source: "claude-stream" } }),
      receipt(4, { window: { type: 7, status: "x" } }),
      receipt(4, { window: { type: "w", status: "s", utilization: "lots", resetsAt: 5 } }),
    ]);
    expect(run.windows).toEqual([
      { type: "five_hour", status: "allowed_warning", utilization: 0.85, source: "claude-stream" },
      { type: "seven_day", status: "allowed_warning", utilization: 0.91, source: "probe" },
      { type: "w", status: "s" },
    ]);
  });

  it("totals added later (a resumed sitting's) have the newer windows", () => {
    const into = recordTotals([receipt(1, { window: { type: "five_hour", status: "allowed", utilization: 0.2 } })]).run;
    const later = recordTotals([receipt(2, { window: { type: "five_hour", status: "rejected", utilization: 1 } })]).run;
    addRunTotals(into, later);
    expect(into.windows).toEqual([{ type: "five_hour", status: "rejected", utilization: 1 }]);
    addRunTotals(into, emptyRunTotals());
    expect(into.windows).toHaveLength(1);
  });
});
