// Builds standalone loopx binaries with `bun build --compile` into dist/bin/, plus SHA256SUMS.
// Usage: node scripts/build-binaries.mjs            all four targets (macOS + Linux, x64 + arm64)
//        node scripts/build-binaries.mjs --host     only this machine's target (what CI tests)
// Cross-compiling works: Bun fetches each target's runtime from the npm registry.
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { writeDashboardAssets } from "./dashboard-assets.mjs";
import { packWorkflows } from "./pack-workflows.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const bun = join(root, "node_modules", ".bin", "bun");
const outDir = join(root, "dist", "bin");
const version = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version;

const ALL = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"];
const hostArch = process.arch === "arm64" ? "arm64" : "x64";
const targets = process.argv.includes("--host") ? [`${process.platform}-${hostArch}`] : ALL;

function run(args) {
  execFileSync(bun, args, { cwd: root, stdio: ["ignore", "ignore", "inherit"] });
}

// The helper package scripts import as "loopx" (src/script.ts) and the two preloads, bundled to single files
// and embedded in the binary as strings (materialized on disk at run time, see
// src/runtime/platform/standalone.ts).
const work = join(root, `dist.binaries-${process.pid}`);
writeDashboardAssets(); // the dashboard's page, bundled as a module of strings
mkdirSync(work, { recursive: true });
try {
  run(["build", "src/script.ts", "--target=bun", "--format=esm", "--minify", "--define", "__LOOPX_BUN_BUNDLE__=true", "--outfile", join(work, "helpers.js")]);
  run(["build", "src/runtime/loader/bun-preload.ts", "--target=bun", "--format=esm", "--minify", "--outfile", join(work, "preload.js")]);
  run(["build", "src/runtime/loader/standalone-env-preload.ts", "--target=bun", "--format=esm", "--minify", "--outfile", join(work, "env-preload.js")]);
  // The shipped workflows (`loopx install --builtin`), the same archive as the npm package's.
  await packWorkflows(join(work, "workflows.tar.gz"));
  const defines = {
    __LOOPX_VERSION__: version,
    __LOOPX_HELPERS_JS__: readFileSync(join(work, "helpers.js"), "utf8"),
    __LOOPX_PRELOAD_JS__: readFileSync(join(work, "preload.js"), "utf8"),
    __LOOPX_ENV_PRELOAD_JS__: readFileSync(join(work, "env-preload.js"), "utf8"),
  };
  // The archive is too large for one argument (Linux caps each at 128 KiB): a module of the entry
  // sets it on globalThis before bin.ts runs, and the define names that.
  writeFileSync(join(work, "workflows-archive.js"), `globalThis.__loopxWorkflowsTgz = ${JSON.stringify(readFileSync(join(work, "workflows.tar.gz")).toString("base64"))};\n`);
  writeFileSync(join(work, "entry.ts"), `import "./workflows-archive.js";\nimport ${JSON.stringify(join(root, "src", "bin.ts"))};\n`);
  const defineArgs = [...Object.entries(defines).flatMap(([name, value]) => ["--define", `${name}=${JSON.stringify(value)}`]), "--define", "__LOOPX_WORKFLOWS_TGZ__=globalThis.__loopxWorkflowsTgz"];

  mkdirSync(outDir, { recursive: true });
  for (const target of targets) {
    const name = `loopx-${target}`;
    const temp = join(work, name);
    // --bytecode: precompiled JS, ~20 ms less start-up for every `loopx` and `$LOOPX_BIN output`.
    run(["build", join(work, "entry.ts"), "--compile", "--minify", "--bytecode", "--format=esm", `--target=bun-${target}`, ...defineArgs, "--outfile", temp]);
    renameSync(temp, join(outDir, name));
    console.log(`built dist/bin/${name}`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}

// Checksums for every binary present, in `sha256sum -c` format.
const sums = ALL.map((target) => `loopx-${target}`)
  .filter((name) => existsSync(join(outDir, name)))
  .map((name) => `${createHash("sha256").update(readFileSync(join(outDir, name))).digest("hex")}  ${name}`);
writeFileSync(join(outDir, "SHA256SUMS"), sums.join("\n") + "\n");
console.log("wrote dist/bin/SHA256SUMS");
