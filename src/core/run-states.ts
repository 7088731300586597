/** How a run ended: `run.end`'s reason (core/events.ts), and the states `loopx runs` shows. */
export const RUN_END_REASONS = ["stopped", "stopped-on-request", "limit", "failed", "interrupted", "hangup", "quit", "timed-out", "budget", "stalled", "aborted", "returned", "killed", "crashed"] as const;
export type RunEndReason = (typeof RUN_END_REASONS)[number];

/** The states of a run whose loop is going (its control channel answers): running, paused after `runs pause`, stopping after `runs stop`. */
export const GOING_STATES = ["running", "paused", "stopping"] as const;

/**
 * How a run can be, declared once: going, or how it ended (`crashed` too when its process is gone
 * without a run.end). `loopx runs --state`, its help and completion, the README's list and the
 * dashboard's filter all come from (or are checked against) this list.
 */
export const RUN_STATES = [...GOING_STATES, ...RUN_END_REASONS] as const;
export type RunState = (typeof RUN_STATES)[number];
