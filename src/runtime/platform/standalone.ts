/**
 * The standalone binary (`bun build --compile`): Bun's platform, except that JS/TS scripts run by
 * the binary itself acting as Bun (BUN_BE_BUN=1), with the same preload (or, for a script that
 * cannot use CommonJS, one that only unsets BUN_BE_BUN) and a helper package materialized in a
 * per-version cache, since there is no package directory on disk.
 */
import { nodeCrypto } from "../../os/builtins.js";
import { lstatSync, mkdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LoopxError, fsReason } from "../../core/errors.js";
import { VERSION } from "../../version.js";
import { bunPlatform, BUN_SCRIPT_FLAGS, mayUseCommonJs, prependNodePath } from "./bun.js";
import type { Platform } from "./types.js";
import { writeDirAtomic } from "../../os/atomic-write.js";
import { loopxDir } from "../../os/xdg.js";

/** Embedded at compile time (`bun build --define`) into standalone binaries only. */
declare const __LOOPX_HELPERS_JS__: string | undefined;
declare const __LOOPX_PRELOAD_JS__: string | undefined;
declare const __LOOPX_ENV_PRELOAD_JS__: string | undefined;

interface HelperCache {
  /** Directory for NODE_PATH: holds `loopx/` (package.json + index.js: the script-facing entry, script.ts, bundled). */
  nodePath: string;
  /** The Bun preload that keeps scripts ESM-only (and does what envPreload does). */
  preload: string;
  /** The preload for scripts that cannot use CommonJS: only takes BUN_BE_BUN and loopx's NODE_PATH entry out of the script's environment. */
  envPreload: string;
}

function sha256(text: string): string {
  return nodeCrypto().createHash("sha256").update(text).digest("hex");
}

/** The files of the helper package, relative to the cache entry, with their exact contents. */
function helperFiles(): Record<string, string> {
  if (typeof __LOOPX_HELPERS_JS__ !== "string" || typeof __LOOPX_PRELOAD_JS__ !== "string" || typeof __LOOPX_ENV_PRELOAD_JS__ !== "string") {
    throw new Error("this loopx binary was built without its embedded script helpers");
  }
  const manifest = { name: "loopx", version: VERSION, private: true, type: "module", main: "./index.js", exports: { ".": "./index.js" } };
  return {
    "node-path/loopx/package.json": JSON.stringify(manifest, null, 2) + "\n",
    "node-path/loopx/index.js": __LOOPX_HELPERS_JS__,
    "preload.js": __LOOPX_PRELOAD_JS__,
    "env-preload.js": __LOOPX_ENV_PRELOAD_JS__,
  };
}

/** True if every file exists with exactly the expected bytes (a torn or edited cache is not). */
function intact(dir: string, files: Record<string, string>): boolean {
  try {
    return Object.entries(files).every(([relative, content]) => readFileSync(join(dir, relative), "utf8") === content);
  } catch {
    return false;
  }
}

/**
 * Where the helpers go when the cache under $XDG_CACHE_HOME / $HOME cannot be written (containers,
 * the `nobody` user with HOME=/nonexistent, a cache path under a regular file): a directory of this
 * user's own under the temp dir, used only if it is a real directory (no link), owned by this user
 * and closed to everyone else — another user could otherwise plant the helpers scripts import.
 */
function privateTempRoot(): string {
  const uid = process.getuid?.() ?? 0;
  const dir = join(tmpdir(), `loopx-${uid}`);
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const stat = lstatSync(dir);
  if (!stat.isDirectory() || stat.uid !== uid || (stat.mode & 0o077) !== 0) {
    throw new Error(`${dir} is not a private directory of this user`);
  }
  return join(dir, "cache");
}

/** The cache entry `key` under `root`, written unless it is there already, intact. */
function materialize(root: string, key: string, files: Record<string, string>): string {
  const dir = join(root, key);
  if (!intact(dir, files)) {
    mkdirSync(root, { recursive: true });
    try {
      writeDirAtomic(dir, files); // replaces a corrupted entry, if any
    } catch (error) {
      // Another loopx won the race; its entry is as good as ours if intact.
      if (!intact(dir, files)) throw error;
    }
  }
  return dir;
}

let cached: HelperCache | undefined;

/**
 * The standalone binary's on-disk helper package (spec §3.3 via NODE_PATH), materialized once per
 * binary build under `$XDG_CACHE_HOME/loopx/<version>-<content hash>/`: two binaries of different
 * versions (or builds) never share an entry. It is written into a temp directory and renamed into
 * place, so a crash never leaves a half-written entry under the final name; an entry whose files
 * do not match byte for byte is replaced. Where that cannot be written, the entry goes to a private
 * directory under the temp dir (privateTempRoot).
 */
function helperCache(): HelperCache {
  if (cached) return cached;
  const files = helperFiles();
  const key = `${VERSION}-${sha256(Object.values(files).join("\0")).slice(0, 16)}`;
  let dir: string;
  try {
    dir = materialize(loopxDir("cache"), key, files);
  } catch (error) {
    try {
      dir = materialize(privateTempRoot(), key, files);
    } catch (fallbackError) {
      throw new LoopxError(
        `cannot write loopx's script helpers to ${join(loopxDir("cache"), key)} (${fsReason(error)}) nor under ${tmpdir()} (${fsReason(fallbackError)}): set XDG_CACHE_HOME to a writable directory`,
      );
    }
  }
  cached = { nodePath: join(dir, "node-path"), preload: join(dir, "preload.js"), envPreload: join(dir, "env-preload.js") };
  return cached;
}

export const standalonePlatform: Platform = {
  ...bunPlatform,
  jsLauncher() {
    const cache = helperCache();
    return {
      command: process.execPath,
      // As under Bun, the ESM-only guard only where there is something for it to catch; BUN_BE_BUN
      // must leave every script's environment (loader/standalone-env-preload.ts).
      args: (path) => [...BUN_SCRIPT_FLAGS, "--preload", mayUseCommonJs(path) ? cache.preload : cache.envPreload, path],
      extraEnv: (env) => ({ NODE_PATH: prependNodePath(env, cache.nodePath), BUN_BE_BUN: "1" }),
    };
  },
};
