/**
 * Node versions without module.registerHooks (20.x, 22.0–22.14, 23.0–23.4) can only run loopx's
 * module hooks through module.register, whose hooks worker thread costs ~50 ms of start-up in every
 * script process (Node 20: a no-op script takes ~37 ms plain, ~90 ms with the worker). For a plain
 * JavaScript script that needs none of what the hooks do, Node's own
 * `--experimental-default-type=module` (Node ≥ 20.10; silent) gives the one thing left — the script
 * is an ES module whatever package.json lacks — at no cost.
 *
 * What the hooks do (loader/resolution.ts): resolve `loopx`, resolve TypeScript-style specifiers
 * (`./x`, `./x.js` naming `./x.ts`), transform TS/JSX, and load local `.js` files as ESM even under
 * `"type": "commonjs"`. So a script may skip them only if, certainly:
 * - it is a `.js`/`.mjs` file outside node_modules;
 * - its source never mentions `loopx` and imports nothing but `node:` built-ins (every static
 *   `import`/`export … from` specifier starts with `node:`; no `import(` or `import.meta`), so no
 *   other file is resolved through the hooks;
 * - the nearest package.json does not say `"type": "commonjs"` (and is valid JSON).
 * Anything unclear (unreadable file, a comment between `from` and its specifier) keeps the hooks.
 */
import { dirname, join } from "node:path";
import { fs, nodeModule } from "../os/builtins.js";

let defaultTypeFlag: boolean | undefined;

/** The flags to run `path` with instead of loopx's hooks, or undefined to use the hooks. Node only. */
export function hooklessFlags(path: string): string[] | undefined {
  defaultTypeFlag ??=
    typeof (nodeModule as { registerHooks?: unknown }).registerHooks !== "function" &&
    process.allowedNodeEnvironmentFlags?.has("--experimental-default-type") === true;
  return defaultTypeFlag && needsNoHooks(path) ? ["--enable-source-maps", "--experimental-default-type=module", path] : undefined;
}

const SPECIFIER = /\b(?:from|import)\s*(?:(["'])(.*?)\1|\/[*/])/gs;

export function needsNoHooks(path: string): boolean {
  if (!/\.m?js$/.test(path) || path.includes("/node_modules/")) return false;
  let source: string;
  try {
    source = fs.readFileSync(path, "utf8");
  } catch {
    return false;
  }
  if (source.includes("loopx") || /\bimport\s*[(.]/.test(source)) return false;
  for (const match of source.matchAll(SPECIFIER)) {
    if (match[2] === undefined || !match[2].startsWith("node:")) return false;
  }
  return path.endsWith(".mjs") || !commonJsPackage(dirname(path));
}

/** True if the nearest package.json from `dir` up says "type": "commonjs", or cannot be read or parsed. */
function commonJsPackage(dir: string): boolean {
  for (; ; dir = dirname(dir)) {
    let text: string | undefined;
    try {
      text = fs.readFileSync(join(dir, "package.json"), "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT" && (error as NodeJS.ErrnoException).code !== "ENOTDIR") return true;
    }
    if (text !== undefined) {
      try {
        const type = (JSON.parse(text) as { type?: unknown } | null)?.type;
        return type !== undefined && type !== "module";
      } catch {
        return true;
      }
    }
    if (dirname(dir) === dir) return false;
  }
}
