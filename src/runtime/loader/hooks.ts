/**
 * Module resolve hook for scripts run under Node (spec §3.3, §6.3):
 * - `import ... from "loopx"` resolves through ordinary resolution first, so a workflow's own
 *   `node_modules/loopx` wins; only when that fails does it map to the running CLI's package.
 * - Script files outside node_modules are always ESM: loopx scripts must use `import`, and
 *   `require`/`module.exports` must fail even without a `"type": "module"` package.json (spec §6.3).
 *   `require` is then simply undefined; `module`/`exports` need the load hook below, because tsx
 *   quietly wraps a file that uses them in an esbuild CommonJS shim.
 */
import { initialize as tsxInitialize, load as tsxLoad, resolve as tsxResolve } from "tsx/esm";

const ownEntry = new URL("../../index.js", import.meta.url).href;
const SCRIPT_FILE = /\.(?:js|jsx|ts|tsx)$/;

interface ResolveResult {
  url: string;
  format?: string | null;
  shortCircuit?: boolean;
}
type NextResolve = (specifier: string, context: unknown) => Promise<ResolveResult>;

function isScriptFile(url: string): boolean {
  return url.startsWith("file:") && SCRIPT_FILE.test(new URL(url).pathname) && !url.includes("/node_modules/");
}

/** tsx's hooks need its initialize() (given the `data` passed to module.register). */
export const initialize = tsxInitialize;

export async function resolve(specifier: string, context: unknown, nodeResolve: NextResolve): Promise<ResolveResult> {
  const nextResolve: NextResolve = (next, nextContext) => tsxResolve(next, nextContext, nodeResolve);
  if (specifier === "loopx" || specifier.startsWith("loopx/")) {
    try {
      return await nextResolve(specifier, context);
    } catch (error) {
      if (specifier === "loopx" && (error as { code?: string }).code === "ERR_MODULE_NOT_FOUND") {
        return { url: ownEntry, format: "module", shortCircuit: true };
      }
      throw error;
    }
  }
  const resolved = await nextResolve(specifier, context);
  if (isScriptFile(resolved.url)) return { ...resolved, format: "module" };
  return resolved;
}

interface LoadResult {
  format?: string | null;
  source?: string | ArrayBuffer | ArrayBufferView | null;
  shortCircuit?: boolean;
}
type NextLoad = (url: string, context: unknown) => Promise<LoadResult>;

/** esbuild's marker for a module body it had to wrap because the file uses module/exports. */
const COMMONJS_SHIM = "__commonJS(";

export async function load(url: string, context: unknown, nodeLoad: NextLoad): Promise<LoadResult> {
  const nextLoad: NextLoad = (next, nextContext) => tsxLoad(next, nextContext, nodeLoad);
  const loaded = await nextLoad(url, context);
  if (loaded.format === "module" && loaded.source != null && isScriptFile(url)) {
    const source = loaded.source;
    const text = typeof source === "string" ? source : Buffer.from(source as ArrayBuffer).toString("utf8");
    if (text.includes(COMMONJS_SHIM)) {
      throw new SyntaxError(`${new URL(url).pathname} uses CommonJS (module.exports / exports): loopx scripts are ES modules, use import/export`);
    }
  }
  return loaded;
}
