/**
 * `runs show`'s rows by column (src/records/detail-rows.ts): a row's start time is kept only while
 * it is open — its duration is then counted from it — and a retried row is open again.
 */
import { describe, expect, it } from "vitest";
import { DetailRows } from "../../../src/records/detail-rows.js";

describe("DetailRows", () => {
  it("gives an open row's start, and an ended row's duration instead", () => {
    const rows = new DetailRows();
    rows.add(1, "w:index", "2026-01-01T00:00:00.000Z");
    rows.add(2, "w:index", "2026-01-01T00:00:01.500Z");
    rows.end(0, 1200, "0", "", "did it", undefined);
    expect(rows.ms(0)).toBe(1200);
    expect(Number.isNaN(rows.startMs(0))).toBe(true);
    expect(rows.row(0)).toEqual({ n: 1, target: "w:index", ms: 1200, exit: "0", next: "", result: "did it" });
    expect(rows.ms(1)).toBeUndefined();
    expect(rows.startMs(1)).toBe(Date.parse("2026-01-01T00:00:01.500Z"));
    expect(rows.row(1)).toEqual({ n: 2, target: "w:index", startMs: Date.parse("2026-01-01T00:00:01.500Z") });
  });

  it("opens a retried row again from its new start, and keeps that in the rows after an n", () => {
    const rows = new DetailRows();
    rows.add(1, "w:index", "2026-01-01T00:00:00.000Z");
    rows.end(0, 10, "1", "", "", undefined);
    rows.retry(0, "w:index", "2026-01-01T00:01:00.000Z");
    expect(rows.row(0)).toEqual({ n: 1, target: "w:index (retry)", startMs: Date.parse("2026-01-01T00:01:00.000Z") });
    expect(rows.after(0).startMs(0)).toBe(Date.parse("2026-01-01T00:01:00.000Z"));
  });
});
