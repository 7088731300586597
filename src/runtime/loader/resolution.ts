/**
 * What loopx's Node module hooks decide, shared by the in-thread hooks (module.registerHooks,
 * sync-hooks.ts) and the hooks-thread ones (module.register, hooks.ts) (spec §3.3, §6.3):
 * - `import ... from "loopx"` resolves through ordinary resolution first, so a workflow's own
 *   `node_modules/loopx` wins; only when that fails does it map to the running CLI's package —
 *   its script-facing entry (script.ts: output, input and the types, nothing of run()).
 * - Script files outside node_modules are always ESM: loopx scripts must use `import`, and
 *   `require`/`module.exports` must fail even without a `"type": "module"` package.json.
 * - TypeScript-style specifiers resolve as tsx resolves them: `./x.js` may name `./x.ts`, and
 *   `./x` may name `./x.ts`, `./x.tsx`, `./x.js`, `./x.jsx` or `./x/index.*`.
 * - TypeScript and JSX files load as the transformed JavaScript from transform.ts.
 */
import { fileURLToPath } from "node:url";
import { fs } from "../../os/builtins.js";
import { TRANSFORMED, transformFile } from "./transform.js";

const OWN_ENTRY = new URL("../../script.js", import.meta.url).href;
const SCRIPT_FILE = /\.(?:js|jsx|ts|tsx|mts)$/;

export interface ResolveResult {
  url: string;
  format?: string | null;
  shortCircuit?: boolean;
  importAttributes?: unknown;
}
export interface LoadResult {
  format?: string | null;
  source?: string | ArrayBuffer | ArrayBufferView | null;
  shortCircuit?: boolean;
}

function isLoopx(specifier: string): boolean {
  return specifier === "loopx" || specifier.startsWith("loopx/");
}

function notFound(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code;
  return code === "ERR_MODULE_NOT_FOUND" || code === "ERR_UNSUPPORTED_DIR_IMPORT";
}

const EXTENSIONS = [".ts", ".tsx", ".js", ".jsx"];

/** Other specifiers to try, in order, when a relative or absolute specifier was not found. */
function alternatives(specifier: string): string[] {
  if (!/^(?:\.{1,2}\/|\/|file:)/.test(specifier) && specifier !== "." && specifier !== "..") return [];
  const query = specifier.search(/[?#]/);
  const [path, suffix] = query < 0 ? [specifier, ""] : [specifier.slice(0, query), specifier.slice(query)];
  const swap = /\.(js|jsx|mjs)$/.exec(path);
  if (swap) {
    const stem = path.slice(0, -swap[0].length);
    const targets = swap[1] === "js" ? [".ts", ".tsx"] : swap[1] === "jsx" ? [".tsx"] : [".mts"];
    return targets.map((ext) => stem + ext + suffix);
  }
  if (/\.[A-Za-z0-9]+$/.test(path.slice(path.lastIndexOf("/") + 1))) return [];
  const base = path.endsWith("/") ? path.slice(0, -1) : path;
  return [...EXTENSIONS.map((ext) => base + ext + suffix), ...EXTENSIONS.map((ext) => `${base}/index${ext}${suffix}`)];
}

/** What one call of Node's next resolve gave: its result, or the error saying the specifier was not found. */
export type Attempt = ResolveResult | { notFound: unknown };

/** A not-found error as an Attempt; any other error is thrown on. */
export function notFoundAttempt(error: unknown): Attempt {
  if (!notFound(error)) throw error;
  return { notFound: error };
}

/** Calls a synchronous next resolve, as an Attempt. */
export function attempt(resolve: () => ResolveResult): Attempt {
  try {
    return resolve();
  } catch (error) {
    return notFoundAttempt(error);
  }
}

/**
 * The resolution both hooks run, written once: it yields each specifier to try with Node's next
 * resolve and is given what that call did; it returns the result, or throws the first not-found
 * error. The synchronous and the asynchronous hooks only drive it.
 */
export function* resolutionSteps(specifier: string): Generator<string, ResolveResult, Attempt> {
  const first = yield specifier;
  if (!("notFound" in first)) return withFormat(first);
  if (specifier === "loopx") return { url: OWN_ENTRY, format: "module", shortCircuit: true };
  if (!isLoopx(specifier)) {
    for (const candidate of alternatives(specifier)) {
      const again = yield candidate;
      if (!("notFound" in again)) return withFormat(again);
    }
  }
  throw first.notFound;
}

/** Script files and their local modules outside node_modules are ES modules, whatever package.json says. */
function withFormat(resolved: ResolveResult): ResolveResult {
  const { url } = resolved;
  if (url.startsWith("file:") && !url.includes("/node_modules/") && SCRIPT_FILE.test(url.replace(/[?#].*$/s, ""))) {
    return { ...resolved, format: "module" };
  }
  return resolved;
}

/** The transformed module for a TypeScript/JSX file URL, or undefined for everything else. */
export function loadTransformed(url: string): LoadResult | undefined {
  if (!url.startsWith("file:")) return undefined;
  const path = fileURLToPath(url);
  if (!TRANSFORMED.test(path)) return undefined;
  return { format: "module", source: transformFile(path, fs.readFileSync(path, "utf8")), shortCircuit: true };
}
