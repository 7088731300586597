import { existsSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { LoopxError } from "../core/errors.js";

/**
 * The workflows that ship with loopx (examples/workflows/: ralph, converge), as the gzip tarball
 * scripts/pack-workflows.mjs writes: next to the package's JavaScript for npm and Bun
 * (dist/workflows.tar.gz, in package.json "files"), embedded in the standalone binary.
 */

/** Embedded at compile time (`bun build --define`, base64) into standalone binaries only. */
declare const __LOOPX_WORKFLOWS_TGZ__: string | undefined;

/** How messages name the shipped workflows as a source. */
export const SHIPPED = "loopx's shipped workflows";

/** The path of the shipped archive: the package's own file, or the binary's copy written to `scratch`. */
export function shippedArchive(scratch: string): string {
  if (typeof __LOOPX_WORKFLOWS_TGZ__ === "string") {
    writeFileSync(scratch, Buffer.from(__LOOPX_WORKFLOWS_TGZ__, "base64"));
    return scratch;
  }
  // dist/install/builtin.js → dist/workflows.tar.gz
  const packaged = fileURLToPath(new URL("../workflows.tar.gz", import.meta.url));
  if (!existsSync(packaged)) throw new LoopxError(`this loopx has no shipped workflows (${packaged} is missing: a build without scripts/pack-workflows.mjs)`);
  return packaged;
}
