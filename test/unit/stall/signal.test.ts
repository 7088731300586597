/**
 * A script's progress signal (src/stall/signal.ts): which values it takes, and that it is written
 * only where its run listens — the run's own progress file, one JSON line per call.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { progress, progressFileName, progressSignal } from "../../../src/stall/signal.js";
import { tempDir } from "../../helpers.js";

/** A run's LOOPX_TMPDIR with its (empty) progress file, and the environment a script of it gets. */
function listeningRun(run = "r1", iteration = "3"): { file: string; env: Record<string, string> } {
  const file = join(tempDir("loopx-progress-"), progressFileName(run));
  writeFileSync(file, "");
  return { file, env: { LOOPX_RUN_PROGRESS: file, LOOPX_RUN_ID: run, LOOPX_ITERATION: iteration } };
}

describe("progressSignal", () => {
  it("a finite number (with a non-negative step) or a one-line text", () => {
    expect(progressSignal(3)).toEqual({ value: 3 });
    expect(progressSignal(-1.5, 0)).toEqual({ value: -1.5, minStep: 0 });
    expect(progressSignal("tests: 4 passing")).toEqual({ value: "tests: 4 passing" });
  });

  it.each([
    [Number.NaN, undefined, /finite number or a one-line text, got null/],
    [Number.POSITIVE_INFINITY, undefined, /finite number/],
    ["", undefined, /got ""/],
    ["two\nlines", undefined, /one-line text/],
    [{}, undefined, /got \{\}/],
    [1, -1, /minimum step must be a non-negative number, got -1/],
    [1, "2", /minimum step must be a non-negative number, got "2"/],
    ["text", 1, /a minimum step goes with a number, not a text value/],
  ])("%j (step %j) is refused with a TypeError", (value, step, message) => {
    expect(() => progressSignal(value, step)).toThrow(TypeError);
    expect(() => progressSignal(value, step)).toThrow(message);
  });
});

describe("progress", () => {
  it("appends one JSON line per call to its run's file, with the iteration", () => {
    const { file, env } = listeningRun();
    expect(progress(7, {}, env)).toBe(true);
    expect(progress("done", {}, { ...env, LOOPX_ITERATION: "x" })).toBe(true);
    expect(progress(8, { minStep: 2 }, env)).toBe(true);
    expect(readFileSync(file, "utf8")).toBe('{"value":7,"n":3}\n{"value":"done"}\n{"value":8,"minStep":2,"n":3}\n');
  });

  it("does nothing outside a run that listens: no variable, another run's file, or a file gone", () => {
    const { file, env } = listeningRun();
    expect(progress(1, {}, {})).toBe(false);
    // A nested run's script inherits the outer run's variable, never its LOOPX_RUN_ID.
    expect(progress(1, {}, { ...env, LOOPX_RUN_ID: "nested" })).toBe(false);
    expect(readFileSync(file, "utf8")).toBe("");
    rmSync(file);
    expect(progress(1, {}, env)).toBe(false);
  });

  it("a refused value throws even where no run listens", () => {
    expect(() => progress(Number.NaN, {}, {})).toThrow(TypeError);
  });
});
