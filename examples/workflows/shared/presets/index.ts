// The presets added after the first four (which live in agent.ts): one file per CLI.
import type { CostKind, Receipt } from "../usage.ts";
import type { Env, Json, StreamPreset } from "./common.ts";
import { copilot } from "./copilot.ts";
import { gemini } from "./gemini.ts";
import { opencode } from "./opencode.ts";
import { pi } from "./pi.ts";
import { qwen } from "./qwen.ts";

export type StreamAgentType = "gemini" | "opencode" | "pi" | "qwen" | "copilot";
export const STREAM_PRESETS: Record<StreamAgentType, StreamPreset> = { gemini, opencode, pi, qwen, copilot };

/** The name a receipt gives each of these CLIs. */
const AGENT_NAMES: Record<StreamAgentType, string> = { gemini: "gemini-cli", opencode: "opencode", pi: "pi", qwen: "qwen-code", copilot: "copilot" };

export const streamPreset = (type: string): StreamPreset | undefined => STREAM_PRESETS[type as StreamAgentType];

/** One call's receipts, with the agent's name; a receipt without tokens or cost is dropped. */
export function streamReceipts(type: StreamAgentType, events: Json[], env: Env, args: string[], costKind?: CostKind): Receipt[] {
  return STREAM_PRESETS[type]
    .receipts(events, { env, args, costKind })
    .filter((r) => r.tokens !== undefined || r.cost !== undefined)
    .map((r) => ({ ...r, agent: AGENT_NAMES[type] }));
}
