import { fileURLToPath } from "node:url";
import { fs } from "./builtins.js";

/** True when this process is Bun (including a `bun build --compile` binary). */
export const isBun: boolean = typeof (globalThis as { Bun?: unknown }).Bun !== "undefined";

/**
 * True inside a `bun build --compile` standalone binary: its modules live in Bun's embedded
 * filesystem (`/$bunfs/...`), there is no package directory on disk, and the binary itself can act
 * as Bun when started with BUN_BE_BUN=1.
 */
export const isStandalone: boolean = isBun && import.meta.url.includes("/$bunfs/");

/** Absolute path of a file of this package, relative to the package's `dist/` directory. */
export function distPath(relative: string): string {
  // This module lives at dist/runtime/detect.js.
  return fileURLToPath(new URL(`../${relative}`, import.meta.url));
}

let cachedLoopxBin: string | undefined;

/**
 * The realpath of the effective loopx binary (spec §3.4, §8.3): the standalone binary itself, or
 * this package's own `dist/bin.js` whichever launcher or symlink started it — also when loopx is
 * used as a library.
 */
export function loopxBin(): string {
  cachedLoopxBin ??= fs.realpathSync(isStandalone ? process.execPath : distPath("bin.js"));
  return cachedLoopxBin;
}

/** The hidden first argument that makes `loopx` (bin.ts) act as a run's guardian; never in help. */
export const GUARDIAN_ARG = "--loopx-guardian";

/**
 * How this loopx starts itself as a run's guardian (runtime/parts/guardian.ts): its runtime and
 * entry, or the standalone binary alone (which then acts as loopx, not as Bun).
 */
export function guardianCommand(): string[] {
  return isStandalone ? [process.execPath, GUARDIAN_ARG] : [process.execPath, distPath("bin.js"), GUARDIAN_ARG];
}
