/**
 * TypeScript/JSX → JavaScript for scripts run under Node, with a loopx-owned cache (spec §6.3: what
 * tsx does, without loading tsx or esbuild into a script process when the cache has the answer).
 *
 * An entry is the transformed module, keyed by a 106-bit hash of loopx's version, the transform
 * settings (esbuildOptions() below, which include the workflow's tsconfig.json) and the source
 * itself, so an edited script or tsconfig is a different key. Entries live in
 * `$XDG_CACHE_HOME/loopx/transform/` (default `~/.cache/loopx/transform/`), each written to a temp
 * file and renamed into place. An entry holds the exact source it was made from, compared on
 * every hit (never stale code, whatever the hash), and a checksum of the code: a truncated or
 * garbage entry is a miss and is rewritten. Every cache failure (unreadable, read-only, full disk)
 * degrades to transforming in memory, never to an error. Bounded: a write that takes the directory
 * over MAX_ENTRIES or MAX_BYTES removes the oldest entries.
 *
 * Synchronous throughout, so the same code serves module.registerHooks() (in-thread) and
 * module.register() (hooks thread, Node < 22.15).
 */
import { basename, dirname, extname, join } from "node:path";
import { writeFileAtomic } from "../../os/atomic-write.js";
import { fs, nodeModule } from "../../os/builtins.js";
import { loopxDir } from "../../os/xdg.js";
import { reportedError, syntaxErrorOf } from "./syntax-report.js";

const { mkdirSync, readFileSync, readdirSync, rmSync, statSync } = fs;

/** loopx's version, from its package.json (dist/runtime/loader/ is three levels below it). */
const VERSION = (JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as { version: string }).version;

const LOADERS: Record<string, "ts" | "tsx" | "jsx"> = { ".ts": "ts", ".mts": "ts", ".tsx": "tsx", ".jsx": "jsx" };
/** Files loopx transforms: TypeScript and JSX (plain .js/.mjs runs as Node loads it). */
export const TRANSFORMED = /\.(?:ts|mts|tsx|jsx)$/;

const MAX_ENTRIES = 2000;
const MAX_BYTES = 64 * 1024 * 1024;

/** The tsconfig.json that applies: the nearest one from the script's cwd (the workflow directory) up, as tsx finds it. */
function findTsconfig(from: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    try {
      return readFileSync(join(dir, "tsconfig.json"), "utf8");
    } catch {
      // not here (or unreadable): keep looking upwards
    }
    if (dirname(dir) === dir) return undefined;
  }
}

let tsconfigRaw: string | undefined | null = null;
function workflowTsconfig(): string | undefined {
  if (tsconfigRaw === null) tsconfigRaw = findTsconfig(process.cwd());
  return tsconfigRaw;
}

/**
 * Every setting that shapes the transformed code, in one place. JSX: classic
 * `React.createElement` by default (what tsx does), unless the workflow's tsconfig.json (`jsx`,
 * `jsxFactory`, `jsxFragmentFactory`, `jsxImportSource`) or a pragma in the file says otherwise.
 * esbuild reads tsconfig's JSON-with-comments text itself; `extends` is not followed.
 */
function esbuildOptions(path: string): { loader: "ts" | "tsx" | "jsx"; format: "esm"; sourcemap: "inline"; sourcefile: string; tsconfigRaw?: string } {
  const raw = workflowTsconfig();
  return {
    loader: LOADERS[extname(path)] ?? "ts",
    format: "esm",
    sourcemap: "inline",
    sourcefile: sourceName(path),
    ...(raw === undefined ? {} : { tsconfigRaw: raw }),
  };
}

/**
 * The file name alone where it reads the same as a URL: Node resolves a source map's relative
 * source against the module's own URL, so stack traces still name the full path, and the same
 * script in another directory (a worktree, another project) is the same cache entry. Other names
 * (a space, `#`, `%`) keep their full path.
 */
function sourceName(path: string): string {
  const name = basename(path);
  return /^[\w.-]+$/.test(name) ? name : path;
}

function cacheDirectory(): string {
  return join(loopxDir("cache"), "transform");
}

/**
 * Two 53-bit string hashes (cyrb53 with two seeds) as 28 hex digits. Not cryptographic, and need
 * not be: a hit is confirmed by comparing the stored source. Loading node:crypto would cost a
 * script process ~3 ms per iteration.
 */
