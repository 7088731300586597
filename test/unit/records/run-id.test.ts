/**
 * Naming a run by its id or a prefix of it (src/records/run-id.ts), for every command that takes
 * one: the id itself, the only id it starts, or one line saying there is none or which ones it
 * could be; and the shortest prefix that names each run, which `loopx runs` highlights.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LoopxError } from "../../../src/core/errors.js";
import { isWholeRunId, resolveRunId, uniquePrefixLengths } from "../../../src/records/run-id.js";

const IDS = ["mwzod2k3abc1234", "mwzod2k3abd5678", "mx00000000xyz99", "a1b2c3d4e5f6g7h"];

describe("resolveRunId", () => {
  it("the id itself, or the only id a prefix starts", () => {
    expect(resolveRunId("mx00000000xyz99", IDS, "here")).toBe("mx00000000xyz99");
    expect(resolveRunId("mx", IDS, "here")).toBe("mx00000000xyz99");
    expect(resolveRunId("mwzod2k3abc", IDS, "here")).toBe("mwzod2k3abc1234");
  });

  it("none: one line naming the prefix and where the ids were looked for; an empty prefix names none", () => {
    expect(() => resolveRunId("zz", IDS, "/state/runs")).toThrow(new LoopxError('no run "zz" in /state/runs'));
    expect(() => resolveRunId("", ["only1234567890a"], "/state/runs")).toThrow(/^no run "" in \/state\/runs$/);
  });

  it("ambiguous: how many it starts and the first three, then ...", () => {
    expect(() => resolveRunId("mwzod", IDS, "here")).toThrow(/^run id "mwzod" is ambiguous: it starts 2 runs \(mwzod2k3abc1234, mwzod2k3abd5678\)$/);
    const many = ["abc000000000001", "abc000000000002", "abc000000000003", "abc000000000004"];
    expect(() => resolveRunId("abc", many, "here")).toThrow(/it starts 4 runs \(abc000000000001, abc000000000002, abc000000000003, \.\.\.\)$/);
  });

  it("a whole id is taken as is when asked (a control channel reachable where records are not), a prefix never", () => {
    expect(resolveRunId("zzzzzzzzzzzzzzz", [], "here", true)).toBe("zzzzzzzzzzzzzzz");
    expect(() => resolveRunId("zzzzzzzzzzzzzzz", [], "here")).toThrow(LoopxError);
    expect(() => resolveRunId("zzzz", [], "here", true)).toThrow(LoopxError);
    expect(isWholeRunId("mwzod2k3abc1234")).toBe(true);
    expect(isWholeRunId("mwzod2k3abc123")).toBe(false);
    expect(isWholeRunId("MWZOD2K3ABC1234")).toBe(false);
  });
});

describe("uniquePrefixLengths", () => {
  it("at least `min`, and one past what the nearest other id shares", () => {
    const lengths = uniquePrefixLengths(IDS);
    expect(lengths.get("mwzod2k3abc1234")).toBe(11);
    expect(lengths.get("mx00000000xyz99")).toBe(6);
    expect(lengths.get("a1b2c3d4e5f6g7h")).toBe(6);
    expect(uniquePrefixLengths(["abc"], 6).get("abc")).toBe(3); // never longer than the id
  });

  it("each prefix names its run alone, and one character less would not (past `min`)", () => {
    const id = fc.stringMatching(/^[0-9a-z]{15}$/);
    fc.assert(
      fc.property(fc.uniqueArray(id, { minLength: 1, maxLength: 30 }), fc.integer({ min: 1, max: 15 }), (ids, min) => {
        const lengths = uniquePrefixLengths(ids, min);
        for (const run of ids) {
          const length = lengths.get(run)!;
          expect(resolveRunId(run.slice(0, length), ids, "here")).toBe(run);
          if (length > min) expect(() => resolveRunId(run.slice(0, length - 1), ids, "here")).toThrow(/ambiguous/);
        }
      }),
      { numRuns: 200 },
    );
  });
});
