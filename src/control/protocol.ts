/**
 * What goes over a run's control socket: one JSON line each way, then the connection ends.
 * Types and limits only.
 */

import type { RunResumeEvent, RunStartEvent } from "../core/events.js";

type ControlOp = "stop" | "pause" | "continue" | "status";

export interface ControlRequest {
  op: ControlOp;
  /** `stop` only: interrupt the running script as Ctrl-C does instead of letting it finish. */
  now?: boolean;
}

export interface ControlReply {
  ok: boolean;
  /** What happened, or why not, in words: one line. */
  message: string;
  /** `status` only: the run as its process knows it. */
  status?: RunStatus;
}

/**
 * What a run's process says of it (`status`): what `loopx runs` shows of a going run, whose record
 * may lag behind or hold nothing on a full disk (control/live.ts).
 */
export interface RunStatus {
  /** The event that began this sitting of the run (whether or not the record holds it). */
  start: RunStartEvent | RunResumeEvent;
  /** The iteration going on (or the last one), 0 before the first. */
  iterations: number;
  state: "running" | "paused" | "stopping";
  /** The records directory the run writes its record to; absent when it is not recorded. */
  records?: string;
}

/** A request longer than this is not one of ours: the connection is dropped. */
export const MAX_REQUEST_BYTES = 4096;
