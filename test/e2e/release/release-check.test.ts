/**
 * `npm run release:check` (scripts/release-check.mjs) and the release's tag check
 * (scripts/check-tag.mjs). The real package passes (with this host's binary, which `npm test`
 * builds; the release itself runs it with all four); copies of the project broken on purpose fail
 * with the line that names what is wrong.
 */
import { copyFileSync, cpSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { NODE, ROOT, runCommand, tempDir } from "../../helpers.js";
import { HOST_TARGET, TARGET_FORMATS, binaryFormat } from "../../../scripts/binary-format.mjs";

const VERSION = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version as string;

async function node(script: string, args: string[], env: Record<string, string> = {}) {
  const result = await runCommand(NODE, [script, ...args], { cwd: ROOT, env: { ...(process.env as Record<string, string>), ...env }, timeoutMs: 120_000 });
  return { code: result.code, stdout: result.stdout, stderr: result.stderr };
}

/** A copy of the project's release inputs (package.json, README, LICENSE, dist/ without binaries, scripts/). */
function projectCopy(edit: (root: string, pkg: Record<string, unknown>) => void = () => {}): string {
  const root = tempDir("loopx-release-copy-");
  for (const file of ["package.json", "README.md", "LICENSE"]) copyFileSync(join(ROOT, file), join(root, file));
  cpSync(join(ROOT, "scripts"), join(root, "scripts"), { recursive: true });
  const binaries = join(ROOT, "dist", "bin");
  cpSync(join(ROOT, "dist"), join(root, "dist"), { recursive: true, filter: (src) => src !== binaries && !src.startsWith(`${binaries}/`) });
  symlinkSync(join(ROOT, "node_modules"), join(root, "node_modules"));
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  edit(root, pkg);
  writeFileSync(join(root, "package.json"), JSON.stringify(pkg, null, 2) + "\n");
  return root;
}

const lines = (stdout: string) => stdout.split("\n").filter(Boolean);

describe.concurrent("npm run release:check", () => {
  it("passes on this checkout: exact file list, bin/main/types/exports resolve, LICENSE, this host's binary prints the version", async ({ expect }) => {
    const result = await node(join(ROOT, "scripts", "release-check.mjs"), ["--host-only"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const out = lines(result.stdout);
    expect(out.filter((line) => line.startsWith("FAIL"))).toEqual([]);
    expect(out).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^ok {3}tarball ships exactly \d+ files/),
        "ok   bin.loopx -> dist/bin.js resolves inside the tarball",
        "ok   main -> ./dist/index.js resolves inside the tarball",
        "ok   types -> ./dist/index.d.ts resolves inside the tarball",
        'ok   exports["."]["import"] -> ./dist/index.js resolves inside the tarball',
        `ok   packed \`loopx version\` prints ${VERSION}`,
        "ok   LICENSE is the MIT licence package.json names",
        `ok   loopx-${HOST_TARGET} version prints ${VERSION}`,
      ]),
    );
    expect(out.at(-1)).toMatch(/^release:check ok: all \d+ checks$/);
  });

  it("fails on a binary of the wrong architecture, one SHA256SUMS does not list, and a missing one", async ({ expect }) => {
    const bins = tempDir("loopx-release-bins-");
    const host = join(ROOT, "dist", "bin", `loopx-${HOST_TARGET}`);
    const wrongArch = HOST_TARGET === "linux-arm64" ? "linux-x64" : "linux-arm64";
    copyFileSync(host, join(bins, `loopx-${HOST_TARGET}`));
    copyFileSync(host, join(bins, `loopx-${wrongArch}`));
    writeFileSync(join(bins, "SHA256SUMS"), `${"0".repeat(64)}  loopx-${HOST_TARGET}\n`);
    const result = await node(join(ROOT, "scripts", "release-check.mjs"), ["--binaries", bins]);
    expect(result.code).toBe(1);
    const fails = lines(result.stdout).filter((line) => line.startsWith("FAIL"));
    expect(fails).toContain(`FAIL loopx-${wrongArch} is ${TARGET_FORMATS[wrongArch]}: it is ${binaryFormat(host)}`);
    expect(fails).toContain(`FAIL SHA256SUMS lists loopx-${HOST_TARGET} with its digest: no matching line`);
    expect(fails).toContain("FAIL SHA256SUMS has one line per binary (2): it has 1");
    expect(fails.some((line) => /^FAIL loopx-darwin-(x64|arm64): .* does not exist: run `npm run build:binaries`$/.test(line))).toBe(true);
    expect(lines(result.stdout).at(-1)).toMatch(/^release:check failed: \d+ of \d+ checks$/);
  });

  it("fails on a package that ships a source map, names a missing bin, and whose LICENSE is not its licence", async ({ expect }) => {
    const root = projectCopy((dir, pkg) => {
      writeFileSync(join(dir, "dist", "index.js.map"), "{}\n");
      pkg.files = [...(pkg.files as string[]), "dist/**/*.map"];
      pkg.bin = { loopx: "dist/missing.js" };
      pkg.license = "Apache-2.0";
    });
    const result = await node(join(root, "scripts", "release-check.mjs"), ["--host-only", "--binaries", join(ROOT, "dist", "bin")]);
    expect(result.code).toBe(1);
    const fails = lines(result.stdout).filter((line) => line.startsWith("FAIL"));
    expect(fails).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^FAIL tarball ships exactly \d+ files .*: unexpected dist\/index\.js\.map$/),
        "FAIL no sources, tests, source maps or binaries in the tarball: dist/index.js.map",
        "FAIL bin.loopx -> dist/missing.js resolves inside the tarball: dist/missing.js is not a file in the packed package",
        'FAIL LICENSE matches package.json license "Apache-2.0": this check knows no text for that licence',
      ]),
    );
  });

  it("fails on a package without a LICENSE file, and before packing when dist/ is not built", async ({ expect }) => {
    const noLicence = projectCopy((dir) => rmSync(join(dir, "LICENSE")));
    const result = await node(join(noLicence, "scripts", "release-check.mjs"), ["--host-only"]);
    expect(result.code).toBe(1);
    expect(lines(result.stdout)).toContain("FAIL LICENSE is the MIT licence package.json names: no LICENSE in the tarball");

    const unbuilt = projectCopy((dir) => rmSync(join(dir, "dist"), { recursive: true }));
    const bare = await node(join(unbuilt, "scripts", "release-check.mjs"), ["--host-only"]);
    expect(bare.code).toBe(1);
    // The first check that needs the package: nothing is packed from an unbuilt tree.
    expect(lines(bare.stdout).find((line) => line.startsWith("FAIL"))).toBe("FAIL npm package: dist/ is not built: run `npm run build` first");
  });
});

