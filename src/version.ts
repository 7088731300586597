import { createRequire } from "node:module";

/** Set with `bun build --define` for standalone binaries, which carry no package.json. */
declare const __LOOPX_VERSION__: string | undefined;

/** The version of this loopx package (dist/version.js sits one level below package.json). */
export const VERSION: string =
  typeof __LOOPX_VERSION__ === "string"
    ? __LOOPX_VERSION__
    : (createRequire(import.meta.url)("../package.json") as { version: string }).version;
