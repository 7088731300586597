/**
 * Preloaded (`bun --preload`) into every JS/TS script loopx runs under Bun (or the standalone
 * binary) that may use CommonJS — one whose source names require, module or exports. Bun happily runs
 * CommonJS, but loopx scripts must be ES modules and `require`/`module.exports`/`exports` must fail
 * (spec §6.3). For the script file itself, this plugin appends `export {}` (so Bun never treats it
 * as CommonJS: `module` and `exports` are then undefined) and, unless the script declares its own
 * `require`, a hoisted `require` that throws. Appending keeps line numbers in errors intact.
 */
// A standalone loopx binary starts scripts as itself with BUN_BE_BUN=1 (a no-op under Bun itself).
import "./standalone-env-preload.js";

interface BunRuntime {
  main: string;
  file(path: string): { text(): Promise<string> };
  plugin(plugin: { name: string; setup(build: { onLoad(options: { filter: RegExp }, callback: (args: { path: string }) => Promise<{ contents: string; loader: string }>): void }): void }): void;
}
const bun = (globalThis as unknown as { Bun: BunRuntime }).Bun;

/** True if the source binds `name` itself (declaration, import or destructuring). */
function declares(source: string, name: string): boolean {
  return new RegExp(`(?:\\b(?:const|let|var|function|class)\\s+|\\bimport\\s+|[{,]\\s*(?:[\\w$]+\\s*:\\s*|[\\w$]+\\s+as\\s+)?)${name}\\b`).test(source);
}

const THROWING_REQUIRE =
  'function require() { throw new ReferenceError("require is not defined: loopx scripts are ES modules, use import"); }\n';

bun.plugin({
  name: "loopx-scripts-are-esm",
  setup(build) {
    // Only the script itself: the filter matches exactly its path (onLoad must return contents).
    const onlyMain = new RegExp(`^${bun.main.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`);
    build.onLoad({ filter: onlyMain }, async ({ path }) => {
      const source = await bun.file(path).text();
      let tail = "\nexport {};\n";
      if (/\brequire\b/.test(source) && !declares(source, "require")) tail += THROWING_REQUIRE;
      return { contents: source + tail, loader: path.slice(path.lastIndexOf(".") + 1) }; // Bun's loader names are the script extensions (js, jsx, ts, tsx)
    });
  },
});
