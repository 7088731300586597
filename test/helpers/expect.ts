/** Assertions on a run's result: a clean exit, one-line errors, warnings. */
import { expect } from "vitest";
import type { RunResult } from "./process.js";

/** Exit 0, empty stdout, no stack trace on stderr (stderr may otherwise hold anything). */
export function expectClean(result: RunResult): void {
  expect(result.stderr).not.toContain("    at ");
  expect(result.stdout).toBe("");
  expect(result.code).toBe(0);
}

/**
 * Exit 1, nothing on stdout, stderr is exactly one `loopx:` line (nothing else), no stack trace,
 * no internal error; every pattern must match stderr (a string: be contained in it).
 */
export function expectOneLineError(result: RunResult, ...patterns: Array<RegExp | string>): void {
  expect(result.stdout).toBe("");
  expect(result.stderr).toMatch(/^loopx: [^\n]*\n$/);
  expect(result.stderr).not.toContain("    at ");
  expect(result.stderr).not.toContain("internal error");
  for (const pattern of patterns) {
    if (typeof pattern === "string") expect(result.stderr).toContain(pattern);
    else expect(result.stderr).toMatch(pattern);
  }
  expect(result.code).toBe(1);
}

/** The `loopx: warning:` lines of `stderr`. */
export const warnings = (stderr: string): string[] => stderr.split("\n").filter((line) => line.startsWith("loopx: warning:"));

/**
 * Exit 1, empty stdout, exactly one `loopx:` line on stderr containing every needle, no stack trace,
 * no internal error
 * (other, non-`loopx:` stderr lines are allowed). Returns that line.
 */
export function expectLoopxError(result: RunResult, ...needles: string[]): string {
  expect(result.stdout).toBe("");
  expect(result.stderr).not.toContain("    at ");
  expect(result.stderr).not.toMatch(/^\s+at /m);
  expect(result.stderr).not.toContain("internal error");
  const lines = result.stderr.split("\n").filter((line) => line.startsWith("loopx:"));
  expect(lines, result.stderr).toHaveLength(1);
  for (const needle of needles) expect(lines[0]).toContain(needle);
  expect(result.code).toBe(1);
  return lines[0]!;
}
