import { existsSync, lstatSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RUNTIMES, VERSION, isolatedEnv, makeProject, makeSymlink, runLoopx, tempDir, warnings } from "../../helpers.js";
import { itFor } from "../../case-tables.js";
import { fileUrl, installEnv, listDir, makeBareRepo, snapshot, type TreeSpec } from "../../fixtures/install/support.js";

const pkg = (json: unknown) => JSON.stringify(json);

/** Existing `.loopx/` content every failure test starts from (a broken sibling included). */
const EXISTING: Record<string, string> = {
  ".loopx/keep/index.sh": "echo keep\n",
  ".loopx/broken/x.sh": "echo\n",
  ".loopx/broken/x.ts": "\n",
  ".loopx/notes.txt": "not a workflow\n",
  ".loopx/plain-dir/README.md": "no scripts here\n",
};

describe.each(RUNTIMES)("loopx install validation, collisions, versions ($name)", (runtime) => {
  // Loopx's own logic: every test under Node, every third under Bun (test/case-tables.ts).
  const test = itFor(runtime);
  async function install(spec: TreeSpec, repoName: string, args: string[] = [], projectFiles: Record<string, string> = {}, setup?: (cwd: string) => void) {
    const bare = makeBareRepo(spec, tempDir(), `${repoName}.git`);
    const cwd = makeProject(projectFiles);
    setup?.(cwd);
    const before = snapshot(join(cwd, ".loopx"));
    const { env, tmp } = installEnv();
    const result = await runLoopx(runtime, ["install", ...args, fileUrl(bare)], { cwd, env });
    return { ...result, cwd, env, before, after: snapshot(join(cwd, ".loopx")), tmpAfter: listDir(tmp) };
  }

  it.each<[string, TreeSpec, string, string[], RegExp, ((cwd: string) => void)?]>([
    ["an invalid script name", { "index.sh": "echo\n", "bad.name.sh": "echo\n" }, "flow", [], /workflow "flow": script "bad\.name\.sh" has an invalid name/],
    ["a same-base-name collision", { "check.sh": "echo\n", "check.ts": "\n" }, "flow", ["-y"], /workflow "flow": name collision: scripts check\.sh, check\.ts share the script name "check"/],
    ["an invalid workflow name (from the repository name)", { "index.sh": "echo\n" }, "my.flow", ["-y"], /workflow "my\.flow": invalid name/],
    ["a loopx range in dependencies that this version does not satisfy", { "index.sh": "echo\n", "package.json": pkg({ dependencies: { loopx: ">=999.0.0" } }) }, "flow", [], new RegExp(`workflow "flow" declares loopx version >=999\\.0\\.0, but the running loopx version is ${VERSION.replace(/\./g, "\\.")} \\(not satisfied, use -y to install anyway\\)`)],
    ["a loopx range in devDependencies that this version does not satisfy", { "index.sh": "echo\n", "package.json": pkg({ devDependencies: { loopx: "<0.0.1" } }) }, "flow", [], /declares loopx version <0\.0\.1, /],
    ["a mismatched dependencies range even though devDependencies matches", { "index.sh": "echo\n", "package.json": pkg({ dependencies: { loopx: "^999.0.0" }, devDependencies: { loopx: "*" } }) }, "flow", [], /declares loopx version \^999\.0\.0, /],
    ["an existing workflow at the destination (without -y)", { "index.sh": "echo\n" }, "keep", [], /workflow "keep": \.loopx\/keep already exists \(use -y to replace it\)/],
    ["a non-workflow directory at the destination, even with -y", { "index.sh": "echo\n" }, "plain-dir", ["-y"], /workflow "plain-dir": \.loopx\/plain-dir already exists and is not a workflow/],
    ["a file at the destination, even with -y", { "index.sh": "echo\n" }, "notes", ["-y"], /workflow "notes": \.loopx\/notes already exists and is not a workflow/, (cwd) => makeProject({ ".loopx/notes": "a file\n" }, cwd)],
    ["a broken symlink at the destination, even with -y", { "index.sh": "echo\n" }, "dangling", ["-y"], /workflow "dangling": \.loopx\/dangling already exists and is not a workflow/, (cwd) => makeSymlink(join(cwd, "nowhere"), join(cwd, ".loopx", "dangling"))],
    ["a symlink to a non-workflow directory, even with -y", { "index.sh": "echo\n" }, "linked", ["-y"], /workflow "linked": \.loopx\/linked already exists and is not a workflow/, (cwd) => makeSymlink(join(cwd, ".loopx", "plain-dir"), join(cwd, ".loopx", "linked"))],
  ])("refuses %s and leaves .loopx/ byte-for-byte unchanged", async (_label, spec, name, args, message, setup) => {
    const result = await install(spec, name, args, EXISTING, setup);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^loopx: cannot install from file:\/\/.*\.git: /);
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.after).toEqual(result.before);
    expect(result.tmpAfter).toEqual([]);
  });

  it.each([
    ["did not exist", {}],
    ["existed", EXISTING],
  ])("a staging failure (ENAMETOOLONG) cleans up, and .loopx/ is as before: it %s", async (_label, existing) => {
    // The project lives so deep that a long path inside the workflow fits in TMPDIR but not
    // under .loopx/.install-*/: copying into the staging directory fails midway.
    let root = tempDir();
    for (let i = 0; i < 17; i++) root = join(root, `${"d".repeat(190)}${i}`);
    const cwd = makeProject({ ...existing, "marker": "x" }, root);
    let deep = "lib";
    for (let i = 0; i < 5; i++) deep += `/${"n".repeat(200)}${i}`;
    const bare = makeBareRepo({ "a/index.sh": "echo\n", "b/index.sh": "echo\n", [`b/${deep}/f.md`]: "x\n" }, tempDir(), "flows.git");
    const before = snapshot(join(cwd, ".loopx"));
    const { env, tmp } = installEnv();
    const result = await runLoopx(runtime, ["install", fileUrl(bare)], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^loopx: cannot stage workflow "b": .*ENAMETOOLONG.*; nothing was installed\n$/);
    expect(snapshot(join(cwd, ".loopx"))).toEqual(before);
    expect(listDir(tmp)).toEqual([]);
  });

  test("does not leave .loopx/ behind when it did not exist and the install fails", async () => {
    const result = await install({ "a.sh": "echo\n", "a.js": "\n" }, "flow");
    expect(result.code).toBe(1);
    expect(result.before).toBeNull();
    expect(existsSync(join(result.cwd, ".loopx"))).toBe(false);
  });

  test("refuses when .loopx is a file, before fetching anything", async () => {
    const result = await install({ "index.sh": "echo\n" }, "flow", [], { ".loopx": "i am a file\n" });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("loopx: cannot install: .loopx exists in the project root but is not a directory\n");
    expect(readFileSync(join(result.cwd, ".loopx"), "utf8")).toBe("i am a file\n");
  });

  test("allows a workflow without an index script; its scripts are run by name", async () => {
    const result = await install({ "setup.sh": "#!/bin/bash\necho '{\"stop\":true}'\n" }, "noindex");
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const run = await runLoopx(runtime, ["run", "noindex:setup"], { cwd: result.cwd, env: result.env });
    expect(run.code).toBe(0);
  });

  it.each<[string, unknown]>([
    ["a satisfied dependencies range", { dependencies: { loopx: `>=${VERSION}` } }],
    ["a satisfied devDependencies range", { devDependencies: { loopx: "*" } }],
    ["dependencies over devDependencies", { dependencies: { loopx: `^${VERSION}` }, devDependencies: { loopx: ">=999.0.0" } }],
    ["optionalDependencies (ignored)", { optionalDependencies: { loopx: ">=999.0.0" } }],
    ["no loopx declaration", { dependencies: { other: "1.0.0" } }],
  ])("installs with %s, silently", async (_label, json) => {
    const result = await install({ "index.sh": "echo\n", "package.json": pkg(json) }, "flow");
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(readFileSync(join(result.cwd, ".loopx", "flow", "package.json"), "utf8")).toBe(pkg(json));
  });

  test("-y installs despite a version mismatch, warns, and keeps the declaration", async () => {
    const json = pkg({ dependencies: { loopx: ">=999.0.0" } });
    const result = await install({ "index.sh": "echo\n", "package.json": json }, "flow", ["-y"]);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^loopx: warning: workflow "flow" declares loopx version >=999\.0\.0, .*installing anyway because of -y\)\n$/);
    expect(readFileSync(join(result.cwd, ".loopx", "flow", "package.json"), "utf8")).toBe(json);
  });

  it.each<[string, TreeSpec, RegExp]>([
    ["invalid JSON", { "index.sh": "echo\n", "package.json": "{ not json" }, /workflow "flow": package\.json is invalid JSON .*version check skipped/],
    ["an invalid semver range", { "index.sh": "echo\n", "package.json": pkg({ dependencies: { loopx: "not-a-range!" } }) }, /workflow "flow": package\.json declares loopx version "not-a-range!" in dependencies, which is not a valid semver range/],
    ["an unreadable package.json (a directory)", { "index.sh": "echo\n", "package.json/x.md": "x\n" }, /workflow "flow": cannot read package\.json: is a directory \(EISDIR\)/],
  ])("warns about %s and installs anyway", async (_label, spec, message) => {
    const result = await install(spec, "flow");
    expect(result.code).toBe(0);
    const lines = result.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^loopx: warning: /);
    expect(lines[0]).toMatch(message);
    expect(existsSync(join(result.cwd, ".loopx", "flow", "index.sh"))).toBe(true);
  });

  test("-y replaces an existing workflow directory entirely, despite broken siblings elsewhere in .loopx/", async () => {
    const result = await install({ "index.sh": "echo new\n" }, "keep", ["-y"], { ...EXISTING, ".loopx/keep/old.sh": "echo old\n", ".loopx/keep/lib/x.md": "x" });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('replaced workflow "keep"');
    expect(listDir(join(result.cwd, ".loopx", "keep"))).toEqual(["index.sh"]);
    expect(readFileSync(join(result.cwd, ".loopx", "keep", "index.sh"), "utf8")).toBe("echo new\n");
    expect(listDir(join(result.cwd, ".loopx"))).toEqual(["broken", "keep", "notes.txt", "plain-dir"]);
    const othersBefore = Object.fromEntries(Object.entries(result.before!).filter(([k]) => !k.startsWith("keep")));
    const othersAfter = Object.fromEntries(Object.entries(result.after!).filter(([k]) => !k.startsWith("keep")));
    expect(othersAfter).toEqual(othersBefore);
  });

  test("-y replaces a symlinked workflow by removing the symlink, never its target", async () => {
    const elsewhere = makeProject({ "real/index.sh": "echo real\n", "real/data.md": "keep me\n" });
    const result = await install({ "index.sh": "echo new\n" }, "linked", ["-y"], EXISTING, (cwd) =>
      makeSymlink(join(elsewhere, "real"), join(cwd, ".loopx", "linked")),
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const dest = join(result.cwd, ".loopx", "linked");
    expect(lstatSync(dest).isDirectory()).toBe(true);
    expect(readFileSync(join(dest, "index.sh"), "utf8")).toBe("echo new\n");
    expect(listDir(join(elsewhere, "real"))).toEqual(["data.md", "index.sh"]);
    expect(readFileSync(join(elsewhere, "real", "index.sh"), "utf8")).toBe("echo real\n");
  });

  test("without -y, a symlinked workflow at the destination is refused and left as it is", async () => {
    const elsewhere = makeProject({ "real/index.sh": "echo real\n" });
    const result = await install({ "index.sh": "echo new\n" }, "linked", [], {}, (cwd) => makeSymlink(join(elsewhere, "real"), join(cwd, ".loopx", "linked")));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/\.loopx\/linked already exists \(use -y/);
    expect(readlinkSync(join(result.cwd, ".loopx", "linked"))).toBe(join(elsewhere, "real"));
  });

  const MULTI: TreeSpec = {
    "README.md": "r\n",
    "a/index.sh": "echo\n",
    "a/bad name.sh": "echo\n",
    "b/x.sh": "echo\n",
    "b/x.tsx": "\n",
    "c/index.sh": "echo\n",
    "c/package.json": pkg({ dependencies: { loopx: ">=999.0.0" } }),
    "keep/index.sh": "echo replacement\n",
    "e/index.sh": "echo fine\n",
    "f/index.sh": "echo\n",
    "f/package.json": "{ broken",
  };

  test("preflights every workflow and reports every failure in one line before writing anything", async () => {
    const result = await install(MULTI, "flows", [], EXISTING);
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split("\n");
    expect(lines).toHaveLength(2); // one warning (f's package.json) + one aggregated error
    expect(lines[0]).toMatch(/^loopx: warning: workflow "f": package\.json is invalid JSON/);
    const error = lines[1]!;
    expect(error).toMatch(/^loopx: cannot install from file:\/\/.*flows\.git: /);
    expect(error).toContain('workflow "a": script "bad name.sh" has an invalid name');
    expect(error).toContain('workflow "b": name collision: scripts x.sh, x.tsx share the script name "x"');
    expect(error).toMatch(/workflow "c" declares loopx version >=999\.0\.0/);
    expect(error).toContain('workflow "keep": .loopx/keep already exists (use -y to replace it)');
    expect(error).not.toContain('"e"');
    expect(error.split("; ").length).toBe(4);
    expect(result.after).toEqual(result.before);
    expect(result.tmpAfter).toEqual([]);
  });

  test("with -y, replaceable collisions and version mismatches no longer fail, but invalid names and collisions still do", async () => {
    const result = await install(MULTI, "flows", ["-y"], EXISTING);
    expect(result.code).toBe(1);
    const error = result.stderr.trim().split("\n").pop()!;
    expect(error).toContain('workflow "a"');
    expect(error).toContain('workflow "b"');
    expect(error).not.toContain('.loopx/keep already exists');
    expect(error).not.toMatch(/workflow "c" requires/);
    expect(result.after).toEqual(result.before);
  });

  test("with -y and only replaceable problems, installs all workflows atomically", async () => {
    const { "a/bad name.sh": _a, "b/x.tsx": _b, ...fixable } = MULTI;
    const result = await install(fixable, "flows", ["-y"], EXISTING);
    expect(result.code).toBe(0);
    expect(listDir(join(result.cwd, ".loopx"))).toEqual(["a", "b", "broken", "c", "e", "f", "keep", "notes.txt", "plain-dir"]);
    expect(readFileSync(join(result.cwd, ".loopx", "keep", "index.sh"), "utf8")).toBe("echo replacement\n");
    expect(result.stderr).toMatch(/warning: workflow "c" declares loopx version >=999\.0\.0.*installing anyway/);
  });

  test("a staging directory inside .loopx/ is never taken for a workflow by run or run -h", async () => {
    const cwd = makeProject({
      ".loopx/good/index.sh": "#!/bin/bash\necho '{\"stop\":true}'\n",
      ".loopx/.install-AbC123/wf/index.sh": "echo staged\n",
      ".loopx/.install-AbC123/wf/bad.name.sh": "echo\n",
      ".loopx/.install-AbC123/.replaced/old/index.sh": "echo old\n",
    });
    const { env } = installEnv();
    const help = await runLoopx(runtime, ["run", "-h"], { cwd, env });
    expect(help.code).toBe(0);
    expect(help.stderr).toBe("");
    expect(help.stdout).toContain("good");
    expect(help.stdout).not.toContain("install-");
    expect(help.stdout).not.toContain("staged");
    const run = await runLoopx(runtime, ["run", "good"], { cwd, env });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
  });
});