export function hash(text: string): string {
  let out = "";
  for (const seed of [0x9e3779b9, 0x85ebca6b]) {
    let h1 = 0xdeadbeef ^ seed;
    let h2 = 0x41c6ce57 ^ seed;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 2654435761);
      h2 = Math.imul(h2 ^ c, 1597334677);
    }
    h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
    h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
    out += (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, "0");
  }
  return out;
}

/** esbuild's marker for a module body it had to wrap because the file uses module/exports. */
const COMMONJS_SHIM = "__commonJS(";

let esbuild: { transformSync(source: string, options: object): { code: string } } | undefined;

function transformNow(path: string, source: string, options: ReturnType<typeof esbuildOptions>): string {
  // The esbuild tsx itself depends on (tsx is loopx's dependency; esbuild is tsx's), resolved from
  // tsx's own package so that it is exactly the compiler tsx would use, however npm laid it out.
  esbuild ??= nodeModule.createRequire(nodeModule.createRequire(import.meta.url).resolve("tsx/package.json"))("esbuild") as NonNullable<typeof esbuild>;
  let code: string;
  try {
    code = esbuild.transformSync(source, options).code;
  } catch (failure) {
    throw syntaxErrorOf(failure, path);
  }
  if (code.includes(COMMONJS_SHIM)) throw reportedError(`${path} uses CommonJS (module.exports / exports): loopx scripts are ES modules, use import/export`);
  return code;
}

/**
 * An entry: `loopx-transform <source length> <code length> <code hash>\n`, the source, the code.
 * Returns the code if the entry is whole and was made from exactly `source`, else undefined
 * (missing, unreadable, truncated, garbage, or a hash collision).
 */
function readEntry(file: string, source: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  const newline = text.indexOf("\n");
  const header = /^loopx-transform (\d+) (\d+) ([0-9a-f]{28})$/.exec(text.slice(0, newline));
  if (!header || Number(header[1]) !== source.length || newline + 1 + source.length + Number(header[2]) !== text.length) return undefined;
  if (text.slice(newline + 1, newline + 1 + source.length) !== source) return undefined;
  const code = text.slice(newline + 1 + source.length);
  return hash(code) === header[3] ? code : undefined;
}

function writeEntry(dir: string, file: string, source: string, code: string): void {
  try {
    mkdirSync(dir, { recursive: true });
    writeFileAtomic(file, `loopx-transform ${source.length} ${code.length} ${hash(code)}\n${source}${code}`);
  } catch {
    return;
  }
  prune(dir);
}

/** Keeps the cache within MAX_ENTRIES and MAX_BYTES by removing the oldest entries (and stale temp files). */
export function prune(dir: string, maxEntries = MAX_ENTRIES, maxBytes = MAX_BYTES): void {
  try {
    // Runs only after a miss, which has just paid for esbuild: a stat per entry is small beside it.
    const names = readdirSync(dir);
    const entries: { path: string; size: number; mtime: number }[] = [];
    let total = 0;
    for (const name of names) {
      try {
        const stat = statSync(join(dir, name));
        entries.push({ path: join(dir, name), size: stat.size, mtime: stat.mtimeMs });
        total += stat.size;
      } catch {
        // removed by a concurrent prune
      }
    }
    if (entries.length <= maxEntries && total <= maxBytes) return;
    entries.sort((a, b) => a.mtime - b.mtime);
    // Down to three quarters of either bound, so the next writes do not prune again at once.
    let count = entries.length;
    for (const entry of entries) {
      if (count <= (maxEntries * 3) / 4 && total <= (maxBytes * 3) / 4) break;
      rmSync(entry.path, { force: true });
      count--;
      total -= entry.size;
    }
  } catch {
    // an unreadable cache directory is not loopx's problem to report
  }
}

/** The JavaScript for the TypeScript/JSX file at `path` whose text is `source`: from the cache, else transformed and cached. */
export function transformFile(path: string, source: string): string {
  const options = esbuildOptions(path);
  const key = hash(`${VERSION}\0${JSON.stringify(options)}\0${source}`);
  const dir = cacheDirectory();
  const file = join(dir, `${key}.js`);
  const hit = readEntry(file, source);
  if (hit !== undefined) return hit;
  const code = transformNow(path, source, options);
  writeEntry(dir, file, source, code);
  return code;
}
