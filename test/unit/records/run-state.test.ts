/**
 * The pure side of run records (src/records/parse.ts, run-state.ts, wording.ts, tables.ts): wording of endings, reading records that
 * were cut off by a crash or written by a newer loopx, and the states `loopx runs` derives.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { IterationEndEvent, LoopEvent, RunEndEvent, RunStartEvent } from "../../../src/core/events.js";
import { parseRecord } from "../../../src/records/parse.js";
import { summarizeRun } from "../../../src/records/run-state.js";
import { durationBar } from "../../../src/records/tables.js";
import { describeEnding, formatElapsed, resultExcerpt } from "../../../src/records/wording.js";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");
const at = (ms: number) => new Date(T0 + ms).toISOString();
const base = { v: 1 as const, run: "r1" };
const START: RunStartEvent = { ...base, type: "run.start", time: at(0), pid: 42, projectRoot: "/p", target: "w:index", version: "0.1.0", runtime: "node", maxIterations: 5 };
const iterationEnd = (n: number, extra: Partial<IterationEndEvent> = {}): IterationEndEvent => ({
  ...base, type: "iteration.end", time: at(n * 100), n, target: "w:index", durationMs: 90, exitCode: 0, signal: null, stdoutBytes: 2, ...extra,
});
const runEnd = (extra: Partial<RunEndEvent>): RunEndEvent => ({ ...base, type: "run.end", time: at(1000), reason: "stopped", exitCode: 0, iterations: 1, durationMs: 1000, ...extra });

describe("run report", () => {
  it("formats durations", () => {
    expect([0, 999, 1000, 12_345, 59_999, 65_000, 3_600_000 + 180_000].map(formatElapsed)).toEqual(["0ms", "999ms", "1.0s", "12.3s", "59.9s", "1m05s", "1h03m"]);
  });

  it("words every ending as the issue does", () => {
    expect(describeEnding(runEnd({ reason: "stopped", target: "w:check" }), 5)).toBe("stopped by w:check");
    expect(describeEnding(runEnd({ reason: "limit", iterations: 5 }), 5)).toBe("reached -n 5");
    expect(describeEnding(runEnd({ reason: "failed", exitCode: 1, target: "w:index" }), null, iterationEnd(1, { exitCode: 3 }))).toBe("w:index exited with code 3");
    expect(describeEnding(runEnd({ reason: "failed", target: "w:index" }), null, iterationEnd(1, { exitCode: null, signal: "SIGKILL" }))).toBe("w:index was killed by SIGKILL");
    expect(describeEnding(runEnd({ reason: "failed", target: "w:index", iterations: 2 }), null, iterationEnd(1))).toBe("failed at w:index");
    expect(describeEnding(runEnd({ reason: "interrupted", signal: "SIGINT" }), null)).toBe("interrupted by SIGINT");
    expect(describeEnding(runEnd({ reason: "timed-out" }), null)).toBe("timed out");
  });

  it("a record cut anywhere (a crash mid-write) reads as a prefix of its events, never as garbage", () => {
    const events: LoopEvent[] = [START, { ...base, type: "iteration.start", time: at(1), n: 1, target: "w:index" }, iterationEnd(1, { output: { result: "ü€𝄞\n\"x\"", resultBytes: 14 } }), runEnd({})];
    const text = events.map((event) => `${JSON.stringify(event)}\n`).join("");
    const bytes = Buffer.from(text, "utf8");
    fc.assert(
      fc.property(fc.integer({ min: 0, max: bytes.length }), (cut) => {
        const parsed = parseRecord(bytes.subarray(0, cut).toString("utf8"));
        expect(parsed.newerVersion).toBeUndefined();
        expect(events.slice(0, parsed.events.length)).toEqual(parsed.events);
      }),
    );
    expect(parseRecord(text).events).toEqual(events);
  });

  it("a newer format is reported, not misread; unknown lines are skipped", () => {
    expect(parseRecord(`${JSON.stringify(START)}\n{"v":2,"type":"run.start"}\n`)).toMatchObject({ newerVersion: 2 });
    expect(parseRecord('null\n[1]\n"x"\n{"v":1}\n').events).toEqual([]);
  });

  it("derives running / crashed / ended states", () => {
    const open: LoopEvent[] = [START, { ...base, type: "iteration.start", time: at(10), n: 1, target: "w:index" }];
    expect(summarizeRun("r1", open, () => true, T0 + 5000)).toMatchObject({ state: "running", durationMs: 5000, iterations: 1 });
    expect(summarizeRun("r1", open, () => false, T0 + 5000)).toMatchObject({ state: "crashed", durationMs: 10, ending: "crashed: process 42 is gone without run.end" });
    let asked = false;
    const ended = summarizeRun("r1", [...open, iterationEnd(1), runEnd({ reason: "limit", iterations: 1 })], () => (asked = true), T0);
    expect(ended).toMatchObject({ state: "limit", durationMs: 1000, ending: "reached -n 5", exitCode: 0 });
    expect(asked).toBe(false);
    expect(summarizeRun("r1", [], () => true, T0)).toBeUndefined();
  });

  it("bars are proportional; excerpts are one line", () => {
    expect(durationBar(50, 100, 10)).toBe("█████·····");
    expect(durationBar(1, 1000, 10)).toBe("█·········");
    expect(durationBar(0, 0, 4)).toBe("····");
    expect(resultExcerpt("a\n\n b   c", 40)).toBe("a b c");
    expect(resultExcerpt("x".repeat(50), 10)).toBe(`${"x".repeat(9)}…`);
  });
});
