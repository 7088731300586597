import type { PartEvent } from "../core/events.js";
import type { ControlReply, ControlRequest } from "./protocol.js";

/**
 * The steering rules of a run's control channel (pure): a request in, the reply and what the part
 * must do out. No clock, no socket, no promise: the part (control/part.ts) passes the time and the
 * script running now, and carries out the effects.
 */

/** Where the steering stands: a stop asked for, a pause going on (since when, ms). */
export interface SteeringState {
  readonly stopping: boolean;
  readonly pausedSince?: number;
}

export const STEERING_START: SteeringState = { stopping: false };

/** What the part knows when a request comes. */
export interface SteeringContext {
  /** The run's id, as the replies name it. */
  id: string;
  /** The script running now, if one is. */
  running: string | undefined;
  /** The time of the request (ms since 1970). */
  now: number;
}

/**
 * What the part does for a request, in this order: the event to record, then `interrupt` (the
 * running script gets SIGINT, as on Ctrl-C: the run ends interrupted), `hold` (scripts wait from
 * now on) or `release` (held scripts go on).
 */
export type SteeringEffect = { emit: PartEvent } | { interrupt: string } | "hold" | "release";

export interface SteeringStep {
  state: SteeringState;
  reply: ControlReply;
  effects: SteeringEffect[];
}

/** The message a stop --now ends the run with. */
export const STOP_NOW_MESSAGE = "interrupted by loopx runs stop --now";

/** One request against `state`. */
export function steer(state: SteeringState, request: ControlRequest, context: SteeringContext): SteeringStep {
  const { id, running } = context;
  const on = running ? { running } : {};
  const released: SteeringEffect[] = state.pausedSince === undefined ? [] : ["release"];
  const unpaused: SteeringState = { stopping: state.stopping };
  const same = (ok: boolean, message: string): SteeringStep => ({ state, reply: { ok, message }, effects: [] });
  switch (request.op) {
    case "stop": {
      if (request.now === true) {
        const message = `run ${id} is interrupted now${running ? ` (${running} gets SIGINT)` : ""}`;
        return { state: unpaused, reply: { ok: true, message }, effects: [{ emit: { type: "run.stop", now: true, ...on } }, { interrupt: STOP_NOW_MESSAGE }, ...released] };
      }
      if (state.stopping) return same(true, `run ${id} is already stopping`);
      const message = running ? `run ${id} stops after ${running} finishes` : `run ${id} stops before its next script`;
      return { state: { stopping: true }, reply: { ok: true, message }, effects: [{ emit: { type: "run.stop", now: false, ...on } }, ...released] };
    }
    case "pause": {
      if (state.stopping) return same(false, `run ${id} is stopping: nothing to pause`);
      if (state.pausedSince !== undefined) return same(true, `run ${id} is already paused (loopx runs continue ${id})`);
      const message = running ? `run ${id} pauses after ${running} finishes (loopx runs continue ${id})` : `run ${id} is paused (loopx runs continue ${id})`;
      return { state: { stopping: false, pausedSince: context.now }, reply: { ok: true, message }, effects: ["hold", { emit: { type: "run.pause", ...on } }] };
    }
    case "continue": {
      if (state.pausedSince === undefined) return same(false, `run ${id} is not paused`);
      return { state: unpaused, reply: { ok: true, message: `run ${id} continues` }, effects: ["release", { emit: { type: "run.continue", pausedMs: context.now - state.pausedSince } }] };
    }
    default:
      return same(false, `unknown control request ${JSON.stringify((request as { op?: unknown }).op)}`);
  }
}

/** Before a script starts: go, wait for the pause to end, or end the run (a stop was asked for). */
export function beforeScript(state: SteeringState): "go" | "hold" | "stop" {
  if (state.stopping) return "stop";
  return state.pausedSince === undefined ? "go" : "hold";
}
