/** The engine's one check of a run's options (src/engine/options.ts), for the CLI and the API alike. */
import { describe, expect, it } from "vitest";
import { LoopxError } from "../../../src/core/errors.js";
import { validateRunOptions } from "../../../src/engine/options.js";

describe("run options", () => {
  it.each<[string, unknown]>([
    ["negative", -1],
    ["fraction", 1.5],
    ["NaN", NaN],
    ["Infinity", Infinity],
    ["string", "3"],
    ["null", null],
  ])("invalid maxIterations (%s) is a LoopxError naming it", (_label, maxIterations) => {
    expect(() => validateRunOptions({ maxIterations })).toThrow(LoopxError);
    expect(() => validateRunOptions({ maxIterations })).toThrow(/^maxIterations must be a non-negative integer, got /);
  });

  it("valid options come back checked; nothing given is no limit, no variables", () => {
    const onEvent = () => {};
    expect(validateRunOptions({ maxIterations: 0, env: { A: "1" }, timeout: 1.5, maxTime: 10, onEvent })).toStrictEqual({ maxIterations: 0, env: { A: "1" }, timeout: 1.5, maxTime: 10, onEvent, onEnd: undefined, budget: undefined });
    expect(validateRunOptions({})).toStrictEqual({ maxIterations: undefined, env: {}, timeout: undefined, maxTime: undefined, onEvent: undefined, onEnd: undefined, budget: undefined });
    // --worktree only when asked for (src/worktree/option.ts).
    expect(validateRunOptions({ worktree: "a", worktreeCopy: ["specs"] }).worktree).toEqual({ name: "a", copy: ["specs"] });
    expect(validateRunOptions({ worktree: true }).worktree).toEqual({ copy: [] });
    expect(() => validateRunOptions({ worktree: 1 })).toThrow(/^worktree must be true or a name, got 1$/);
    expect(() => validateRunOptions({ worktree: true, worktreeCopy: "specs" })).toThrow(/^worktreeCopy must be an array of paths/);
  });

  it.each<[string, object, RegExp]>([
    ["onEvent first", { onEvent: 1, timeout: -1, maxIterations: -1 }, /^onEvent must be a function, got number$/],
    ["then timeout", { timeout: 0, maxTime: 0, maxIterations: -1 }, /^timeout must be a positive number of milliseconds, got 0$/],
    ["then maxTime", { maxTime: "1s", maxIterations: -1 }, /^maxTime must be a positive number of milliseconds, got "1s"$/],
    ["then maxIterations", { maxIterations: -1, env: [] }, /^maxIterations must be a non-negative integer, got -1$/],
    ["then env", { env: [] }, /^env must be an object of variable names to string values, got an array$/],
  ])("the first bad option is the one reported (%s)", (_label, options, message) => {
    expect(() => validateRunOptions(options)).toThrow(message);
  });
});
