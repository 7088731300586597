// Builds the npm package into dist/: ESM JavaScript and .d.ts from src/ via tsc, the Node script
// loader's two entry points bundled into one file each, plus the NODE_PATH shim, plus dist/workflows.tar.gz (the example workflows as an installable source).
// Builds into a fresh directory and swaps it in, so a test run that is reading dist/ at the same
// moment never sees a half-written tree.
import { chmodSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { packWorkflows } from "./pack-workflows.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const out = join(root, `dist.build-${process.pid}`);
const dist = join(root, "dist");
try {
  execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", join(root, "tsconfig.json"), "--outDir", out], {
    stdio: "inherit",
  });
  chmodSync(join(out, "bin.js"), 0o755);
  bundleLoader(join(out, "runtime", "loader"));

  // A two-file `loopx` package for Bun's NODE_PATH (spec §3.3): scripts under Bun resolve
  // `import "loopx"` to it, and it re-exports this package. Bun needs `main` for NODE_PATH packages.
  const shim = join(out, "node-path", "loopx");
  mkdirSync(shim, { recursive: true });
  const shimPackage = { name: "loopx", private: true, type: "module", main: "./index.js", exports: { ".": "./index.js" } };
  writeFileSync(join(shim, "package.json"), JSON.stringify(shimPackage, null, 2) + "\n");
  writeFileSync(join(shim, "index.js"), 'export * from "../../index.js";\n');

  // The ralph and converge workflows as a multi-workflow source: `loopx install <url of it>`.
  await packWorkflows(join(out, "workflows.tar.gz"));

  // Keep anything else that lives in dist/ (dist/bin/ standalone binaries) across rebuilds.
  if (existsSync(join(dist, "bin"))) renameSync(join(dist, "bin"), join(out, "bin"));
  const old = join(root, `dist.old-${process.pid}`);
  if (existsSync(dist)) renameSync(dist, old);
  renameSync(out, dist);
  rmSync(old, { recursive: true, force: true });
} catch (error) {
  rmSync(out, { recursive: true, force: true });
  console.error(`build failed: ${error instanceof Error ? error.message.split("\n")[0] : error}`);
  process.exit(1);
}

/**
 * Every JS/TS script process under Node preloads runtime/loader/register.js (and, on Node without
 * module.registerHooks, its hooks thread loads hooks.js). As tsc emits them they are five ES
 * modules each, and every extra module costs the script process resolving, reading, compiling and
 * linking (~2 ms of CPU per iteration on Node 26). So each entry is rewritten in place as one
 * bundle of what it imports — same path, so its import.meta.url-relative paths (package.json,
 * index.js, hooks.js) still hold. Built-ins and esbuild itself (loaded only on a transform-cache
 * miss, through createRequire) stay outside. The esbuild is tsx's own, as in transform.ts.
 */
function bundleLoader(dir) {
  const require = createRequire(import.meta.url);
  const esbuild = createRequire(require.resolve("tsx/package.json"))("esbuild");
  for (const entry of ["register.js", "hooks.js"]) {
    esbuild.buildSync({
      entryPoints: [join(dir, entry)],
      outfile: join(dir, entry),
      allowOverwrite: true,
      bundle: true,
      format: "esm",
      platform: "node",
      target: "node20.6",
      external: ["node:*"],
      absWorkingDir: dir,
      legalComments: "none",
      logLevel: "error",
    });
  }
}
