/**
 * Usage-window caps in the shipped workflows (examples/workflows/shared/caps.ts): the variables,
 * the window snapshots read from Claude's rate_limit_event, from a Codex session rollout (a
 * fixture in Codex's rollout format) and from LIMIT_PROBE's JSON, and the cap decision (newest
 * snapshot, a reset passed ignored, 7d before 5h).
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { capHit, claudeSnapshots, codexRolloutSnapshots, codexSnapshots, probeSnapshots, readCaps, runProbe, snapshotWindow, type WindowSnapshot } from "../../../../../examples/workflows/shared/caps.ts";
import { ROOT, tempDir } from "../../../../helpers.js";

const NOW = Date.parse("2026-11-28T12:00:00Z");
const THREAD = "0199a213-81c0-7800-8aa1-bbab2a035a53";
const ROLLOUT = readFileSync(join(ROOT, "test", "fixtures", "agents", "codex-rollout-rate-limits.jsonl"), "utf8");
const rateLimit = (info: Record<string, unknown>) => ({ type: "rate_limit_event", rate_limit_info: info });
const snap = (window: "5h" | "7d", usedPercent: number, resetsAt: number | undefined, seenAt = NOW): WindowSnapshot => ({ window, usedPercent, resetsAt, source: "probe", seenAt });

describe("LIMIT_CAP_5H, LIMIT_CAP_7D, LIMIT_PROBE", () => {
  it.each([
    ["80", 80],
    ["80%", 80],
    [" 92.5 % ", 92.5],
    ["100", 100],
  ])("%j is a cap of %d percent", (raw, cap) => {
    expect(readCaps({ LIMIT_CAP_5H: raw })).toEqual({ "5h": cap });
    expect(readCaps({ LIMIT_CAP_7D: raw })).toEqual({ "7d": cap });
  });

  it.each(["0", "101", "-5", "eighty", "80%%", "0.8x"])("%j is refused in one line naming the variable", (raw) => {
    expect(() => readCaps({ LIMIT_CAP_7D: raw })).toThrow(`LIMIT_CAP_7D=${raw.trim()}: not a percentage above 0 and at most 100 (e.g. 80 or 80%)`);
  });

  it("unset or empty: no cap; LIMIT_PROBE is kept as given", () => {
    expect(readCaps({ LIMIT_CAP_5H: "", LIMIT_PROBE: "cat usage.json" })).toEqual({ probe: "cat usage.json" });
  });
});

describe("window snapshots", () => {
  it("claude: five_hour and seven_day* with a utilization, the last of each window; none without utilization", () => {
    const events = [
      rateLimit({ status: "allowed", rateLimitType: "five_hour", resetsAt: 1795867200 }),
      rateLimit({ status: "allowed_warning", rateLimitType: "five_hour", resetsAt: 1795867200, utilization: 0.85 }),
      rateLimit({ status: "rejected", rateLimitType: "seven_day_opus", resetsAt: 1796000000, utilization: 1 }),
      rateLimit({ status: "allowed_warning", rateLimitType: "overage", utilization: 0.5 }),
      { type: "result", result: "ok" },
    ];
    expect(claudeSnapshots(events, NOW)).toEqual([
      { window: "5h", usedPercent: 85, resetsAt: 1795867200_000, source: "claude-stream", seenAt: NOW },
      { window: "7d", usedPercent: 100, resetsAt: 1796000000_000, source: "claude-stream", seenAt: NOW },
    ]);
    expect(claudeSnapshots([rateLimit({ status: "allowed", rateLimitType: "five_hour", resetsAt: 1795867200 })], NOW)).toEqual([]);
  });

  it("codex: the rollout's last token_count rate_limits (resets_at in epoch seconds, resets_in_seconds from the event's time)", () => {
    expect(codexRolloutSnapshots(ROLLOUT, NOW)).toEqual([
      { window: "5h", usedPercent: 85.5, resetsAt: 1795867200_000, source: "codex-rollout", seenAt: NOW },
      { window: "7d", usedPercent: 12, resetsAt: Date.parse("2026-11-28T12:00:06Z") + 600_000, source: "codex-rollout", seenAt: NOW },
    ]);
    expect(codexRolloutSnapshots(ROLLOUT.split("\n").slice(0, 1).join("\n"), NOW)).toEqual([]);
  });

  it("codex: the thread's rollout is found under $CODEX_HOME/sessions by the thread.started id; another thread's is not read", () => {
    const home = tempDir("loopx-codex-home-");
    const day = join(home, "sessions", "2026", "11", "28");
    mkdirSync(day, { recursive: true });
    writeFileSync(join(day, `rollout-2026-11-28T12-00-00-${THREAD}.jsonl`), ROLLOUT);
    expect(codexSnapshots([{ type: "thread.started", thread_id: THREAD }], home, NOW).map((s) => s.usedPercent)).toEqual([85.5, 12]);
    expect(codexSnapshots([{ type: "thread.started", thread_id: "0199a213-0000-7800-8aa1-bbab2a035a53" }], home, NOW)).toEqual([]);
    expect(codexSnapshots([{ type: "turn.started" }], home, NOW)).toEqual([]);
  });

  it("probe: 5h and 7d with resetsAt as ISO 8601 or epoch seconds (or none)", () => {
    const out = JSON.stringify({ "5h": { usedPercent: 85, resetsAt: "2026-11-28T15:00:00Z" }, "7d": { usedPercent: 40, resetsAt: 1796000000 } });
    expect(probeSnapshots(out, NOW)).toEqual([
      { window: "5h", usedPercent: 85, resetsAt: Date.parse("2026-11-28T15:00:00Z"), source: "probe", seenAt: NOW },
      { window: "7d", usedPercent: 40, resetsAt: 1796000000_000, source: "probe", seenAt: NOW },
    ]);
    expect(probeSnapshots('{"7d":{"usedPercent":3}}', NOW)).toEqual([{ window: "7d", usedPercent: 3, resetsAt: undefined, source: "probe", seenAt: NOW }]);
  });

  it.each([
    ["85", "printed no JSON object"],
    ["not json", "printed no JSON object"],
    ["{}", 'reported neither "5h" nor "7d"'],
    ['{"5h":{"usedPercent":"85"}}', '5h.usedPercent is not a percentage: "85"'],
    ['{"5h":{"usedPercent":85,"resetsAt":"tomorrow"}}', '5h.resetsAt is not an ISO 8601 time or epoch seconds: "tomorrow"'],
  ])("probe output %j is refused: %s", (out, message) => {
    expect(() => probeSnapshots(out, NOW)).toThrow(message);
  });

  it("runProbe: a probe that fails or prints nonsense gives a warning and no snapshot", () => {
    const cwd = tempDir("loopx-probe-");
    expect(runProbe(`echo '{"5h":{"usedPercent":81}}'`, cwd, NOW).snapshots).toEqual([snap("5h", 81, undefined)]);
    expect(runProbe("echo 'no quota api' >&2; exit 3", cwd, NOW)).toEqual({ snapshots: [], warning: "LIMIT_PROBE exited with code 3: no quota api" });
    expect(runProbe("echo hello", cwd, NOW)).toEqual({ snapshots: [], warning: 'LIMIT_PROBE printed no JSON object: "hello"' });
  });

  it("a snapshot as a receipt's window: used share as a fraction, resetsAt ISO, the source", () => {
    expect(snapshotWindow(snap("7d", 92, Date.parse("2026-11-28T15:00:00Z")))).toEqual({ type: "7d", status: "seen", utilization: 0.92, resetsAt: "2026-11-28T15:00:00.000Z", source: "probe" });
  });
});

describe("the cap decision", () => {
  const later = NOW + 3600_000;
  it("at or over the cap with a reset ahead: held (5h soft, 7d hard); under it: not", () => {
    expect(capHit({ "5h": 80 }, [snap("5h", 85, later)], NOW)).toMatchObject({ hard: false, cap: 80, text: "5h usage window at 85% (LIMIT_CAP_5H=80%, from probe)" });
    expect(capHit({ "5h": 80 }, [snap("5h", 80, later)], NOW)?.hard).toBe(false);
    expect(capHit({ "5h": 80 }, [snap("5h", 79.9, later)], NOW)).toBeUndefined();
    expect(capHit({ "7d": 90 }, [snap("7d", 92, later)], NOW)).toMatchObject({ hard: true, text: "7d usage window at 92% (LIMIT_CAP_7D=90%, from probe)" });
  });

  it("no cap for the window: not held, however full", () => {
    expect(capHit({ "7d": 90 }, [snap("5h", 100, later)], NOW)).toBeUndefined();
    expect(capHit({}, [snap("7d", 100, later)], NOW)).toBeUndefined();
  });

  it("the 7d window's cap comes first when both are over", () => {
    expect(capHit({ "5h": 80, "7d": 90 }, [snap("5h", 85, later), snap("7d", 95, later)], NOW)?.snapshot.window).toBe("7d");
  });

  it("a snapshot whose reset has passed is ignored; the newest snapshot of a window decides", () => {
    expect(capHit({ "5h": 80 }, [snap("5h", 85, NOW - 1)], NOW)).toBeUndefined();
    expect(capHit({ "5h": 80 }, [snap("5h", 85, later, NOW - 60_000), snap("5h", 20, later, NOW - 1000)], NOW)).toBeUndefined();
    expect(capHit({ "5h": 80 }, [snap("5h", 20, later, NOW - 60_000), snap("5h", 85, later, NOW - 1000)], NOW)?.snapshot.usedPercent).toBe(85);
  });

  it("over the cap without a reset time: held while the snapshot is under 10 minutes old", () => {
    expect(capHit({ "7d": 90 }, [snap("7d", 95, undefined, NOW - 60_000)], NOW)?.snapshot.resetsAt).toBeUndefined();
    expect(capHit({ "7d": 90 }, [snap("7d", 95, undefined, NOW - 11 * 60_000)], NOW)).toBeUndefined();
  });
});
