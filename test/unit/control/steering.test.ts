/**
 * The steering rules of the control channel (src/control/steering.ts), as a table: the state and
 * the script running, a request → the reply, what the part must do, and the next state.
 */
import { describe, expect, it } from "vitest";
import type { ControlRequest } from "../../../src/control/protocol.js";
import { STEERING_START, STOP_NOW_MESSAGE, beforeScript, steer, type SteeringState, type SteeringStep } from "../../../src/control/steering.js";

const ID = "0000run";
const NOW = 10_000;
const PAUSED: SteeringState = { stopping: false, pausedSince: 4_000 };
const STOPPING: SteeringState = { stopping: true };

const cases: Array<[string, SteeringState, string | undefined, ControlRequest, SteeringStep]> = [
  // stop: before the next script, or at once with --now
  ["stop, between scripts", STEERING_START, undefined, { op: "stop" }, { state: STOPPING, reply: { ok: true, message: `run ${ID} stops before its next script` }, effects: [{ emit: { type: "run.stop", now: false } }] }],
  ["stop, a script running", STEERING_START, "w:index", { op: "stop" }, { state: STOPPING, reply: { ok: true, message: `run ${ID} stops after w:index finishes` }, effects: [{ emit: { type: "run.stop", now: false, running: "w:index" } }] }],
  ["stop while paused releases the held script", PAUSED, undefined, { op: "stop" }, { state: STOPPING, reply: { ok: true, message: `run ${ID} stops before its next script` }, effects: [{ emit: { type: "run.stop", now: false } }, "release"] }],
  ["stop twice", STOPPING, "w:index", { op: "stop" }, { state: STOPPING, reply: { ok: true, message: `run ${ID} is already stopping` }, effects: [] }],
  ["stop --now, a script running", STEERING_START, "w:index", { op: "stop", now: true }, { state: STEERING_START, reply: { ok: true, message: `run ${ID} is interrupted now (w:index gets SIGINT)` }, effects: [{ emit: { type: "run.stop", now: true, running: "w:index" } }, { interrupt: STOP_NOW_MESSAGE }] }],
  ["stop --now while paused", PAUSED, undefined, { op: "stop", now: true }, { state: STEERING_START, reply: { ok: true, message: `run ${ID} is interrupted now` }, effects: [{ emit: { type: "run.stop", now: true } }, { interrupt: STOP_NOW_MESSAGE }, "release"] }],
  ["stop --now after a stop", STOPPING, undefined, { op: "stop", now: true }, { state: STOPPING, reply: { ok: true, message: `run ${ID} is interrupted now` }, effects: [{ emit: { type: "run.stop", now: true } }, { interrupt: STOP_NOW_MESSAGE }] }],
  // pause and continue
  ["pause, between scripts", STEERING_START, undefined, { op: "pause" }, { state: { stopping: false, pausedSince: NOW }, reply: { ok: true, message: `run ${ID} is paused (loopx runs continue ${ID})` }, effects: ["hold", { emit: { type: "run.pause" } }] }],
  ["pause, a script running", STEERING_START, "w:index", { op: "pause" }, { state: { stopping: false, pausedSince: NOW }, reply: { ok: true, message: `run ${ID} pauses after w:index finishes (loopx runs continue ${ID})` }, effects: ["hold", { emit: { type: "run.pause", running: "w:index" } }] }],
  ["pause twice", PAUSED, undefined, { op: "pause" }, { state: PAUSED, reply: { ok: true, message: `run ${ID} is already paused (loopx runs continue ${ID})` }, effects: [] }],
  ["pause while stopping", STOPPING, undefined, { op: "pause" }, { state: STOPPING, reply: { ok: false, message: `run ${ID} is stopping: nothing to pause` }, effects: [] }],
  ["continue after 6 s paused", PAUSED, undefined, { op: "continue" }, { state: STEERING_START, reply: { ok: true, message: `run ${ID} continues` }, effects: ["release", { emit: { type: "run.continue", pausedMs: 6_000 } }] }],
  ["continue, not paused", STEERING_START, "w:index", { op: "continue" }, { state: STEERING_START, reply: { ok: false, message: `run ${ID} is not paused` }, effects: [] }],
  // anything else
  ["an unknown op", STEERING_START, undefined, { op: "restart" } as unknown as ControlRequest, { state: STEERING_START, reply: { ok: false, message: 'unknown control request "restart"' }, effects: [] }],
];

describe("steer: a request against the steering state", () => {
  it.each(cases)("%s", (_name, state, running, request, expected) => {
    expect(steer(state, request, { id: ID, running, now: NOW })).toStrictEqual(expected);
  });

  it("never changes the state it is given", () => {
    const state: SteeringState = Object.freeze({ stopping: false, pausedSince: 1 });
    for (const [, , running, request] of cases) steer(state, request, { id: ID, running, now: NOW });
    expect(state).toStrictEqual({ stopping: false, pausedSince: 1 });
  });
});

describe("beforeScript: what the next script does", () => {
  it.each<[string, SteeringState, ReturnType<typeof beforeScript>]>([
    ["running", STEERING_START, "go"],
    ["paused", PAUSED, "hold"],
    ["stopping", STOPPING, "stop"],
    ["stopping, a pause released by the stop", { stopping: true }, "stop"],
  ])("%s → %s", (_name, state, expected) => {
    expect(beforeScript(state)).toBe(expected);
  });
});
