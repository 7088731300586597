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
    const none = { envFile: undefined, log: undefined, onEnd: undefined, maxCost: undefined, countEstimates: undefined, maxTokens: undefined, stallAfter: undefined, summary: false, record: false, signal: undefined, telemetry: undefined, worktree: undefined, worktreeCopy: undefined, worktreeMerge: undefined, sandbox: undefined, sandboxAllow: undefined };
    expect(validateRunOptions({ maxIterations: 0, env: { A: "1" }, timeout: 1.5, maxTime: 10, onEvent })).toStrictEqual({ ...none, maxIterations: 0, env: { A: "1" }, timeout: 1.5, maxTime: 10, onEvent });
    expect(validateRunOptions({})).toStrictEqual({ ...none, maxIterations: undefined, env: {}, timeout: undefined, maxTime: undefined, onEvent: undefined });
    // --worktree only when asked for (src/worktree/option.ts).
    expect(validateRunOptions({ worktree: "a", worktreeCopy: ["specs"] }).worktree).toEqual({ name: "a", copy: ["specs"] });
    expect(validateRunOptions({ worktree: true }).worktree).toEqual({ copy: [] });
    expect(() => validateRunOptions({ worktree: 1 })).toThrow(/^worktree must be true or a name, got 1$/);
    expect(() => validateRunOptions({ worktree: true, worktreeCopy: "specs" })).toThrow(/^worktreeCopy must be an array of paths/);
    // The API's words for the API (the CLI says `--worktree-copy needs --worktree` itself); an empty list asks for nothing.
    expect(() => validateRunOptions({ worktreeCopy: ["specs"] })).toThrow(/^worktreeCopy needs worktree \(--worktree-copy needs --worktree\)$/);
    expect(validateRunOptions({ worktreeCopy: [] }).worktree).toBeUndefined();
  });

  it.each<[string, object, RegExp]>([
    // In the order of the run options table (engine/options.ts): the CLI's help order, then the API's own.
    ["maxIterations first", { maxIterations: -1, timeout: -1, onEvent: 1 }, /^maxIterations must be a non-negative integer, got -1$/],
    ["then timeout", { timeout: 0, maxTime: 0, onEvent: 1 }, /^timeout must be a positive number of milliseconds, got 0$/],
    ["then maxTime", { maxTime: "1s", env: [] }, /^maxTime must be a positive number of milliseconds, got "1s"$/],
    ["then env", { env: [], onEvent: 1 }, /^env must be an object of variable names to string values, got an array$/],
    ["then onEvent", { onEvent: 1 }, /^onEvent must be a function, got number$/],
  ])("the first bad option is the one reported (%s)", (_label, options, message) => {
    expect(() => validateRunOptions(options)).toThrow(message);
  });
});