describe.concurrent.each(RUNTIMES)("install preflight: version and collision messages ($name)", (runtime) => {
  it("install: a mismatch is refused naming workflow, version, range and running version; broken manifests warn the same way", async () => {
    const source = makeBareRepo(
      {
        "strict/index.sh": "echo\n",
        "strict/package.json": JSON.stringify({ dependencies: { loopx: ">=999.0.0" } }),
        "badrange/index.sh": "echo\n",
        "badrange/package.json": JSON.stringify({ dependencies: { loopx: "latest" } }),
        "badjson/index.sh": "echo\n",
        "badjson/package.json": "{ nope",
      },
      tempDir(),
      "flows.git",
    );
    const cwd = makeProject();
    const refused = await runLoopx(runtime, ["install", fileUrl(source)], { cwd, env: isolatedEnv() });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`workflow "strict" declares loopx version >=999.0.0, but the running loopx version is ${VERSION} (not satisfied, use -y to install anyway)`);
    const forced = await runLoopx(runtime, ["install", "-y", fileUrl(source)], { cwd, env: isolatedEnv() });
    expect(forced.code).toBe(0);
    expect(warnings(forced.stderr)).toEqual([
      expect.stringMatching(/^loopx: warning: workflow "badjson": package\.json is invalid JSON \(.+\); loopx version check skipped$/),
      'loopx: warning: workflow "badrange": package.json declares loopx version "latest" in dependencies, which is not a valid semver range; loopx version check skipped',
      `loopx: warning: workflow "strict" declares loopx version >=999.0.0, but the running loopx version is ${VERSION} (not satisfied, installing anyway because of -y)`,
    ]);
  });

  const collision = 'workflow "ralph": name collision: scripts check.sh, check.ts share the script name "check"';
  it("install preflight says the same", async () => {
    const source = makeBareRepo({ "index.sh": "echo\n", "check.sh": "echo\n", "check.ts": "\n" }, tempDir(), "ralph.git");
    const result = await runLoopx(runtime, ["install", fileUrl(source)], { cwd: makeProject(), env: isolatedEnv() });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`loopx: cannot install from ${fileUrl(source)}: ${collision}\n`);
  });
});
