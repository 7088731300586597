// `npm run release:check`: checks what a release would publish, after `npm run build` and
// `npm run build:binaries`. The release workflow runs it before anything is published.
//
//   - `npm pack` into a temp dir: the tarball holds exactly package.json, README.md, LICENSE and the
//     built JavaScript, declarations, NODE_PATH shim and the shipped workflows (dist/workflows.tar.gz;
//     no sources, tests, source maps, binaries);
//   - `bin`, `main`, `types` and every `exports` target resolve to files inside the tarball, and the
//     packed `loopx version` prints package.json's version;
//   - LICENSE is the licence package.json names;
//   - dist/bin: each standalone binary has its target's header (ELF/Mach-O, architecture), the one
//     for this machine runs and prints the version, SHA256SUMS lists each with its digest;
//   - package.json's repository.url names a GitHub repository, packed as is, and with
//     --repository the publishing one (npm provenance checks it; the Action downloads from it);
//
// Usage: node scripts/release-check.mjs [--host-only] [--binaries <dir>] [--repository <owner/name>]
//   --host-only       only this machine's binary is required (what `npm test` builds); the others
//                     are checked when present and reported as skipped when not
//   --binaries <dir>  the binaries' directory (default dist/bin)
//   --repository <owner/name>  the repository that publishes (the release passes GITHUB_REPOSITORY)
// Prints one line per check and exits 1 when any fails.
import { createHash } from "node:crypto";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import * as tar from "tar";
import { HOST_TARGET, TARGET_FORMATS, binaryFormat } from "./binary-format.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const { values: options } = parseArgs({
  options: { "host-only": { type: "boolean", default: false }, binaries: { type: "string", default: join(root, "dist", "bin") }, repository: { type: "string" } },
});
const binDir = resolve(options.binaries);
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));

/**
 * Exactly what the npm package ships, as a rule over the files `npm run build` writes: a file of
 * dist/ (outside dist/bin/) is shipped when it matches, and every file shipped must match.
 */
const SHIPPED_TOP_LEVEL = ["package.json", "README.md", "LICENSE"];
const shipsFromDist = (path) =>
  !path.startsWith("dist/bin/") && (/\.(js|d\.ts)$/.test(path) || path.startsWith("dist/node-path/") || path === "dist/workflows.tar.gz");

/** The first words of each licence text package.json's `license` may name. */
const LICENCE_TEXTS = {
  MIT: ["MIT License", "Permission is hereby granted, free of charge, to any person obtaining a copy"],
};

let failures = 0;
let passes = 0;
function check(ok, what, why = "") {
  if (ok) passes += 1;
  else failures += 1;
  console.log(`${ok ? "ok  " : "FAIL"} ${what}${!ok && why ? `: ${why}` : ""}`);
}
const skip = (what, why) => console.log(`skip ${what}: ${why}`);

/** @returns {[string, ...string[]]} */
function npmCommand() {
  const execPath = process.env.npm_execpath;
  if (execPath && /npm-cli\.js$/.test(execPath)) return [process.execPath, execPath];
  const besideNode = join(dirname(process.execPath), "..", "lib", "node_modules", "npm", "bin", "npm-cli.js");
  return existsSync(besideNode) ? [process.execPath, besideNode] : ["npm"];
}

function listFiles(dir, base = dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? listFiles(path, base) : [relative(base, path).split(sep).join("/")];
  });
}

/** Every string target in an `exports` map, with the subpath/condition path that leads to it. */
function exportTargets(value, at = "exports") {
  if (typeof value === "string") return [[at, value]];
  if (value && typeof value === "object") return Object.entries(value).flatMap(([key, inner]) => exportTargets(inner, `${at}[${JSON.stringify(key)}]`));
  return [];
}

