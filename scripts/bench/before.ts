import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Channel } from "./channels.js";
import { flagValue } from "./setup.js";

/** The checkout of `--before <dir>` (dist/ built there), or undefined. */
export function beforeRoot(): string | undefined {
  const root = flagValue("--before");
  if (root !== undefined && !existsSync(join(root, "dist", "bin.js"))) throw new Error(`--before ${root}: dist/bin.js does not exist there (build it first)`);
  return root;
}

/**
 * Each channel as it is, and as the --before build runs it (its dist/bin.js under the same node or
 * bun; its own standalone binary when it built one), for figures side by side in the same round.
 */
export function withBefore(channels: Channel[]): Array<{ build: "now" | "before"; channel: Channel }> {
  const root = beforeRoot();
  const all: Array<{ build: "now" | "before"; channel: Channel }> = [];
  for (const channel of channels) {
    all.push({ build: "now", channel });
    if (root === undefined) continue;
    const binary = join(root, "dist", "bin", `loopx-${process.platform}-${process.arch === "arm64" ? "arm64" : "x64"}`);
    if (channel.name === "binary" && !existsSync(binary)) continue;
    const loopx = channel.name === "binary" ? [binary] : [channel.loopx[0]!, join(root, "dist", "bin.js")];
    all.push({ build: "before", channel: { ...channel, loopx } });
  }
  return all;
}
