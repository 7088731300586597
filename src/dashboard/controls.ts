/**
 * The dashboard's buttons, wired to the per-run control channel (stop, pause, continue, resume of
 * a run by its id). This module is the only place the dashboard knows that channel: the server
 * calls `applyControl` and shows the answer, whatever the channel does.
 */

const CONTROL_ACTIONS = ["stop", "stop-now", "pause", "continue", "resume"] as const;
export type ControlAction = (typeof CONTROL_ACTIONS)[number];

import type { ControlChannel } from "../control/client.js";

export type { ControlChannel };

export interface ControlAnswer {
  ok: boolean;
  message: string;
}

/** The runs' control channel (control/client.ts), as the user `env` belongs to: a resume starts detached. */
export async function loadControlChannel(env: Record<string, string | undefined>): Promise<ControlChannel | undefined> {
  return (await import("../control/client.js")).createControlChannel(env);
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
