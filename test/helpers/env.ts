/** The environments loopx runs in: isolated from the machine, and with a per-test TMPDIR. */
import { mkdirSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { BUN, NODE, ROOT } from "./paths.js";
import { tempDir } from "./project.js";

/**
 * Bun's transpiler cache (what Bun keeps of the modules it transpiled, in $XDG_CACHE_HOME/bun),
 * shared by the tests as a user's persists across their runs: in a cache directory of its own each
 * test started Bun cold, transpiling and writing loopx's modules again — ~100 ms of CPU on every
 * loopx start under Bun that no user pays twice. Bun writes it by rename, so parallel starts share it.
 */
const BUN_CACHE = join(ROOT, "node_modules", ".cache", "loopx-tests-bun");
/**
 * loopx's own caches in $XDG_CACHE_HOME/loopx, shared the same way: its TypeScript transforms under
 * Node and Node's compile cache (Node 22 and later). Both are written atomically and bounded; the
 * tests of a cold or broken cache give loopx an XDG_CACHE_HOME of their own.
 */
const LOOPX_CACHES = ["transform", "node-compile-cache"].map((name) => [name, join(ROOT, "node_modules", ".cache", `loopx-tests-${name}`)] as const);
let sharedCachesMade = false;

/**
 * An environment isolated from the machine: own HOME, XDG_CONFIG_HOME (so the global env file is
 * per test) and XDG_STATE_HOME (so run records are per test), PATH that still finds bash/node/bun,
 * and no inherited LOOPX_* variables. XDG_CACHE_HOME is per test too, outside HOME: on Node 22 and
 * later every loopx command keeps Node's compile cache there, and the tests that prove a command
 * wrote nothing watch HOME. Its `bun` is the tests' one Bun transpiler cache (BUN_CACHE), and its
 * `loopx/transform` and `loopx/node-compile-cache` are theirs too (LOOPX_CACHES).
 */
export function isolatedEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const home = tempDir("loopx-home-");
  const cache = tempDir("loopx-cache-");
  if (!sharedCachesMade) {
    mkdirSync(BUN_CACHE, { recursive: true });
    for (const [, shared] of LOOPX_CACHES) mkdirSync(shared, { recursive: true });
    sharedCachesMade = true;
  }
  symlinkSync(BUN_CACHE, join(cache, "bun"));
  mkdirSync(join(cache, "loopx"));
  for (const [name, shared] of LOOPX_CACHES) symlinkSync(shared, join(cache, "loopx", name));
  const env: Record<string, string> = {
    PATH: `${dirname(NODE)}:${dirname(BUN)}:/usr/local/bin:/usr/bin:/bin`,
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    XDG_CACHE_HOME: cache,
    LANG: "C.UTF-8",
  };
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

/** A per-test TMPDIR and an isolated environment that points at it. */
export function scratchEnv(extra: Record<string, string> = {}): { env: Record<string, string>; tmp: string } {
  const tmp = tempDir("loopx-tmproot-");
  return { env: isolatedEnv({ TMPDIR: tmp, ...extra }), tmp };
}
