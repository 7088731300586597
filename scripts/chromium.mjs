// The browser the dashboard tests drive (test/e2e/dashboard/dashboard-browser.test.ts, the dashboard bench):
// Debian's Chromium at /usr/bin/chromium, installed with apt-get when missing (as root, on a
// Debian-like Linux). Used by .ci/run and by the tests' own set-up.
// Usage: node scripts/chromium.mjs    prints the browser's path, or one line why there is none (exit 1)
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const CHROMIUM = "/usr/bin/chromium";

/** The path of Chromium, installing it first when missing; throws a one-line reason if it cannot. */
export function ensureChromium() {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  if (process.platform !== "linux" || !existsSync("/usr/bin/apt-get")) throw new Error(`no Chromium at ${CHROMIUM}, and no apt-get to install it`);
  if (process.getuid?.() !== 0) throw new Error(`no Chromium at ${CHROMIUM}: install it with 'sudo apt-get install -y chromium'`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  execFileSync("apt-get", ["update"], { stdio: ["ignore", "ignore", "inherit"], env });
  execFileSync("apt-get", ["install", "-y", "--no-install-recommends", "chromium"], { stdio: ["ignore", "ignore", "inherit"], env });
  if (!existsSync(CHROMIUM)) throw new Error(`apt-get installed chromium, but there is no ${CHROMIUM}`);
  return CHROMIUM;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    console.log(ensureChromium());
  } catch (error) {
    console.error(`chromium: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
