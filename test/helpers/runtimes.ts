/** The ways a test starts loopx (node, bun, the standalone binary) and the Linux-only gate. */
import { describe } from "vitest";
import { BIN, BINARY, BUN, NODE } from "./paths.js";

export interface Runtime {
  name: "node" | "bun";
  /** The interpreter that runs dist/bin.js. */
  exe: string;
  /** For the Node matrix: "node20", "node22", ... (the major version). */
  label?: string;
}
export const RUNTIMES: Runtime[] = [
  { name: "node", exe: NODE },
  { name: "bun", exe: BUN },
];

/** How the CLI is started: `exe ...prefix ...args` (node or bun run dist/bin.js; the binary runs itself). */
export interface Cli {
  name: "node" | "bun" | "binary";
  exe: string;
  prefix: string[];
}
/** The three ways loopx ships: under node, under bun, and as the standalone binary. */
export const CLIS: Cli[] = [
  { name: "node", exe: NODE, prefix: [BIN] },
  { name: "bun", exe: BUN, prefix: [BIN] },
  { name: "binary", exe: BINARY, prefix: [] },
];
/** The same three ways as one command line each: what starts loopx, before its arguments. */
export interface Channel {
  name: Cli["name"];
  argv: string[];
}
export const CHANNELS: Channel[] = CLIS.map((cli) => ({ name: cli.name, argv: [cli.exe, ...cli.prefix] }));

/**
 * Tests that need Linux itself: they read /proc (process states, memory, file descriptors,
 * process groups) to prove what loopx did. Elsewhere (macOS in CI) they are reported as skipped
 * and the rest runs; README "Continuous integration" says so. Use it where the tests are defined:
 * `linuxOnly.each(RUNTIMES)(...)`, `linuxOnly("...", () => ...)`.
 */
export const linuxOnly = describe.runIf(process.platform === "linux");
