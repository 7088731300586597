/** What the end-of-run hook gets (src/hooks/outcome.ts): its LOOPX_END_* variables, its environment and its time limit. */
import { describe, expect, it } from "vitest";
import { endVariables, hookBaseEnv, onEndTimeout } from "../../../src/hooks/outcome.js";

const OUTCOME = { run: "mwzod2k3abc1234", project: "/p", target: "ralph:build", state: "stopped" as const, exitCode: 0, reason: "stopped by ralph:build", iterations: 3, durationMs: 4200, startedAt: "2026-11-28T12:00:00.000Z", endedAt: "2026-11-28T12:00:04.200Z" };

describe("the hook's variables", () => {
  it("every LOOPX_END_* as text; a null exit code and no record are empty, never 'null'", () => {
    expect(endVariables({ ...OUTCOME, record: "/s/runs/mwzod2k3abc1234.jsonl" })).toEqual({
      LOOPX_END_RUN_ID: "mwzod2k3abc1234",
      LOOPX_END_PROJECT: "/p",
      LOOPX_END_TARGET: "ralph:build",
      LOOPX_END_STATE: "stopped",
      LOOPX_END_EXIT_CODE: "0",
      LOOPX_END_REASON: "stopped by ralph:build",
      LOOPX_END_ITERATIONS: "3",
      LOOPX_END_DURATION_MS: "4200",
      LOOPX_END_STARTED_AT: "2026-11-28T12:00:00.000Z",
      LOOPX_END_ENDED_AT: "2026-11-28T12:00:04.200Z",
      LOOPX_END_RECORD: "/s/runs/mwzod2k3abc1234.jsonl",
    });
    expect(endVariables({ ...OUTCOME, exitCode: null, record: null })).toMatchObject({ LOOPX_END_EXIT_CODE: "", LOOPX_END_RECORD: "" });
  });

  it("the run's environment without the per-script variables (a process with LOOPX_RUN_ID is one of the run's)", () => {
    const env = hookBaseEnv({ PATH: "/bin", LOOPX_RUN_ID: "r", LOOPX_ITERATION: "3", LOOPX_WORKFLOW: "w", LOOPX_TMPDIR: "/t", LOOPX_RUN_RECORD: "/r", LOOPX_PROJECT_ROOT: "/p", GONE: undefined }, { EXTRA: "1" });
    expect(env).toEqual({ PATH: "/bin", LOOPX_PROJECT_ROOT: "/p", EXTRA: "1" });
  });

  it("LOOPX_ON_END_TIMEOUT: a duration, else 30 s — a bad value named, with what it gets instead", () => {
    expect(onEndTimeout({})).toEqual({ ms: 30_000 });
    expect(onEndTimeout({ LOOPX_ON_END_TIMEOUT: "2m" })).toEqual({ ms: 120_000 });
    const bad = onEndTimeout({ LOOPX_ON_END_TIMEOUT: "soon" });
    expect(bad.ms).toBe(30_000);
    expect(bad.problem).toMatch(/^LOOPX_ON_END_TIMEOUT .+; the hook gets 30s$/);
  });
});
