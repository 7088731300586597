/** The environments loopx runs in: isolated from the machine, and with a per-test TMPDIR. */
import { existsSync, mkdirSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { BUN, NODE, ROOT } from "./paths.js";
import { tempDir } from "./project.js";

/**
 * The caches every test's XDG_CACHE_HOME shares, as a user's persist across their runs (path under
 * it → one directory under node_modules/.cache). Bun's transpiler cache (`bun`): in a cache of
 * its own each test started Bun cold, transpiling and writing loopx's modules again — ~100 ms of
 * CPU on every loopx start under Bun that no user pays twice. loopx's own (`loopx/…`): its
 * TypeScript transforms under Node and Node's compile cache (Node 22 and later). All are written
 * atomically (by rename) and bounded; the tests of a cold or broken cache give loopx an
 * XDG_CACHE_HOME of their own.
 */
const SHARED_CACHES = ["bun", "loopx/transform", "loopx/node-compile-cache"].map((path) => [path, join(ROOT, "node_modules", ".cache", `loopx-tests-${path.replace("loopx/", "")}`)] as const);
let sharedCachesMade = false;

/** Makes `cache` (an XDG_CACHE_HOME) hold the tests' shared caches (SHARED_CACHES). */
export function linkSharedCaches(cache: string): void {
  if (!sharedCachesMade) {
    for (const [, shared] of SHARED_CACHES) mkdirSync(shared, { recursive: true });
    sharedCachesMade = true;
  }
  mkdirSync(join(cache, "loopx"), { recursive: true });
  for (const [path, shared] of SHARED_CACHES) if (!existsSync(join(cache, path))) symlinkSync(shared, join(cache, path));
}

/**
 * An environment isolated from the machine: own HOME, XDG_CONFIG_HOME (so the global env file is
 * per test) and XDG_STATE_HOME (so run records are per test), PATH that still finds bash/node/bun,
 * and no inherited LOOPX_* variables. XDG_CACHE_HOME is per test too, outside HOME: on Node 22 and
 * later every loopx command keeps Node's compile cache there, and the tests that prove a command
 * wrote nothing watch HOME. Its caches are the tests' shared ones (SHARED_CACHES).
 */
export function isolatedEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const home = tempDir("loopx-home-");
  const cache = tempDir("loopx-cache-");
  linkSharedCaches(cache);
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
