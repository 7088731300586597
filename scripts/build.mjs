// Builds the npm package into dist/: ESM JavaScript and .d.ts from src/ via tsc.
import { chmodSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
rmSync(new URL("../dist", import.meta.url), { recursive: true, force: true });
execFileSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, "-p", `${root}tsconfig.json`], { stdio: "inherit" });
chmodSync(new URL("../dist/bin.js", import.meta.url), 0o755);

// A two-file `loopx` package for Bun's NODE_PATH (spec §3.3): scripts under Bun resolve
// `import "loopx"` to it, and it re-exports this package. Bun needs `main` for NODE_PATH packages.
const shim = new URL("../dist/node-path/loopx/", import.meta.url);
mkdirSync(shim, { recursive: true });
writeFileSync(new URL("package.json", shim), JSON.stringify({ name: "loopx", private: true, type: "module", main: "./index.js", exports: { ".": "./index.js" } }, null, 2) + "\n");
writeFileSync(new URL("index.js", shim), 'export * from "../../index.js";\n');
