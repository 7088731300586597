// Installs the agent CLIs the tests drive for real, from two packages under test/agent-clis/:
// - locked/ (Claude Code, Codex, Copilot, Gemini CLI, Pi): `npm ci` from its lock file. They are not
//   the project's devDependencies because they are ~1 GB unpacked: `npm ci` of the project would
//   unpack them before the type checks could start, where CI installs them in the background.
// - the top one (opencode, Qwen Code): their packages list optional per-platform packages that the
//   npm registry does not carry, so a lock file cannot hold them and `npm ci` would refuse it:
//   `npm install` (versions pinned exactly), which skips a missing optional package.
// The two install side by side (different directories; npm's cache takes concurrent installs).
// `npm test` runs this; it does nothing once every pinned CLI is installed at its version.
// Usage: node scripts/agent-clis.mjs
import { spawn } from "node:child_process";
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

/** npm, as the one running this script when there is one (npm test), else the one on PATH; rejects on failure. */
function npm(dir, args) {
  const own = process.env.npm_execpath;
  const [command, prefix] = own ? [process.execPath, [own]] : ["npm", []];
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...prefix, ...args, "--no-audit", "--no-fund"], { cwd: dir, stdio: "inherit" });
    child.on("error", reject);
    child.on("close", (code, signal) => (code === 0 ? resolve(undefined) : reject(new Error(`npm ${args[0]} in ${dir} failed (${signal ?? `exit ${code}`})`))));
  });
}

const installs = [];
if (!installed(locked)) installs.push(npm(locked, ["ci"]));
if (!installed(top)) installs.push(npm(top, ["install", "--no-package-lock"]));
const failed = (await Promise.allSettled(installs)).filter((outcome) => outcome.status === "rejected");
if (failed.length > 0) {
  for (const { reason } of failed) console.error(`agent CLIs: ${reason instanceof Error ? reason.message : String(reason)}`);
  process.exit(1);
}
console.log(`agent CLIs: ${join(locked, "node_modules", ".bin")} ${join(top, "node_modules", ".bin")}`);
