import { existsSync } from "node:fs";
import { BINARY, BUN, CHANNEL_FILTER, DIST_BIN, NODE, TSX_ESM_URL } from "./setup.js";

// ---------------------------------------------------------------------------------------------
// Channels

export interface Channel {
  name: "node" | "bun" | "binary";
  /** How to start loopx. */
  loopx: string[];
  /** How to start the raw driver (a runtime able to run an .mjs file). */
  driver: string[];
  /** Extra environment for the driver and for raw commands (BUN_BE_BUN for the binary). */
  rawEnv: Record<string, string>;
  /** The raw interpreter command for a JS/TS script (the definition). */
  rawScript(path: string): string[];
  rawLabel: string;
}

export function channels(): { active: Channel[]; notes: string[] } {
  const notes: string[] = [];
  const all: Channel[] = [
    {
      name: "node",
      loopx: [NODE, DIST_BIN],
      driver: [NODE],
      rawEnv: {},
      rawScript: (path) => [NODE, "--import", TSX_ESM_URL, path],
      rawLabel: "node --import tsx/esm <script>",
    },
    { name: "bun", loopx: [BUN, DIST_BIN], driver: [BUN], rawEnv: {}, rawScript: (path) => [BUN, path], rawLabel: "bun <script>" },
  ];
  if (existsSync(BINARY)) {
    all.push({
      name: "binary",
      loopx: [BINARY],
      driver: [BINARY],
      rawEnv: { BUN_BE_BUN: "1" },
      rawScript: (path) => [BINARY, path],
      rawLabel: "BUN_BE_BUN=1 <binary> <script>",
    });
  } else if (CHANNEL_FILTER.has("binary")) {
    notes.push(`binary channel skipped: ${BINARY} does not exist (build it with node scripts/build-binaries.mjs --host)`);
  }
  return { active: all.filter((c) => CHANNEL_FILTER.has(c.name)), notes };
}
