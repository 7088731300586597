// Builds the npm package into dist/: ESM JavaScript and .d.ts from src/ via tsc, plus the
// NODE_PATH shim, plus dist/workflows.tar.gz (the example workflows as an installable source).
// Builds into a fresh directory and swaps it in, so a test run that is reading dist/ at the same
// moment never sees a half-written tree.
import { chmodSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
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
