/**
 * npm provenance refuses a package whose repository.url is not the repository that publishes it,
 * and the GitHub Action finds its release by the same repository: `npm run release:check` checks
 * package.json names a GitHub repository, and with --repository (the release passes
 * GITHUB_REPOSITORY) that it is the publishing one.
 */
import { copyFileSync, cpSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "vitest";
import { NODE, ROOT, runCommand, tempDir } from "../../helpers.js";


const lines = (stdout: string) => stdout.split("\n").filter((line) => /repository/.test(line));

/** release:check's repository lines (the binaries are another test's: an empty directory of them here, so none is run). */
async function releaseCheck(root: string, args: string[]) {
  const result = await runCommand(NODE, [join(root, "scripts", "release-check.mjs"), "--host-only", "--binaries", tempDir("loopx-no-binaries-"), ...args], { cwd: root, env: process.env as Record<string, string>, timeoutMs: 150_000 });
  return { code: result.code, lines: lines(result.stdout) };
}

describe.concurrent("release:check and package.json's repository", () => {
  it("the publishing repository passes; another one fails, naming both", async ({ expect }) => {
    const own = /github\.com\/([^/]+\/[^/]+?)\.git$/.exec(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).repository.url)![1]!;
    const [ok, fork] = await Promise.all([releaseCheck(ROOT, ["--repository", own.toUpperCase()]), releaseCheck(ROOT, ["--repository", "someone/fork"])]);
    expect(ok.lines).toEqual([`ok   package.json repository.url names a GitHub repository (${own})`, `ok   repository.url is the publishing repository ${own.toUpperCase()} (npm provenance checks it)`, "ok   the packed package.json has the same repository.url"]);
    expect(fork.code).toBe(1);
    expect(fork.lines).toContain(`FAIL repository.url is the publishing repository someone/fork (npm provenance checks it): it names ${own}, but the release runs in someone/fork`);
  }, 180_000);

  it("a package.json without repository fails", async ({ expect }) => {
    const root = tempDir("loopx-release-copy-");
    for (const file of ["README.md", "LICENSE"]) copyFileSync(join(ROOT, file), join(root, file));
    cpSync(join(ROOT, "scripts"), join(root, "scripts"), { recursive: true });
    cpSync(join(ROOT, "dist"), join(root, "dist"), { recursive: true, filter: (src) => !src.startsWith(join(ROOT, "dist", "bin")) });
    symlinkSync(join(ROOT, "node_modules"), join(root, "node_modules"));
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
    delete pkg.repository;
    writeFileSync(join(root, "package.json"), JSON.stringify(pkg, null, 2));
    const result = await releaseCheck(root, []);
    expect(result.code).toBe(1);
    expect(result.lines[0]).toBe("FAIL package.json repository.url names a GitHub repository (none): it has no repository.url");
  }, 180_000);
});
