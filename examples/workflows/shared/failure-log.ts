// Saying what a failed agent call was and what its policy did (failures.ts): a line in the
// session log, a note in the run's record (`loopx runs show` lists it under the iteration, with
// the class and evidence as its data), and the one line a stopped loop ends with.
import * as loopx from "loopx";
import { failureText, type Failure, type PolicyAction } from "./failures.ts";
import { duration } from "./util.ts";

const DOES: Record<PolicyAction, string> = {
  stop: "the loop ends now, no retry",
  park: "waiting for the window to reset",
  backoff: "backing off, then retrying",
  fresh: "one more attempt in a fresh session",
  retry: "retrying",
  fail: "the iteration fails, no retry",
};

/** What the policy does, in words (`retrying in 4s`). */
export function policyText(action: PolicyAction, waitMs: number, final = false): string {
  if (final && action !== "stop" && action !== "park") return "no attempt left: the iteration fails";
  return `${DOES[action]}${waitMs > 0 && (action === "backoff" || action === "retry") ? ` in ${duration(waitMs)}` : ""}`;
}

/** Records a classified failure: the session log (via `log`) and a note in the run's record. */
export function recordFailure(name: string, attempt: number, failure: Failure, action: PolicyAction, waitMs: number, final: boolean, log: (text: string) => void): void {
  const does = policyText(action, waitMs, final);
  const line = `attempt ${attempt} failed: ${failureText(failure)} — policy ${action}: ${does}`;
  log(`Attempt ${attempt} class: ${failure.class}; evidence: ${failure.evidence}; policy: ${action} (${does})\n`);
  const data: Record<string, unknown> = { kind: "agent.failure", class: failure.class, evidence: failure.evidence.slice(0, 500), policy: action, attempt };
  if (failure.status !== undefined) data.status = failure.status;
  if (failure.resetsAt !== undefined) data.resetsAt = new Date(failure.resetsAt).toISOString();
  if (failure.retryAfterMs !== undefined) data.retryAfterMs = failure.retryAfterMs;
  try {
    (loopx as { note?: (text: string, data?: Record<string, unknown>) => boolean }).note?.(`${name}: ${line}`, data);
  } catch {
    // The record is for watching the run; it never stops it.
  }
}
