/**
 * Which runtime this process is: the one place that tells Node, Bun and a standalone binary apart.
 * Everything that differs between them lives in platform/{node,bun,standalone}.ts, chosen once by
 * platform/index.ts from `runtimeName`. This module stays tiny: bin.js bundles it for delegation.
 */
import { fileURLToPath } from "node:url";
import { fs } from "../../os/builtins.js";

/** The runtime's name as run records show it. */
export type RuntimeName = "node" | "bun" | "binary";

/**
 * "binary" inside a `bun build --compile` standalone binary: its modules live in Bun's embedded
 * filesystem (`/$bunfs/...`), there is no package directory on disk, and the binary itself can act
 * as Bun when started with BUN_BE_BUN=1.
 */
export const runtimeName: RuntimeName = !("Bun" in globalThis) ? "node" : import.meta.url.includes("/$bunfs/") ? "binary" : "bun";

/**
 * The way up from this module's file to `dist/`, set by the build for each bundle this module is
 * part of (a bundle's file sits elsewhere in dist/ than runtime.js does); undefined in tsc's output.
 */
declare const __LOOPX_DIST_UP__: string | undefined;

/** Absolute path of a file of this package, relative to the package's `dist/` directory. */
export function distPath(relative: string): string {
  // Unbundled, this module lives at dist/runtime/platform/runtime.js.
  const up = typeof __LOOPX_DIST_UP__ === "string" ? __LOOPX_DIST_UP__ : "../../";
  return fileURLToPath(new URL(`${up}${relative}`, import.meta.url));
}

let cachedLoopxBin: string | undefined;

/**
 * The realpath of the effective loopx binary (spec §3.4, §8.3): the standalone binary itself, or
 * this package's own entry whichever launcher or symlink started it — also when loopx is used as a
 * library. Under Bun that is `dist/bin-bun.js` (bin.js behind a `#!/usr/bin/env bun` line), so a
 * script's `$LOOPX_BIN output ...` costs a Bun start rather than a Node start (bin.js says `node`);
 * where no `bun` is on PATH for that line to find, or the launcher lost its executable bit, bin.js.
 */
export function loopxBin(): string {
  cachedLoopxBin ??= fs.realpathSync(runtimeName === "binary" ? process.execPath : runtimeName === "bun" && bunLauncherWorks() ? distPath("bin-bun.js") : distPath("bin.js"));
  return cachedLoopxBin;
}

function bunLauncherWorks(): boolean {
  const executable = (path: string) => {
    try {
      fs.accessSync(path, fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  return executable(distPath("bin-bun.js")) && (process.env.PATH ?? "").split(":").some((dir) => dir !== "" && executable(`${dir}/bun`));
}

/** The hidden first argument that makes `loopx` (bin.ts) act as a run's guardian; never in help. */
export const GUARDIAN_ARG = "--loopx-guardian";

/**
 * How this loopx starts itself with `args`: its runtime and entry, or the standalone binary alone
 * (which then acts as loopx, not as Bun). The guardian and the dashboard's detached resume use it.
 */
export function selfCommand(...args: string[]): string[] {
  return runtimeName === "binary" ? [process.execPath, ...args] : [process.execPath, distPath("bin.js"), ...args];
}

/** How this loopx starts itself as a run's guardian (guardian/part.ts). */
export function guardianCommand(): string[] {
  return selfCommand(GUARDIAN_ARG);
}