function checkPackage(work) {
  if (!existsSync(join(root, "dist", "bin.js"))) {
    check(false, "npm package", "dist/ is not built: run `npm run build` first");
    return;
  }
  const [npmExe, ...npmArgs] = npmCommand();
  const packed = JSON.parse(
    execFileSync(npmExe, [...npmArgs, "pack", "--json", "--pack-destination", work, "--loglevel=error"], {
      cwd: root,
      encoding: "utf8",
      env: { ...process.env, npm_config_update_notifier: "false" },
    }),
  )[0];
  const tarball = join(work, packed.filename);
  check(packed.name === pkg.name && packed.version === pkg.version, `packed ${packed.filename}`, `npm pack made ${packed.name}@${packed.version}`);

  // Exactly the expected files: the rule applied to dist/, compared with npm's own listing.
  const expected = [...SHIPPED_TOP_LEVEL, ...listFiles(join(root, "dist")).map((f) => `dist/${f}`).filter(shipsFromDist)].sort();
  const shipped = packed.files.map((f) => f.path).sort();
  const extra = shipped.filter((f) => !expected.includes(f));
  const missing = expected.filter((f) => !shipped.includes(f));
  check(
    extra.length === 0 && missing.length === 0,
    `tarball ships exactly ${expected.length} files (package.json, README.md, LICENSE, dist JS + .d.ts + NODE_PATH shim + workflows.tar.gz)`,
    [extra.length ? `unexpected ${extra.join(", ")}` : "", missing.length ? `missing ${missing.join(", ")}` : ""].filter(Boolean).join("; "),
  );
  const banned = shipped.filter((f) => /^(src|test|scripts|examples)\//.test(f) || /\.map$/.test(f) || /^dist\/bin\//.test(f) || /\.tgz$/.test(f));
  check(banned.length === 0, "no sources, tests, source maps or binaries in the tarball", banned.join(", "));

  // Unpack and resolve bin, main, types and exports inside the tarball.
  const unpacked = join(work, "unpacked");
  mkdirSync(unpacked);
  tar.x({ file: tarball, cwd: unpacked, sync: true });
  const pkgRoot = join(unpacked, "package");
  const packedJson = JSON.parse(readFileSync(join(pkgRoot, "package.json"), "utf8"));
  const bins = typeof packedJson.bin === "string" ? { [packedJson.name]: packedJson.bin } : packedJson.bin ?? {};
  const entries = [
    ...Object.entries(bins).map(([name, path]) => [`bin.${name}`, path]),
    ["main", packedJson.main],
    ["types", packedJson.types],
    ...exportTargets(packedJson.exports ?? {}),
  ];
  for (const [field, target] of entries) {
    const ok = typeof target === "string" && existsSync(join(pkgRoot, target)) && statSync(join(pkgRoot, target)).isFile();
    check(ok, `${field} -> ${target} resolves inside the tarball`, `${target ?? "(not set)"} is not a file in the packed package`);
  }
  for (const [name, path] of Object.entries(bins)) {
    const head = existsSync(join(pkgRoot, path)) ? readFileSync(join(pkgRoot, path), "utf8").split("\n")[0] : "";
    check(head === "#!/usr/bin/env node", `bin.${name} starts with #!/usr/bin/env node`, `its first line is ${JSON.stringify(head)}`);
  }

  // The packed CLI itself prints the version (dependencies come from this checkout's node_modules).
  const main = bins[pkg.name];
  if (main && existsSync(join(pkgRoot, main))) {
    symlinkSync(join(root, "node_modules"), join(pkgRoot, "node_modules"));
    const result = spawnSync(process.execPath, [join(pkgRoot, main), "version"], { cwd: work, encoding: "utf8", env: cleanEnv(work) });
    check(result.status === 0 && result.stdout === `${pkg.version}\n`, `packed \`loopx version\` prints ${pkg.version}`, `exit ${result.status}, stdout ${JSON.stringify(result.stdout)}, stderr ${JSON.stringify(result.stderr.split("\n")[0])}`);
  }

  // The licence file matches package.json's licence.
  const texts = LICENCE_TEXTS[pkg.license];
  const licence = existsSync(join(pkgRoot, "LICENSE")) ? readFileSync(join(pkgRoot, "LICENSE"), "utf8") : undefined;
  if (!texts) check(false, `LICENSE matches package.json license ${JSON.stringify(pkg.license)}`, "this check knows no text for that licence");
  else check(licence !== undefined && texts.every((t) => licence.includes(t)), `LICENSE is the ${pkg.license} licence package.json names`, licence === undefined ? "no LICENSE in the tarball" : `its text is not the ${pkg.license} licence`);
  check(existsSync(join(pkgRoot, "README.md")), "README.md is in the tarball", "it is missing");
  const packedUrl = repositoryUrl(packedJson);
  check(packedUrl === repositoryUrl(pkg), "the packed package.json has the same repository.url", `it has ${JSON.stringify(packedUrl)}`);
}

/**
 * npm's provenance refuses a package whose `repository.url` is not the repository that publishes
 * it; the GitHub Action finds its release by the same repository (action/binary.mjs). The release
 * fills it from GITHUB_REPOSITORY when package.json has none (release.yml); here it must name a
 * GitHub repository, the packed package.json the same, and with --repository <owner/name> (the
 * release passes GITHUB_REPOSITORY) that very repository.
 */
const repositoryUrl = (json) => (typeof json.repository === "string" ? json.repository : json.repository?.url) ?? "";

function checkRepository() {
  const url = repositoryUrl(pkg);
  const named = /^(?:git\+)?https:\/\/github\.com\/([^/]+\/[^/]+?)(?:\.git)?$/.exec(url)?.[1];
  check(named !== undefined, `package.json repository.url names a GitHub repository (${named ?? "none"})`, url ? `${JSON.stringify(url)} is not git+https://github.com/<owner>/<name>.git` : "it has no repository.url");
  const publishing = options.repository;
  if (!publishing) return skip("repository.url is the publishing repository", "no --repository (the release passes its own)");
  check(
    named !== undefined && named.toLowerCase() === publishing.toLowerCase(),
    `repository.url is the publishing repository ${publishing} (npm provenance checks it)`,
    `it names ${named ?? JSON.stringify(url)}, but the release runs in ${publishing}`,
  );
}

function cleanEnv(home) {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_CACHE_HOME: join(home, ".cache"), LANG: "C.UTF-8" };
}

