/**
 * What goes over a run's control socket: one JSON line each way, then the connection ends.
 * Types and limits only.
 */

type ControlOp = "stop" | "pause" | "continue";

export interface ControlRequest {
  op: ControlOp;
  /** `stop` only: interrupt the running script as Ctrl-C does instead of letting it finish. */
  now?: boolean;
}

export interface ControlReply {
  ok: boolean;
  /** What happened, or why not, in words: one line. */
  message: string;
}

/** A request longer than this is not one of ours: the connection is dropped. */
export const MAX_REQUEST_BYTES = 4096;
