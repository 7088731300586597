/**
 * Tests for src/guardian/guardian.ts: how the guardian names the ending of a run whose loopx died —
 * from what loopx's exit hook said, else from the dead loopx's wait status in /proc/<pid>/stat.
 */
import { describe, expect, it } from "vitest";
import { endingOf, reasonForSignal } from "../../../src/guardian/guardian.js";

/** A /proc/<pid>/stat line of a process in `state` whose field 52 (exit_code) is `status`. */
function stat(state: string, status: number): string {
  const fields = [state, ...Array.from({ length: 48 }, () => "0"), String(status), "0"];
  return `4242 (node (x) y) ${fields.join(" ")}`;
}

describe("endingOf", () => {
  it.each([
    ["signal SIGHUP", "", { reason: "hangup", exitCode: 129, signal: "SIGHUP" }],
    ["signal SIGQUIT", "", { reason: "quit", exitCode: 131, signal: "SIGQUIT" }],
    ["signal SIGINT", "", { reason: "interrupted", exitCode: 130, signal: "SIGINT" }],
    ["signal SIGTERM", "", { reason: "interrupted", exitCode: 143, signal: "SIGTERM" }],
    ["signal SIGIOT", "", { reason: "crashed", exitCode: 134, signal: "SIGABRT" }],
    ["signal SIGUSR2", "", { reason: "killed", exitCode: 140, signal: "SIGUSR2" }],
    ["exit 3", "", { reason: "crashed", exitCode: 3 }],
    ["exit 0", stat("Z", 1 << 8), { reason: "crashed", exitCode: 1 }],
    ["exit 0", stat("S", 0), { reason: "crashed", exitCode: 0 }],
    ["signal SIGINT", stat("Z", 2), { reason: "interrupted", exitCode: 130, signal: "SIGINT" }],
    ["", stat("Z", 9), { reason: "killed", exitCode: 137, signal: "SIGKILL" }],
    ["", stat("Z", 11 | 0x80), { reason: "crashed", exitCode: 139, signal: "SIGSEGV" }],
    ["", stat("R", 9), { reason: "killed", exitCode: 137, signal: "SIGKILL" }],
    ["", stat("Z", 1 << 8), { reason: "crashed", exitCode: 1 }],
    ["", stat("S", 0), { reason: "killed", exitCode: null }],
    ["", "", { reason: "killed", exitCode: null }],
    ["signal NOPE", "", { reason: "killed", exitCode: null }],
  ] as const)("said %j, stat %j", (said, line, expected) => {
    const ending = endingOf(said, line);
    expect({ reason: ending.reason, exitCode: ending.exitCode, ...(ending.signal ? { signal: ending.signal } : {}) }).toEqual(expected);
    expect(ending.message).toMatch(/its guardian ended it$/);
  });

  it("a signal unknown to the guardian says so", () => {
    expect(endingOf("", "").message).toContain("the signal is not known");
  });
});

describe("reasonForSignal", () => {
  it.each([
    ["SIGKILL", "killed"],
    ["SIGBUS", "crashed"],
    ["SIGFPE", "crashed"],
    ["SIGILL", "crashed"],
    ["SIGALRM", "killed"],
  ] as const)("%s → %s", (signal, reason) => expect(reasonForSignal(signal)).toBe(reason));
});
