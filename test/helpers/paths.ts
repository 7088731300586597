/** Where the tests find loopx and its runtimes: the repository root, the built CLI, node, bun, the standalone binary. */
import { readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** The built CLI entry (`npm test` runs the build first). */
export const BIN = join(ROOT, "dist", "bin.js");
export const REAL_BIN = realpathSync(BIN);
/** Bun from the `bun` devDependency. */
export const BUN = realpathSync(join(ROOT, "node_modules", ".bin", "bun"));
export const NODE = process.execPath;

/** The standalone binary for this host (`node scripts/build-binaries.mjs --host` writes it). */
export const BINARY = join(ROOT, "dist", "bin", `loopx-${process.platform}-${process.arch === "arm64" ? "arm64" : "x64"}`);

/** The version in package.json: what `loopx version` prints. */
export const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