describe("scripts/check-tag.mjs (the release's first step)", () => {
  const script = join(ROOT, "scripts", "check-tag.mjs");

  it("accepts v<version>, and writes version and prerelease to $GITHUB_OUTPUT", async () => {
    const output = join(tempDir(), "github-output");
    const result = await node(script, [`v${VERSION}`], { GITHUB_OUTPUT: output });
    expect(result).toEqual({ code: 0, stdout: `check-tag: tag v${VERSION} matches package.json version ${VERSION}\n`, stderr: "" });
    expect(readFileSync(output, "utf8")).toBe(`version=${VERSION}\nprerelease=false\n`);
  });

  it("rejects any other tag with one line, and a missing tag", async () => {
    for (const tag of [VERSION, `v${VERSION}.1`, `v${VERSION}-rc.1`, "latest"]) {
      const result = await node(script, [tag], { GITHUB_OUTPUT: "" });
      expect(result).toEqual({ code: 1, stdout: "", stderr: `check-tag: tag ${tag} does not match package.json version ${VERSION} (expected tag v${VERSION})\n` });
    }
    expect(await node(script, [])).toEqual({ code: 1, stdout: "", stderr: `check-tag: missing tag argument (e.g. v${VERSION})\n` });
  });

  it("marks a prerelease version as a prerelease", async () => {
    const root = tempDir("loopx-tag-");
    mkdirSync(join(root, "scripts"));
    copyFileSync(script, join(root, "scripts", "check-tag.mjs"));
    symlinkSync(join(ROOT, "node_modules"), join(root, "node_modules"));
    writeFileSync(join(root, "package.json"), JSON.stringify({ name: "loopx", version: "1.2.0-rc.1" }));
    const output = join(root, "github-output");
    const result = await node(join(root, "scripts", "check-tag.mjs"), ["v1.2.0-rc.1"], { GITHUB_OUTPUT: output });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("check-tag: tag v1.2.0-rc.1 matches package.json version 1.2.0-rc.1 (prerelease)\n");
    expect(readFileSync(output, "utf8")).toBe("version=1.2.0-rc.1\nprerelease=true\n");
  });
});
