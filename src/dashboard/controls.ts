/**
 * The dashboard's buttons, wired to the per-run control channel (stop, pause, continue, resume of
 * a run by its id). This module is the only place the dashboard knows that channel: the server
 * calls `applyControl` and shows the answer, whatever the channel does.
 */

export const CONTROL_ACTIONS = ["stop", "stop-now", "pause", "continue", "resume"] as const;
export type ControlAction = (typeof CONTROL_ACTIONS)[number];

/** What the control channel offers, each call answering with what happened, in words. */
export interface ControlChannel {
  stop(id: string, options: { now: boolean }): Promise<string>;
  pause(id: string): Promise<string>;
  continue(id: string): Promise<string>;
  resume(id: string): Promise<string>;
}

export interface ControlAnswer {
  ok: boolean;
  message: string;
}

/** The machine's control channel; none in this loopx yet, so the buttons say so. */
export async function loadControlChannel(): Promise<ControlChannel | undefined> {
  return undefined;
}

export function isControlAction(value: unknown): value is ControlAction {
  return typeof value === "string" && (CONTROL_ACTIONS as readonly string[]).includes(value);
}

/** Runs one button's action on run `id`; a refusal of the channel is reported, not thrown. */
export async function applyControl(channel: ControlChannel | undefined, action: ControlAction, id: string): Promise<ControlAnswer> {
  if (!channel) return { ok: false, message: "this loopx has no run control channel: the dashboard can only watch" };
  try {
    switch (action) {
      case "stop":
        return { ok: true, message: await channel.stop(id, { now: false }) };
      case "stop-now":
        return { ok: true, message: await channel.stop(id, { now: true }) };
      case "pause":
        return { ok: true, message: await channel.pause(id) };
      case "continue":
        return { ok: true, message: await channel.continue(id) };
      case "resume":
        return { ok: true, message: await channel.resume(id) };
    }
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}
