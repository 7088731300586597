/**
 * Preloaded (`--preload`) into every JS/TS script loopx runs under Bun and in the standalone
 * binary, alone or as part of bun-preload.ts: the variables loopx sets only for the script's own
 * start leave its environment again, so that what the script starts (an agent's tools, a gate's
 * `npm test`, `$LOOPX_BIN output ...`) does not inherit them. Cheap on purpose: bun-preload.ts's
 * plugin costs ~1-2 ms more per script start, for nothing to catch in most scripts.
 * - BUN_BE_BUN: the binary starts scripts as itself acting as Bun; a child running `$LOOPX_BIN`
 *   must see loopx again.
 * - NODE_PATH: its first entry is loopx's helper package (`import "loopx"`, spec §3.3). Bun has
 *   read it by now (resolution keeps working); the user's own NODE_PATH, if any, is restored.
 * Children started through node:child_process (and Bun.spawn with `env: process.env`) get the
 * cleaned environment; Bun.spawn without `env` passes the environment the process started with
 * (a limit of Bun, documented in the README).
 */
delete process.env.BUN_BE_BUN;

const nodePath = process.env.NODE_PATH;
if (nodePath !== undefined) {
  const [first, ...rest] = nodePath.split(":");
  // The helper package: `node-path/` beside the binary's cached preload, or dist/node-path/.
  const helpers = [new URL("./node-path", import.meta.url).pathname, new URL("../../node-path", import.meta.url).pathname];
  if (first !== undefined && helpers.includes(first)) {
    if (rest.length === 0) delete process.env.NODE_PATH;
    else process.env.NODE_PATH = rest.join(":");
  }
}

export {};
