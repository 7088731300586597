// Installs the agent CLIs the tests drive for real, from two packages under test/agent-clis/:
// - locked/ (Claude Code, Codex, Copilot, Gemini CLI, Pi): `npm ci` from its lock file. They are not
//   the project's devDependencies because they are ~1 GB unpacked: `npm ci` of the project would
//   unpack them before the type checks could start, where CI installs them in the background.
// - the top one (opencode, Qwen Code): their packages list optional per-platform packages that the
//   npm registry does not carry, so a lock file cannot hold them and `npm ci` would refuse it:
//   `npm install` (versions pinned exactly), which skips a missing optional package.
// `npm test` runs this; it does nothing once every pinned CLI is installed at its version.
// Usage: node scripts/agent-clis.mjs
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const top = fileURLToPath(new URL("../test/agent-clis/", import.meta.url));
const locked = join(top, "locked");

/** Whether every CLI pinned in `dir`'s package.json is installed at its pinned version. */
function installed(dir) {
  const wanted = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).devDependencies;
  return Object.entries(wanted).every(([name, version]) => {
    const manifest = join(dir, "node_modules", name, "package.json");
    return existsSync(manifest) && JSON.parse(readFileSync(manifest, "utf8")).version === version;
  });
}

/** npm, as the one running this script when there is one (npm test), else the one on PATH. */
function npm(dir, args) {
  const own = process.env.npm_execpath;
  const [command, prefix] = own ? [process.execPath, [own]] : ["npm", []];
  execFileSync(command, [...prefix, ...args, "--no-audit", "--no-fund"], { cwd: dir, stdio: "inherit" });
}

if (!installed(locked)) npm(locked, ["ci"]);
if (!installed(top)) npm(top, ["install", "--no-package-lock"]);
console.log(`agent CLIs: ${join(locked, "node_modules", ".bin")} ${join(top, "node_modules", ".bin")}`);
