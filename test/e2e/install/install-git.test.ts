import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RUNTIMES, makeProject, runLoopx, tempDir } from "../../helpers.js";
import { fileUrl, installEnv, listDir, makeBareRepo, rewriteKnownHosts, snapshot, startGitDaemon, startServer, type GitDaemon } from "../../fixtures/install/support.js";

const SINGLE = {
  "index.ts": 'import { output } from "loopx";\nimport { greet } from "./lib/greet.ts";\noutput({ result: greet(), stop: true });\n',
  "lib/greet.ts": 'export const greet = () => "hello from lib";\n',
  "lib/deep/helper.sh": "echo helper\n",
  "check.sh": "#!/bin/bash\necho '{\"stop\":true}'\n",
  "package.json": JSON.stringify({ name: "ralph", type: "module" }),
  "README.md": "# ralph\n",
  "schema.json": "{}\n",
};

const MULTI = {
  "README.md": "# flows\n",
  "LICENSE": "MIT\n",
  "package.json": JSON.stringify({ name: "root", dependencies: { loopx: ">=999.0.0" } }),
  ".github/workflows/ci.yml": "on: push\n",
  "shared/util.md": "not a workflow\n",
  "docs/nested/deep.sh": "echo nested scripts do not make a workflow\n",
  "alpha/index.sh": "#!/bin/bash\necho '{\"result\":\"alpha\",\"stop\":true}'\n",
  "alpha/notes.txt": "alpha notes\n",
  "beta/run.ts": "console.log('beta');\n",
  "beta/lib/x.ts": "export {};\n",
};

