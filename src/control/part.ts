import { unlinkSync } from "node:fs";
import type { Server } from "node:net";
import { dirname } from "node:path";
import { LoopxError } from "../core/errors.js";
import type { LoopEvent } from "../core/events.js";
import type { RunControls, RunPart } from "../core/run-part.js";
import { removeMadeDirs } from "./paths.js";
import type { ControlReply, ControlRequest, RunStatus } from "./protocol.js";
import { lineServer, listen } from "./server.js";
import { STEERING_START, beforeScript, steer, type SteeringEffect, type SteeringState } from "./steering.js";

/**
 * The run's control channel (loopx's own addition): a Unix socket in a private directory
 * (control/paths.ts, control/server.ts) through which `loopx runs stop|pause|continue` and the
 * dashboard steer the run from another process, by the rules of control/steering.ts. Opened when
 * the run begins, removed when it ends. Costs nothing per iteration: `beforeScript` returns at once
 * unless a stop or a pause was asked for, and the socket is only read when someone connects. The
 * server does not keep a process alive, except while the run is paused (nothing else may then be
 * pending).
 */

/** Asked for between two scripts only: there is no process group to end. */
const STOP = { reason: "stopped-on-request", exitCode: 0 } as const;

/** `records`: the records directory the run writes its record to, if it is recorded (what `status` tells). */
export function controlPart(env: Record<string, string | undefined>, records?: string): RunPart {
  let controls: RunControls | undefined;
  let socket: { server: Server; path: string; made: string | undefined } | undefined;
  let state: SteeringState = STEERING_START;
  const sitting: Sitting = { iterations: 0 };
  /** While paused: what the next script waits on. */
  let held: { release: () => void; promise: Promise<void> } | undefined;

  const apply = (effect: SteeringEffect, runControls: RunControls): void => {
    if (effect === "hold") {
      let release!: () => void;
      const promise = new Promise<void>((resolve) => (release = resolve));
      held = { release, promise };
      socket?.server.ref();
    } else if (effect === "release") {
      held?.release();
      held = undefined;
      socket?.server.unref();
    } else if ("emit" in effect) runControls.emit(effect.emit);
    else void runControls.cancel({ reason: "interrupted", signal: "SIGINT", exitCode: 130, message: effect.interrupt, error: new LoopxError(effect.interrupt, 130) });
  };

  const handle = (request: ControlRequest): ControlReply => {
    const runControls = controls!;
    if (request.op === "status") return statusReply(runControls.id, state, sitting, records);
    const step = steer(state, request, { id: runControls.id, running: sitting.running, now: Date.now() });
    state = step.state;
    for (const effect of step.effects) apply(effect, runControls);
    return step.reply;
  };

  return {
    async begin(runControls) {
      controls = runControls;
      try {
        socket = await listen(env, runControls.id, lineServer(handle, () => controls !== undefined));
      } catch (error) {
        runControls.warn(`cannot open the run's control channel (loopx runs stop/pause/continue): ${error instanceof Error ? error.message : String(error)}; the run goes on without it`);
      }
    },
    onEvent: (event) => track(sitting, event),
    beforeScript() {
      const next = beforeScript(state);
      if (next === "stop") void controls?.cancel(STOP);
      else if (next === "hold" && held) return held.promise.then(() => void (state.stopping && controls?.cancel(STOP)));
    },
    async end() {
      held?.release();
      held = undefined;
      controls = undefined;
      const closing = socket;
      socket = undefined;
      if (!closing) return;
      await closeChannel(closing);
    },
  };
}

/** This sitting's first event, the iteration going on and the script running now (if one is): what a `status` request answers. */
interface Sitting {
  start?: RunStatus["start"];
  iterations: number;
  running?: string;
}

function track(sitting: Sitting, event: LoopEvent): void {
  if (event.type === "run.start" || event.type === "run.resume") {
    sitting.start = event;
    sitting.iterations = event.type === "run.resume" ? event.iterations : 0;
  } else if (event.type === "iteration.start") {
    sitting.running = event.target;
    sitting.iterations = event.n;
  } else if (event.type === "iteration.end") sitting.running = undefined;
}

function statusReply(id: string, state: SteeringState, sitting: Sitting, records: string | undefined): ControlReply {
  const { start, iterations } = sitting;
  const going = state.stopping ? "stopping" : state.pausedSince !== undefined ? "paused" : "running";
  return { ok: true, message: `run ${id} is ${going}`, ...(start ? { status: { start, iterations, state: going, ...(records !== undefined ? { records } : {}) } } : {}) };
}

async function closeChannel(closing: { server: Server; path: string; made: string | undefined }): Promise<void> {
  await new Promise<void>((resolve) => closing.server.close(() => resolve()));
  try {
    unlinkSync(closing.path);
  } catch {
    // Removed by the runtime when it closed the server.
  }
  removeMadeDirs(dirname(closing.path), closing.made);
}
