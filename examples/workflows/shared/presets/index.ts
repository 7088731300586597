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

/** How to install each CLI: what a missing one's message names. */
export const INSTALL: Record<string, string> = {
  claude: "npm i -g @anthropic-ai/claude-code",
  codex: "npm i -g @openai/codex",
  amp: "npm i -g @sourcegraph/amp",
  cline: "npm i -g cline",
  gemini: "npm i -g @google/gemini-cli",
  opencode: "npm i -g opencode-ai",
  pi: "npm i -g @mariozechner/pi-coding-agent",
  qwen: "npm i -g @qwen-code/qwen-code",
  copilot: "npm i -g @github/copilot",
};

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
