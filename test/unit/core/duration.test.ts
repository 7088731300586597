/**
 * Unit + property tests for src/core/duration.ts: the durations of --timeout / --max-time, and the
 * API's millisecond limits.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkLimit, formatDuration, parseDuration } from "../../../src/core/duration.js";

const RUNS = { numRuns: 1000 };
const UNITS = [
  ["h", 3_600_000],
  ["m", 60_000],
  ["s", 1000],
  ["ms", 1],
] as const;

function ms(text: string): number | string {
  const parsed = parseDuration(text);
  return parsed.ok ? parsed.ms : parsed.error;
}

describe("parseDuration", () => {
  it.each([
    ["90", 90_000],
    ["1", 1000],
    ["1.5", 1500],
    [".5", 500],
    ["30s", 30_000],
    ["20m", 1_200_000],
    ["2h", 7_200_000],
    ["500ms", 500],
    ["1h30m", 5_400_000],
    ["2m30s", 150_000],
    ["1s500ms", 1500],
    ["1h2m3s4ms", 3_723_004],
    ["1.5m", 90_000],
    ["0.0001s", 1],
    ["0h1s", 1000],
    ["1d", 86_400_000],
    ["7d", 604_800_000],
    ["2w", 1_209_600_000],
    ["1w2d3h", 788_400_000],
  ])("%j is %i ms", (text, expected) => {
    expect(ms(text)).toBe(expected);
  });

  it.each(["", "0", "0s", "0h0m", "-5", "-1s", "5x", "1h1h", "30m1h", "s", "1 h", " 1", "1s ", "1e3", "1.", "1,5", "+1", "NaN", "Infinity", "1d1w", "1hm", "1sms", "0x10", "٣"])(
    "%j is refused with one line naming it",
    (text) => {
      const parsed = parseDuration(text);
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) {
        expect(parsed.error).toContain(JSON.stringify(text));
        expect(parsed.error).not.toContain("\n");
      }
    },
  );

  it("a plain number is that many seconds", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000_000 }), (n) => ms(String(n)) === n * 1000),
      RUNS,
    );
  });

  it("any combination of units, largest first, adds up", () => {
    const part = fc.option(fc.integer({ min: 0, max: 5000 }), { nil: undefined });
    fc.assert(
      fc.property(fc.tuple(part, part, part, part), (counts) => {
        let text = "";
        let total = 0;
        counts.forEach((count, i) => {
          if (count === undefined) return;
          text += `${count}${UNITS[i]![0]}`;
          total += count * UNITS[i]![1];
        });
        const parsed = parseDuration(text);
        if (total === 0) return !parsed.ok;
        return parsed.ok && parsed.ms === total;
      }),
      RUNS,
    );
  });

  it("formatDuration's output parses back to the same milliseconds", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 40 }), (n) => ms(formatDuration(n)) === n),
      RUNS,
    );
  });

  it("never throws, and accepts only positive whole milliseconds", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), (text) => {
        const parsed = parseDuration(text);
        return !parsed.ok || (Number.isSafeInteger(parsed.ms) && parsed.ms > 0);
      }),
      RUNS,
    );
  });

  it("whatever comes after a valid duration makes it invalid unless it is a smaller unit", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100 }), fc.constantFrom("x", " ", "h", "-1", "5", ".", "ms5"), (n, tail) => !parseDuration(`${n}ms${tail}`).ok),
      RUNS,
    );
  });
});

describe("formatDuration", () => {
  it.each([
    [1_200_000, "20m"],
    [5_400_000, "1h30m"],
    [2000, "2s"],
    [1500, "1s500ms"],
    [500, "500ms"],
  ])("%i ms is %j", (n, text) => {
    expect(formatDuration(n)).toBe(text);
  });
});

describe("checkLimit (API limits, in ms)", () => {
  it.each([1, 0.5, 1000, 2 ** 40])("accepts %d", (value) => {
    expect(checkLimit(value, "timeout")).toBe(value);
  });
  it("accepts undefined (no limit)", () => {
    expect(checkLimit(undefined, "timeout")).toBeUndefined();
  });
  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY, "1000", null, {}, true])("refuses %s", (value) => {
    expect(() => checkLimit(value, "maxTime")).toThrow(/^maxTime must be a positive number of milliseconds, got /);
  });
});
