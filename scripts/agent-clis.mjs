// Installs the agent CLIs of test/agent-clis/package.json (opencode, Qwen Code) into
// test/agent-clis/node_modules. Their packages list optional per-platform packages that the npm
// registry does not carry, so a lock file cannot hold them and `npm ci` of the project would refuse
// it: they live in their own package, installed with `npm install` (versions pinned exactly), which
// skips a missing optional package. `npm test` runs this; it does nothing once they are installed.
// Usage: node scripts/agent-clis.mjs
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const dir = fileURLToPath(new URL("../test/agent-clis/", import.meta.url));

/** Whether every pinned CLI is installed at its pinned version. */
function installed() {
  const wanted = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).devDependencies;
  return Object.entries(wanted).every(([name, version]) => {
    const manifest = join(dir, "node_modules", name, "package.json");
    return existsSync(manifest) && JSON.parse(readFileSync(manifest, "utf8")).version === version;
  });
}

if (!installed()) {
  const npm = process.env.npm_execpath;
  const [command, args] = npm ? [process.execPath, [npm]] : ["npm", []];
  execFileSync(command, [...args, "install", "--no-package-lock", "--no-audit", "--no-fund"], { cwd: dir, stdio: "inherit" });
}
console.log(`agent CLIs: ${dir}node_modules/.bin`);
