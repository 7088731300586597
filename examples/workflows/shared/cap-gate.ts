// Usage-window caps before each agent call, and the windows each call reported (caps.ts has the
// readers and the decision; limits.ts the shared file and the wait). Shared by ralph and converge.
import type { AgentType } from "./agent.ts";
import { capHit, claudeSnapshots, codexSnapshots, runProbe, snapshotWindow, type WindowSnapshot } from "./caps.ts";
import { clock, note, parkForLimit, sharedSnapshots, shareSnapshots, type LimitPolicy } from "./limits.ts";
import { sendReceipts } from "./report.ts";

type Json = Record<string, any>;

/** go: call the agent; again: waited for a reset, look again; pause: end the loop resumable (reason); interrupted/exceeded: as parkForLimit. */
export type CapOutcome = { action: "go" | "again" | "interrupted" | "exceeded" } | { action: "pause"; reason: string };

/** LIMIT_PROBE: its snapshots, shared and reported as receipts; a failing probe is one warning line and nothing. */
function probe(policy: LimitPolicy, now: number): WindowSnapshot[] {
  if (!policy.caps.probe) return [];
  const { snapshots, warning } = runProbe(policy.caps.probe, policy.cwd, now);
  if (warning) {
    process.stderr.write(`${policy.name}: ${warning}; the call goes on\n`);
    policy.log(`Usage caps: ${warning}\n`);
  }
  shareSnapshots(policy, snapshots, now);
  sendReceipts(snapshots.map((s) => ({ window: snapshotWindow(s) })), policy.name);
  return snapshots;
}

/**
 * Before an agent call: runs LIMIT_PROBE, then holds the call while the newest snapshot of a
 * window (this loop's or another's on the account) is at or over its cap and has not reset: over
 * LIMIT_CAP_5H it waits for the reset (parkForLimit: bounded by MAX_LIMIT_WAIT; without a reset
 * time, the back-off), over LIMIT_CAP_7D it says to end the loop resumable.
 */
export async function capsBeforeCall(policy: LimitPolicy, stopping: () => boolean, inARow: number): Promise<CapOutcome> {
  const { caps } = policy;
  if (caps["5h"] === undefined && caps["7d"] === undefined && !caps.probe) return { action: "go" };
  const now = Date.now();
  const seen = probe(policy, now);
  const hit = capHit(caps, [...sharedSnapshots(policy, now), ...seen], now);
  if (!hit) return { action: "go" };
  const resetsAt = hit.snapshot.resetsAt;
  if (hit.hard && resetsAt !== undefined) {
    const reason = `${hit.text}, resets ${new Date(resetsAt).toISOString().replace(/\.\d+Z$/, "Z")} (${clock(resetsAt)} local)`;
    policy.log(`Usage caps: ${reason}: no call\n`);
    note(`${policy.name}: ${reason}: no call, the loop ends resumable`, { kind: "limit.cap", window: hit.snapshot.window, cap: hit.cap, snapshot: hit.snapshot });
    return { action: "pause", reason };
  }
  const parked = await parkForLimit(policy, { resetsAt, kind: hit.snapshot.window, message: "", cap: hit.text, snapshot: hit.snapshot }, stopping, inARow);
  return { action: parked === "resumed" ? "again" : parked };
}

/** After an agent call: the windows its stream (claude) or its session rollout (codex) reported, shared. */
export function windowsAfterCall(policy: LimitPolicy, type: AgentType, events: Json[]): void {
  const now = Date.now();
  const snapshots = type === "claude" ? claudeSnapshots(events, now) : type === "codex" && policy.codexHome ? codexSnapshots(events, policy.codexHome, now) : [];
  shareSnapshots(policy, snapshots, now);
}
