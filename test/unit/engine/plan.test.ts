/**
 * The plan alone says how a run goes (src/engine/plan.ts): the environment switches (LOOPX_RECORD,
 * LOOPX_CONTROL, LOOPX_WARN_OUTPUT, LOOPX_OTEL / OTEL_SDK_DISABLED) are decided when the request is
 * planned, never later while the run's parts are put together.
 */
import { describe, expect, it } from "vitest";
import { budgetOf } from "../../../src/core/budget.js";
import { planRun, type RunRequest } from "../../../src/engine/plan.js";

const plan = (baseEnv: RunRequest["baseEnv"], options: RunRequest["options"] = {}) => planRun({ target: "w", projectRoot: "/tmp", baseEnv, options });

describe("the plan decides the environment switches", () => {
  it("recorded: the record option, unless LOOPX_RECORD=0", () => {
    expect(plan({}, { record: true }).switches.recorded).toBe(true);
    expect(plan({ LOOPX_RECORD: "1" }, { record: true }).switches.recorded).toBe(true);
    expect(plan({ LOOPX_RECORD: "0" }, { record: true }).switches.recorded).toBe(false);
    expect(plan({}, {}).switches.recorded).toBe(false);
  });

  it("controlled unless LOOPX_CONTROL=0; output looked at unless LOOPX_WARN_OUTPUT=0", () => {
    expect(plan({}).switches).toMatchObject({ controlled: true, checkOutput: true });
    expect(plan({ LOOPX_CONTROL: "0", LOOPX_WARN_OUTPUT: "0" }).switches).toMatchObject({ controlled: false, checkOutput: false });
  });

  it("telemetry: the option, else LOOPX_OTEL; never with OTEL_SDK_DISABLED", () => {
    expect(plan({}).switches.telemetry).toBe(false);
    expect(plan({ LOOPX_OTEL: "1" }).switches.telemetry).toBe(true);
    expect(plan({ LOOPX_OTEL: "1" }, { telemetry: false }).switches.telemetry).toBe(false);
    expect(plan({}, { telemetry: true }).switches.telemetry).toBe(true);
    expect(plan({ OTEL_SDK_DISABLED: "true" }, { telemetry: true }).switches.telemetry).toBe(false);
  });
});

describe("budgetOf: the one place a budget is made from options", () => {
  it("none without --max-cost or --max-tokens; the given parts otherwise", () => {
    expect(budgetOf({})).toBeUndefined();
    expect(budgetOf({ countEstimates: true })).toBeUndefined();
    expect(budgetOf({ maxCost: 0 })).toEqual({ maxCost: 0 });
    expect(budgetOf({ maxCost: 2.5, countEstimates: true })).toEqual({ maxCost: 2.5, countEstimates: true });
    expect(budgetOf({ maxTokens: 1000, countEstimates: false })).toEqual({ maxTokens: 1000 });
    // A record's options are untrusted JSON: only numbers count.
    expect(budgetOf({ maxCost: "5", maxTokens: null })).toBeUndefined();
  });
});
