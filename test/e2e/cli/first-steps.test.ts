/**
 * "getting started": `loopx init` scaffolds a workflow that runs on every channel, and
 * the messages a new user meets first (a subdirectory, a folder of .py/.mjs files, `ralph:`, an
 * unreadable .loopx/) say what is actually wrong.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, expectLoopxError, expectOneLineError, giveToUnprivileged, isolatedEnv, makeProject, runLoopxUnprivileged, sh, snapshotTree, tempDir, RUNTIMES } from "../../helpers.js";
import { CHANNELS, loopx, toolsOnlyPath } from "../../fixtures/channels.js";
import type { Runtime } from "../../helpers.js";

const runLoopxIn = (runtime: Runtime, args: string[], cwd: string, env: Record<string, string>) => loopx({ name: runtime.name, argv: [runtime.exe, BIN] }, args, cwd, env);

describe.each(CHANNELS)("loopx init ($name)", (channel) => {
  // The binary runs with no node and no bun on PATH: what init writes must not need them.
  const envFor = () => (channel.name === "binary" ? isolatedEnv({ PATH: toolsOnlyPath() }) : isolatedEnv());

  it("creates .loopx/main/index.sh in an empty project, names the next command, and that command runs it", async () => {
    const cwd = tempDir();
    const env = envFor();
    const init = await loopx(channel, ["init"], cwd, env);
    expect(init).toMatchObject({ code: 0, stderr: "" });
    expect(init.stdout).toBe("created .loopx/main/index.sh\nnext: loopx run main\n");
    expect(statSync(join(cwd, ".loopx", "main", "index.sh")).mode & 0o777).toBe(0o755);
    const run = await loopx(channel, ["run", "main"], cwd, env);
    expect(run.stderr).toBe(`main: iteration 1 in ${cwd}\n`);
    expect(run).toMatchObject({ code: 0, stdout: "" });
  });

  it("--ts writes a TypeScript index using input() and output() from loopx, which runs", async () => {
    const cwd = tempDir();
    const env = envFor();
    const init = await loopx(channel, ["init", "review", "--ts"], cwd, env);
    expect(init).toMatchObject({ code: 0, stderr: "", stdout: "created .loopx/review/index.ts\nnext: loopx run review\n" });
    const source = readFileSync(join(cwd, ".loopx", "review", "index.ts"), "utf8");
    expect(source).toContain('import { input, output } from "loopx";');
    const run = await loopx(channel, ["run", "review"], cwd, env);
    expect(run.stderr).toBe("review: iteration 1\n");
    expect(run).toMatchObject({ code: 0, stdout: "" });
  });
});

describe.each(RUNTIMES)("loopx init never overwrites ($name)", (runtime) => {
  const init = (cwd: string, ...args: string[]) => runLoopxIn(runtime, ["init", ...args], cwd, isolatedEnv());

  it("an existing .loopx/<workflow> (a workflow, a file, an empty directory) is an error and nothing changes", async () => {
    const cwd = makeProject({ ".loopx/main/index.sh": sh("echo mine"), ".loopx/notes": "keep\n", ".loopx/empty/.keep": "" });
    const before = snapshotTree(cwd);
    for (const name of ["main", "notes", "empty"]) {
      const result = await init(cwd, name);
      expectOneLineError(result, new RegExp(`\\.loopx/${name} already exists; nothing written`));
    }
    expect(snapshotTree(cwd)).toEqual(before);
  });

  it("rejects an invalid name and a second name before writing anything", async () => {
    const cwd = tempDir();
    expectOneLineError(await init(cwd, "bad:name"), /invalid workflow name "bad:name"/);
    expectOneLineError(await init(cwd, "a", "b"), /unexpected argument "b"/);
    expect(existsSync(join(cwd, ".loopx"))).toBe(false);
  });

  it("is listed in top-level help and has its own help", async () => {
    const cwd = tempDir();
    const top = await runLoopxIn(runtime, ["-h"], cwd, isolatedEnv());
    expect(top.stdout).toMatch(/^ {2}init \[<name>\] \[--ts\] +Start a workflow/m);
    const help = await init(cwd, "-h");
    expect(help).toMatchObject({ code: 0, stderr: "" });
    expect(help.stdout).toMatch(/^Usage: loopx init \[<name>\] \[--ts\]\n/);
    expect(existsSync(join(cwd, ".loopx"))).toBe(false);
  });
});

describe.each(RUNTIMES)("messages of a first run ($name)", (runtime) => {
  const run = (cwd: string, ...args: string[]) => runLoopxIn(runtime, ["run", ...args], cwd, isolatedEnv());

  it("in a subdirectory of a project: the cwd stays the root (spec §3.2), the error names the parent's .loopx/ and how to run there", async () => {
    const root = makeProject({ ".loopx/ralph/index.sh": sh("exit 0") });
    const sub = join(root, "src", "deep");
    mkdirSync(sub, { recursive: true });
    const line = expectLoopxError(await run(sub, "ralph"), `no .loopx/ directory in ${sub}`, `${root} has one`, `cd ${root} && loopx run ralph`);
    expect(line).not.toContain("create it with a workflow");
  });

  it("with no .loopx/ anywhere above, the error says to create one (and how)", async () => {
    const cwd = tempDir();
    expectLoopxError(await run(cwd, "ralph"), `no .loopx/ directory in ${cwd}`, "loopx init");
  });

  it("a folder holding only index.py / index.mjs: the message names the supported extensions and what it found", async () => {
    const cwd = makeProject({ ".loopx/py/index.py": "print('hi')\n", ".loopx/py/index.mjs": "export {}\n", ".loopx/ok/index.sh": sh("exit 0") });
    expectLoopxError(await run(cwd, "py"), 'workflow "py" not found', ".sh, .js, .jsx, .ts, .tsx", "index.mjs, index.py");
  });

  it("`ralph:` for a workflow without an index script suggests its scripts, not ralph:index", async () => {
    const cwd = makeProject({ ".loopx/ralph/check.sh": sh("exit 0"), ".loopx/ralph/plan.sh": sh("exit 0"), ".loopx/other/index.sh": sh("exit 0") });
    const line = expectLoopxError(await run(cwd, "ralph:"), 'invalid target "ralph:"', "ralph:check, ralph:plan");
    expect(line).not.toContain("ralph:index");
    // A workflow that has an index keeps the spec's advice.
    expectLoopxError(await run(cwd, "other:"), '"other" or "other:index"');
  });

  it("-n beyond the largest count says it is too large, not that it is not an integer", async () => {
    const cwd = makeProject({ ".loopx/a/index.sh": sh("exit 0") });
    const line = expectLoopxError(await run(cwd, "-n", "99999999999999999999", "a"), "-n 99999999999999999999 is too large");
    expect(line).not.toContain("non-negative integer");
  });

  it("--log into a missing directory names that directory, not ENOENT (open)", async () => {
    const cwd = makeProject({ ".loopx/a/index.sh": sh("exit 0") });
    const line = expectLoopxError(await run(cwd, "--log", join(cwd, "nope", "run.log"), "a"), `the directory ${join(cwd, "nope")} does not exist`);
    expect(line).not.toMatch(/ENOENT \(open\)/);
  });

  it("a mode-000 .loopx/ (unprivileged user) is 'cannot read … permission denied', not 'create it'", async () => {
    const cwd = makeProject({ ".loopx/a/index.sh": sh("exit 0") });
    giveToUnprivileged(cwd);
    chmodSync(join(cwd, ".loopx"), 0o000);
    try {
      const env = isolatedEnv();
      giveToUnprivileged(env.HOME!);
      const result = await runLoopxUnprivileged(runtime, ["run", "a"], { cwd, env });
      const line = expectLoopxError(result, `cannot read ${join(cwd, ".loopx")}: permission denied`);
      expect(line).not.toContain("create");
    } finally {
      chmodSync(join(cwd, ".loopx"), 0o755);
    }
  });

  it("env set with an unwritable config directory names the directory, never 'internal error: EACCES'", async () => {
    const cwd = tempDir();
    const env = isolatedEnv();
    const locked = join(env.HOME!, "locked");
    mkdirSync(locked);
    writeFileSync(join(locked, ".keep"), "");
    giveToUnprivileged(env.HOME!, cwd);
    chmodSync(locked, 0o555);
    env.XDG_CONFIG_HOME = locked;
    const result = await runLoopxUnprivileged(runtime, ["env", "set", "A", "1"], { cwd, env });
    const line = expectLoopxError(result, `cannot write global env file ${join(locked, "loopx", "env")}`, "permission denied (EACCES)");
    expect(line).not.toContain("internal error");
  });
});
