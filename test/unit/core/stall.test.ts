/** src/core/stall.ts: what counts as progress for --stall-after, and the line a stalled run ends with. */
import { describe, expect, it } from "vitest";
import { StallTracker, stallMessage, type ProgressSignal } from "../../../src/core/stall.js";

const state = (digest: string) => ({ digest, words: `state ${digest}` });

describe("StallTracker", () => {
  it("a state seen before (the start included) is no progress: A→B→A→B stalls once n flat iterations come in a row", () => {
    const tracker = new StallTracker(3);
    tracker.baseline(state("A"), 0);
    expect(tracker.iteration(1, state("B"), [])).toBeUndefined();
    expect(tracker.iteration(2, state("A"), [])).toBeUndefined();
    expect(tracker.iteration(3, state("B"), [])).toBeUndefined();
    const flat = tracker.iteration(4, state("A"), []);
    expect(flat?.map((item) => [item.n, item.since])).toEqual([
      [2, 0],
      [3, 1],
      [4, 0],
    ]);
    expect(stallMessage(3, flat!, tracker.mark)).toBe(
      "stalled: iterations 2-4 made no progress (--stall-after 3): they left the workspace as it was at the start (state A) or as it was after iteration 1 (state B)",
    );
  });

  it("a new state resets the count", () => {
    const tracker = new StallTracker(2);
    tracker.baseline(state("A"), 0);
    expect(tracker.iteration(1, state("A"), [])).toBeUndefined();
    expect(tracker.iteration(2, state("C"), [])).toBeUndefined();
    expect(tracker.iteration(3, state("C"), [])).toBeUndefined();
    expect(tracker.iteration(4, state("C"), [])?.map((item) => item.n)).toEqual([3, 4]);
  });

  it("a number counts when it beats the high-water mark by the minimum step; jitter under the step never adds up", () => {
    const tracker = new StallTracker(3);
    const at = (value: number): ProgressSignal[] => [{ value, minStep: 0.05 }];
    expect(tracker.iteration(1, undefined, at(0.8))).toBeUndefined(); // the first value beats nothing
    expect(tracker.iteration(2, undefined, at(0.84))).toBeUndefined();
    expect(tracker.iteration(3, undefined, at(0.79))).toBeUndefined();
    const flat = tracker.iteration(4, undefined, at(0.84));
    expect(flat?.map((item) => item.n)).toEqual([2, 3, 4]);
    expect(tracker.mark).toBe(0.8);
    const fresh = new StallTracker(2);
    fresh.iteration(1, undefined, at(0.5));
    expect(fresh.iteration(2, undefined, at(0.55))).toBeUndefined(); // exactly one step: counts
    expect(fresh.mark).toBe(0.55);
  });

  it("a text counts once; no step means any rise counts", () => {
    const tracker = new StallTracker(2);
    expect(tracker.iteration(1, undefined, [{ value: "tests 3/9" }])).toBeUndefined();
    expect(tracker.iteration(2, undefined, [{ value: "tests 3/9" }])).toBeUndefined();
    expect(tracker.iteration(3, undefined, [{ value: 1 }])).toBeUndefined();
    expect(tracker.iteration(4, undefined, [{ value: 1.0001 }])).toBeUndefined();
    expect(tracker.iteration(5, undefined, [{ value: 1.0001 }])).toBeUndefined();
    expect(tracker.iteration(6, undefined, [])?.map((item) => item.n)).toEqual([5, 6]);
  });
});