function checkBinaries(work) {
  const sumsPath = join(binDir, "SHA256SUMS");
  const sums = existsSync(sumsPath) ? readFileSync(sumsPath, "utf8") : undefined;
  let present = 0;
  for (const [target, format] of Object.entries(TARGET_FORMATS)) {
    const name = `loopx-${target}`;
    const path = join(binDir, name);
    if (!existsSync(path)) {
      if (options["host-only"] && target !== HOST_TARGET) skip(name, `not built (--host-only; \`npm run build:binaries\` builds all four)`);
      else check(false, name, `${path} does not exist: run \`npm run build:binaries\``);
      continue;
    }
    present += 1;
    const actual = binaryFormat(path);
    check(actual === format, `${name} is ${format}`, `it is ${actual}`);
    const digest = createHash("sha256").update(readFileSync(path)).digest("hex");
    check(sums?.split("\n").includes(`${digest}  ${name}`), `SHA256SUMS lists ${name} with its digest`, sums === undefined ? "no SHA256SUMS" : "no matching line");
    if (target === HOST_TARGET) {
      const result = spawnSync(path, ["version"], { cwd: work, encoding: "utf8", env: cleanEnv(work), timeout: 60_000 });
      check(result.status === 0 && result.stdout === `${pkg.version}\n`, `${name} version prints ${pkg.version}`, `exit ${result.status ?? result.signal}, stdout ${JSON.stringify(result.stdout)}`);
    } else {
      skip(`${name} version`, `a ${format} binary does not run on ${HOST_TARGET}; the release runs it on its own runner`);
    }
  }
  if (sums !== undefined) {
    const listed = sums.split("\n").filter(Boolean).length;
    check(listed === present, `SHA256SUMS has one line per binary (${present})`, `it has ${listed}`);
  }
}

/** The workflows archive of `npm run build`: attached to the release when present. */
function checkWorkflowsArchive() {
  const archive = join(root, "dist", "workflows.tar.gz");
  if (!existsSync(archive)) {
    skip("dist/workflows.tar.gz", "not built by `npm run build`; the release attaches it when present");
    return;
  }
  const entries = [];
  try {
    tar.t({ file: archive, sync: true, onReadEntry: (entry) => entries.push(entry.path) });
  } catch (error) {
    check(false, "dist/workflows.tar.gz is a readable tar.gz", error instanceof Error ? error.message.split("\n")[0] : String(error));
    return;
  }
  check(entries.length > 0, `dist/workflows.tar.gz is a readable tar.gz (${entries.length} entries)`, "it is empty");
}

const work = realpathSync(mkdtempSync(join(tmpdir(), "loopx-release-check-")));
try {
  checkRepository();
  checkPackage(work);
  checkBinaries(work);
  checkWorkflowsArchive();
} catch (error) {
  check(false, "release:check", error instanceof Error ? error.message.split("\n")[0] : String(error));
} finally {
  rmSync(work, { recursive: true, force: true });
}
console.log(failures > 0 ? `release:check failed: ${failures} of ${passes + failures} checks` : `release:check ok: all ${passes} checks`);
process.exit(failures > 0 ? 1 : 0);
