import { createRequire } from "node:module";

/** The version of this loopx package (dist/version.js sits one level below package.json). */
export const VERSION: string = (createRequire(import.meta.url)("../package.json") as { version: string }).version;
