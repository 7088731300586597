// What `npm install -g` of the packed package puts on a machine: `npm pack` of a checkout (dist/
// built), installed into a fresh prefix, then measured — its size on disk, every package in it and
// where, any package present twice (two copies of one name: npm nests them when two ranges do not
// meet). Used by the bench (install size beside its target, this build and --before) and by
// test/e2e/package/package-lean.test.ts (the check CI runs).
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** The target: an install of at most this many bytes (20 MB). */
export const INSTALL_TARGET_BYTES = 20 * 1000 * 1000;

const NPM_CLI = join(dirname(process.execPath), "..", "lib", "node_modules", "npm", "bin", "npm-cli.js");

/** Runs npm (the one beside this Node when there is one), quietly; returns its stdout. */
export function npm(args, cwd) {
  const [command, ...prefix] = existsSync(NPM_CLI) ? [process.execPath, NPM_CLI] : ["npm"];
  return execFileSync(command ?? "npm", [...prefix, ...args, "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, npm_config_update_notifier: "false" },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/**
 * `npm pack` of `root`, installed with `npm install -g` into a fresh prefix. `ignoreScripts`: as
 * npm 11 installs a package whose dependency's install script is not allowed (esbuild's postinstall).
 */
export function packAndInstall(root, { ignoreScripts = false } = {}) {
  const work = mkdtempSync(join(tmpdir(), "loopx-install-size-"));
  const name = npm(["pack", "--pack-destination", work], root).trim().split("\n").pop() ?? "";
  const tarball = join(work, name);
  const prefix = join(work, "prefix");
  npm(["install", "-g", "--prefix", prefix, ...(ignoreScripts ? ["--ignore-scripts"] : []), tarball], work);
  return { work, tarball, prefix, packageDir: join(prefix, "lib", "node_modules", "loopx") };
}

/**
 * Bytes under `dir`, links not followed: the files' apparent sizes (as `du -sb`; what the check
 * holds, the same on every file system), or with `blocks` the disk they take (as `du -s`).
 */
export function treeBytes(dir, blocks = false) {
  let bytes = blocks ? lstatSync(dir).blocks * 512 : 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) bytes += treeBytes(path, blocks);
    else bytes += blocks ? lstatSync(path).blocks * 512 : lstatSync(path).size;
  }
  return bytes;
}

/** Every installed package under `dir`'s node_modules (nested ones too): name → the directories holding it. */
export function installedPackages(dir, into = new Map()) {
  const modules = join(dir, "node_modules");
  if (!existsSync(modules)) return into;
  for (const entry of readdirSync(modules)) {
    const scoped = entry.startsWith("@") ? readdirSync(join(modules, entry)).map((name) => `${entry}/${name}`) : [entry];
    for (const name of scoped) {
      const packageDir = join(modules, name);
      if (!existsSync(join(packageDir, "package.json"))) continue;
      const { version } = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));
      into.set(name, [...(into.get(name) ?? []), { dir: packageDir, version }]);
      installedPackages(packageDir, into);
    }
  }
  return into;
}

/** The install under `prefix`: its size, its packages, those present more than once, the OpenTelemetry ones. */
export function installReport(prefix, packageDir) {
  const packages = installedPackages(packageDir);
  return {
    bytes: treeBytes(prefix),
    diskBytes: treeBytes(prefix, true),
    packageBytes: treeBytes(join(packageDir, "dist")),
    packages: packages.size,
    duplicates: [...packages].filter(([, copies]) => copies.length > 1).map(([name, copies]) => `${name} (${copies.map((c) => c.version).join(", ")})`),
    opentelemetry: [...packages.keys()].filter((name) => name.startsWith("@opentelemetry/")),
  };
}
