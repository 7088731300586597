import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** True when this process is Bun (including a `bun build --compile` binary). */
export const isBun: boolean = typeof (globalThis as { Bun?: unknown }).Bun !== "undefined";

/** Absolute path of a file of this package, relative to the package's `dist/` directory. */
export function distPath(relative: string): string {
  // This module lives at dist/runtime/detect.js.
  return fileURLToPath(new URL(`../${relative}`, import.meta.url));
}

let cachedLoopxBin: string | undefined;

/**
 * The realpath of the effective loopx binary (spec §3.4, §8.3): this package's own `dist/bin.js`,
 * whichever launcher or symlink started it, and also when loopx is used as a library.
 */
export function loopxBin(): string {
  cachedLoopxBin ??= realpathSync(distPath("bin.js"));
  return cachedLoopxBin;
}