describe.each(RUNTIMES)("loopx install from git ($name)", (runtime) => {
  const daemons: GitDaemon[] = [];
  afterEach(() => {
    for (const daemon of daemons.splice(0)) daemon.stop();
  });

  it("installs a single-workflow repository under its repository name, with every file, without .git", async () => {
    const bare = makeBareRepo(SINGLE, tempDir(), "ralph.git");
    const cwd = makeProject();
    const { env, tmp } = installEnv();
    const result = await runLoopx(runtime, ["install", fileUrl(bare)], { cwd, env });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('installed workflow "ralph"');
    const dir = join(cwd, ".loopx", "ralph");
    expect(listDir(dir)).toEqual(["README.md", "check.sh", "index.ts", "lib", "package.json", "schema.json"]);
    expect(readFileSync(join(dir, "lib/deep/helper.sh"), "utf8")).toBe("echo helper\n");
    expect(listDir(join(cwd, ".loopx"))).toEqual(["ralph"]); // no staging left behind
    expect(listDir(tmp)).toEqual([]); // no clone left behind
    const run = await runLoopx(runtime, ["run", "ralph"], { cwd, env });
    expect(run.code).toBe(0);
  });

  it("installs every workflow of a multi-workflow repository and ignores root files and non-workflow directories", async () => {
    const bare = makeBareRepo(MULTI, tempDir(), "flows.git");
    const cwd = makeProject();
    const { env, tmp } = installEnv();
    const result = await runLoopx(runtime, ["install", fileUrl(bare)], { cwd, env });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(listDir(join(cwd, ".loopx"))).toEqual(["alpha", "beta"]);
    expect(listDir(join(cwd, ".loopx", "alpha"))).toEqual(["index.sh", "notes.txt"]);
    expect(listDir(join(cwd, ".loopx", "beta"))).toEqual(["lib", "run.ts"]);
    expect(listDir(tmp)).toEqual([]);
    const run = await runLoopx(runtime, ["run", "alpha"], { cwd, env });
    expect(run.code).toBe(0);
  });

  it("-w installs only the selected workflow and does not validate its invalid siblings", async () => {
    const bare = makeBareRepo(
      {
        ...MULTI,
        "broken/a.sh": "echo\n",
        "broken/a.ts": "\n",
        "bad-names/my.script.sh": "echo\n",
      },
      tempDir(),
      "flows.git",
    );
    const cwd = makeProject();
    const { env } = installEnv();
    const all = await runLoopx(runtime, ["install", fileUrl(bare)], { cwd, env });
    expect(all.code).toBe(1);
    expect(existsSync(join(cwd, ".loopx"))).toBe(false);
    for (const flag of [["-w", "beta"], ["--workflow", "beta"], ["--workflow=beta"]]) {
      const cwd2 = makeProject();
      const result = await runLoopx(runtime, ["install", ...flag, fileUrl(bare)], { cwd: cwd2, env });
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(listDir(join(cwd2, ".loopx"))).toEqual(["beta"]);
    }
  });

  it.each([
    ["an unknown -w name", MULTI, ["-w", "gamma"], /workflow "gamma" not found in .*flows\.git \(its workflows: alpha, beta\)/],
    ["-w naming a directory that is not a workflow", MULTI, ["-w", "shared"], /workflow "shared" not found/],
    ["-w with a path", MULTI, ["-w", "../alpha"], /workflow "\.\.\/alpha" not found/],
    ["-w on a single-workflow source", SINGLE, ["-w", "ralph"], /-w\/--workflow only applies to multi-workflow sources.*single-workflow source/],
    ["a zero-workflow source", { "README.md": "x\n", "docs/guide.md": "y\n", "src/nested/deep.ts": "z\n" }, [], /no workflows found in .*flows\.git/],
  ])("refuses %s and writes nothing", async (_label, spec, flags, message) => {
    const bare = makeBareRepo(spec, tempDir(), "flows.git");
    const cwd = makeProject();
    const { env, tmp } = installEnv();
    const result = await runLoopx(runtime, ["install", ...flags, fileUrl(bare)], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(existsSync(join(cwd, ".loopx"))).toBe(false);
    expect(listDir(tmp)).toEqual([]);
  });

  it("reports git's own error for a repository that does not exist, and leaves .loopx/ as it was", async () => {
    const cwd = makeProject({ ".loopx/keep/index.sh": "echo\n", ".loopx/data.txt": "x" });
    const before = snapshot(join(cwd, ".loopx"));
    const { env, tmp } = installEnv();
    const missing = fileUrl(join(tempDir(), "missing.git"));
    const result = await runLoopx(runtime, ["install", missing], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^loopx: git clone of file:\/\/.*missing\.git failed: .*does not appear to be a git repository/);
    expect(snapshot(join(cwd, ".loopx"))).toEqual(before);
    expect(listDir(tmp)).toEqual([]);
  });

  it("says so when git is not installed", async () => {
    const bare = makeBareRepo(SINGLE, tempDir(), "ralph.git");
    const cwd = makeProject();
    const { env, tmp } = installEnv({ PATH: tempDir("loopx-empty-path-") });
    const result = await runLoopx(runtime, ["install", fileUrl(bare)], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^loopx: cannot clone file:\/\/.*ralph\.git: git is not installed \(or not on PATH\)/);
    expect(existsSync(join(cwd, ".loopx"))).toBe(false);
    expect(listDir(tmp)).toEqual([]);
  });

  it("refuses a repository symlink that points outside the workflow, naming it", async () => {
    const bare = makeBareRepo({ "index.sh": "echo\n", "secrets": { symlink: "/etc/passwd" }, "lib/up": { symlink: "../../outside" } }, tempDir(), "evil.git");
    const cwd = makeProject();
    const { env } = installEnv();
    const result = await runLoopx(runtime, ["install", fileUrl(bare)], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('symlink "lib/up" points outside the workflow');
    expect(result.stderr).toContain('symlink "secrets" points outside the workflow');
    expect(existsSync(join(cwd, ".loopx"))).toBe(false);
  });

  it("refuses a top-level workflow directory that is a symlink to somewhere outside the repository", async () => {
    const outside = makeProject({ "index.sh": "echo outside\n" });
    const bare = makeBareRepo({ "good/index.sh": "echo\n", "linked": { symlink: outside } }, tempDir(), "flows.git");
    const cwd = makeProject();
    const { env } = installEnv();
    const result = await runLoopx(runtime, ["install", fileUrl(bare)], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/workflow "linked": its directory is a symlink to somewhere outside the source/);
    expect(existsSync(join(cwd, ".loopx"))).toBe(false);
    const selected = await runLoopx(runtime, ["install", "-w", "good", fileUrl(bare)], { cwd, env });
    expect(selected.code).toBe(0);
    expect(listDir(join(cwd, ".loopx"))).toEqual(["good"]);
  });

  it("keeps symlinks that stay inside the workflow", async () => {
    const bare = makeBareRepo({ "index.sh": "echo\n", "lib/real.md": "r\n", "alias.md": { symlink: "lib/real.md" } }, tempDir(), "links.git");
    const cwd = makeProject();
    const { env } = installEnv();
    const result = await runLoopx(runtime, ["install", fileUrl(bare)], { cwd, env });
    expect(result.code).toBe(0);
    expect(snapshot(join(cwd, ".loopx", "links"))!["alias.md"]).toBe("link -> lib/real.md");
  });

  it("expands org/repo and recognises known-host URLs, cloning through a loopback git daemon via git's insteadOf", async () => {
    const base = tempDir();
    makeBareRepo(SINGLE, base, "org/ralph.git");
    makeBareRepo(MULTI, base, "team/flows.git");
    const daemon = await startGitDaemon(base);
    daemons.push(daemon);
    const { env } = installEnv(rewriteKnownHosts(daemon.base));
    const cases: Array<[string, string[]]> = [
      ["org/ralph", ["ralph"]],
      ["https://github.com/org/ralph", ["ralph"]],
      ["https://github.com/org/ralph/", ["ralph"]],
      ["https://github.com/org/ralph.git", ["ralph"]],
      ["https://gitlab.com/org/ralph.git/", ["ralph"]],
      ["https://bitbucket.org/team/flows", ["alpha", "beta"]],
    ];
    for (const [source, expected] of cases) {
      const cwd = makeProject();
      const result = await runLoopx(runtime, ["install", source], { cwd, env });
      expect({ source, stderr: result.stderr, code: result.code }).toEqual({ source, stderr: "", code: 0 });
      expect(listDir(join(cwd, ".loopx"))).toEqual(expected);
    }
  });

  it("clones a plain .git URL from a git daemon (git:// on loopback)", async () => {
    const base = tempDir();
    makeBareRepo(SINGLE, base, "deep/path/agent.git");
    const daemon = await startGitDaemon(base);
    daemons.push(daemon);
    const cwd = makeProject();
    const { env } = installEnv();
    const result = await runLoopx(runtime, ["install", `${daemon.base}deep/path/agent.git`], { cwd, env });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(listDir(join(cwd, ".loopx"))).toEqual(["agent"]);
  });

  it("never prompts: a server asking for credentials makes the install fail at once", async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(401, { "www-authenticate": 'Basic realm="private"' });
      res.end("auth required");
    });
    try {
      const cwd = makeProject();
      const { env } = installEnv();
      const result = await runLoopx(runtime, ["install", `${server.origin}/private/repo.git`], { cwd, env, timeoutMs: 20_000 });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^loopx: git clone of http:\/\/127\.0\.0\.1:\d+\/private\/repo\.git failed: .*(terminal prompts disabled|Authentication failed)/);
      expect(server.requests.length).toBeGreaterThan(0);
      expect(existsSync(join(cwd, ".loopx"))).toBe(false);
    } finally {
      await server.stop();
    }
  });
});
