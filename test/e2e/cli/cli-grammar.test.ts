/**
 * CLI grammar (spec §4.1, §4.2, §12): subcommand dispatch, top-level flags, run/install option
 * parsing, usage errors, and options/target in any order. Black-box: spawns the built CLI.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RUNTIMES, expectOneLineError, isolatedEnv, makeProject, runLoopx, snapshotTree, tempDir, type Runtime } from "../../helpers.js";
import { tableFor } from "../../case-tables.js";

/**
 * A valid project: `ralph` (index + check-ready) and workflows named after subcommands. Every
 * script appends one line to $LOOPX_PROJECT_ROOT/ran.log and emits nothing, so the loop only ends
 * through -n: a run that ignores -n would hang (and time out).
 */
function loopingProject(): string {
  const append = (label: string) => `#!/bin/bash\necho "${label}:\${FOO:-unset}" >> "$LOOPX_PROJECT_ROOT/ran.log"\n`;
  return makeProject({
    ".loopx/ralph/index.sh": append("ralph:index"),
    ".loopx/ralph/check-ready.sh": append("ralph:check-ready"),
    ".loopx/version/index.sh": append("version:index"),
    ".loopx/run/index.sh": append("run:index"),
    ".loopx/default/index.sh": append("default:index"),
    ".loopx/output/index.sh": append("output:index"),
    f: "FOO=from-f\n",
  });
}

/**
 * A valid project whose scripts leave a mark and stop: if a usage error ever ran a script, the
 * snapshot comparison would catch it (and the run would not hang). Also holds env files `a`, `b`,
 * `.env` so that `-e` values are not themselves the problem.
 */
function markingProject(): string {
  const mark = '#!/bin/bash\necho ran >> "$LOOPX_PROJECT_ROOT/ran.log"\necho \'{"stop": true}\'\n';
  return makeProject({
    ".loopx/ralph/index.sh": mark,
    ".loopx/ralph/check-ready.sh": mark,
    ".loopx/foo/index.sh": mark,
    a: "A=1\n",
    b: "B=2\n",
    ".env": "C=3\n",
    src: "not a source\n",
  });
}

/** `.loopx/` that is invalid in every way run <target> would reject (collision + bad name). */
function brokenProject(): string {
  return makeProject({
    ".loopx/ralph/index.sh": "#!/bin/bash\necho ran >> \"$LOOPX_PROJECT_ROOT/ran.log\"\n",
    ".loopx/ralph/index.ts": "console.log('ran');\n",
    ".loopx/bad.name/index.sh": "#!/bin/bash\n",
  });
}

/**
 * Runs `args` in a fresh marking project and in a fresh directory without `.loopx/`; both must be a
 * one-line usage error matching `pattern`, and neither may write anything (project, HOME, XDG).
 */
async function expectUsageError(runtime: Runtime, args: string[], pattern: RegExp): Promise<void> {
  for (const cwd of [markingProject(), tempDir()]) {
    const env = isolatedEnv();
    const beforeProject = snapshotTree(cwd);
    const beforeHome = snapshotTree(env.HOME!);
    const result = await runLoopx(runtime, args, { cwd, env, timeoutMs: 15_000 });
    expectOneLineError(result, pattern);
    // Usage errors are found before discovery: never a complaint about .loopx/ itself.
    expect(result.stderr).not.toMatch(/\.loopx\/? (directory )?(not found|does not exist|missing)|no \.loopx/i);
    expect(snapshotTree(cwd)).toEqual(beforeProject);
    expect(snapshotTree(env.HOME!)).toEqual(beforeHome);
  }
}

describe.concurrent.each(RUNTIMES)("CLI grammar ($name)", (runtime) => {
  describe("top level (§4.1, §4.2)", () => {
    it.each<[string, string[], RegExp]>(tableFor(runtime, [
      ["unrecognized subcommand", ["foo"], /foo/],
      ["unrecognized subcommand followed by -h (not top-level help)", ["foo", "-h"], /foo/],
      ["unrecognized subcommand followed by --help", ["foo", "--help"], /foo/],
      ["workflow name without run (no implicit run)", ["ralph"], /ralph/],
      ["qualified target without run", ["ralph:check-ready"], /ralph:check-ready/],
      ["unknown top-level flag", ["--unknown"], /--unknown/],
      ["unknown top-level flag before a subcommand", ["--unknown", "version"], /--unknown/],
      ["top-level --version (only -h/--help exist at top level)", ["--version"], /--version/],
      ["top-level -n", ["-n", "5", "ralph"], /-n/],
      ["top-level -e", ["-e", ".env", "ralph"], /-e/],
      ["top-level -n before run", ["-n", "5", "run", "ralph"], /-n/],
      ["subcommands are case-sensitive", ["RUN", "ralph"], /RUN/],
      ["empty subcommand", [""], /command/i],
    ]))("%s → usage error, nothing runs or is written", async (_label, args, pattern) => {
      await expectUsageError(runtime, args, pattern);
    });
  });

  describe("usage errors listed in §12 and §4.2", () => {
    it.each<[string, string[], RegExp]>(tableFor(runtime, [
      ["run with no target", ["run"], /target/i],
      ["run -n 5 with no target", ["run", "-n", "5"], /target/i],
      ["run with an extra positional", ["run", "ralph", "bar"], /bar/],
      ["run with an extra positional before the target", ["run", "foo", "ralph"], /foo|ralph/],
      ["run with an unknown flag", ["run", "--unknown", "ralph"], /--unknown/],
      ["run with an unknown flag after the target", ["run", "ralph", "--unknown"], /--unknown/],
      ["run with an unknown short flag", ["run", "-x", "ralph"], /-x/],
      ["run with duplicate -n", ["run", "-n", "5", "-n", "10", "ralph"], /-n/],
      ["run with duplicate -n (same value, around the target)", ["run", "-n", "1", "ralph", "-n", "1"], /-n/],
      ["run with duplicate -e", ["run", "-e", "a", "-e", "b", "ralph"], /-e/],
      ["run with -n missing its value", ["run", "ralph", "-n"], /-n/],
      ["run with -e missing its value", ["run", "ralph", "-e"], /-e/],
      ["install with no source", ["install"], /source/i],
      ["install with duplicate -w", ["install", "-w", "a", "-w", "b", "src"], /-w|--workflow/],
      ["install with duplicate -w / --workflow", ["install", "-w", "a", "--workflow", "b", "src"], /-w|--workflow/],
      ["install with an unknown flag", ["install", "--unknown", "src"], /--unknown/],
      ["install with duplicate -y", ["install", "-y", "-y", "src"], /-y/],
      ["install with -w missing its value", ["install", "src", "-w"], /-w|--workflow/],
      ["install with -w but no source", ["install", "-w", "a"], /source/i],
    ]))("%s → exit 1, one-line message, nothing written", async (_label, args, pattern) => {
      await expectUsageError(runtime, args, pattern);
    });

    // Judgement call: the spec says <source> is a single argument but does not list this case.
    it("install with two sources → usage error", async () => {
      await expectUsageError(runtime, ["install", "src", "other"], /src|other|source/i);
    });

    it("run with no target does not inspect .loopx/ (broken .loopx/ still gives the usage error)", async () => {
      for (const args of [["run"], ["run", "-n", "5"], ["run", "-e", "missing.env"]]) {
        const cwd = brokenProject();
        const before = snapshotTree(cwd);
        const result = await runLoopx(runtime, args, { cwd, env: isolatedEnv() });
        expectOneLineError(result, /target/i);
        expect(result.stderr).not.toMatch(/bad\.name|index\.ts|collid|conflict|missing\.env/i);
        expect(snapshotTree(cwd)).toEqual(before);
      }
    });
  });

  describe("invalid target strings: exit 1, but checked after discovery, not as usage errors (§4.1, §12)", () => {
    it.each<[string]>(tableFor(runtime, [[""], [":"], [":script"], ["ralph:"], ["a:b:c"], ["ra lph"], ["ralph:in dex"]]))(
      "run -n 1 %j",
      async (target) => {
        const cwd = loopingProject();
        const result = await runLoopx(runtime, ["run", "-n", "1", target], { cwd, env: isolatedEnv(), timeoutMs: 15_000 });
        expectOneLineError(result);
        expect(existsSync(join(cwd, "ran.log"))).toBe(false);
        // Without .loopx/, discovery fails first: the complaint is about .loopx/, not the target.
        const bare = await runLoopx(runtime, ["run", "-n", "1", target], { cwd: tempDir(), env: isolatedEnv() });
        expectOneLineError(bare, /\.loopx/);
      },
    );
  });

  describe("-n validation happens before discovery (§4.2)", () => {
    it.each<[string, string[]]>(tableFor(runtime, [
      ["negative", ["run", "-n", "-1", "ralph"]],
      ["negative after the target", ["run", "ralph", "-n", "-1"]],
      ["non-integer", ["run", "-n", "1.5", "ralph"]],
      ["non-numeric", ["run", "-n", "abc", "ralph"]],
      ["empty", ["run", "-n", "", "ralph"]],
      ["trailing garbage", ["run", "-n", "5abc", "ralph"]],
      ["negative fraction", ["run", "-n", "-0.5", "ralph"]],
      ["Infinity", ["run", "-n", "Infinity", "ralph"]],
      ["NaN", ["run", "-n", "NaN", "ralph"]],
    ]))("-n %s → usage error (with and without .loopx/)", async (_label, args) => {
      await expectUsageError(runtime, args, /-n/);
    });

    it("-n with an invalid value is rejected even when .loopx/ is broken", async () => {
      const cwd = brokenProject();
      const result = await runLoopx(runtime, ["run", "-n", "-1", "ralph"], { cwd, env: isolatedEnv() });
      expectOneLineError(result, /-n/);
      expect(result.stderr).not.toMatch(/bad\.name|index\.ts/);
    });
  });

  describe("options and target in any order (§4.2)", () => {
    it.each<[string, string[], string]>(tableFor(runtime, [
      ["-n before the target", ["run", "-n", "1", "ralph"], "ralph:index:unset\n"],
      ["-n after the target", ["run", "ralph", "-n", "1"], "ralph:index:unset\n"],
      ["-e before, -n after the target", ["run", "-e", "f", "ralph", "-n", "1"], "ralph:index:from-f\n"],
      ["-n and -e before a qualified target", ["run", "-n", "1", "-e", "f", "ralph:index"], "ralph:index:from-f\n"],
      ["target between -e and -n", ["run", "-e", "f", "ralph:check-ready", "-n", "1"], "ralph:check-ready:from-f\n"],
      ["-n 2 counts two executions", ["run", "ralph", "-n", "2"], "ralph:index:unset\nralph:index:unset\n"],
      ["workflow named version runs (not the built-in)", ["run", "-n", "1", "version"], "version:index:unset\n"],
      ["workflow named run", ["run", "-n", "1", "run"], "run:index:unset\n"],
      ["workflow named default", ["run", "-n", "1", "default"], "default:index:unset\n"],
      ["workflow named output", ["run", "output", "-n", "1"], "output:index:unset\n"],
    ]))("%s", async (_label, args, expected) => {
      const cwd = loopingProject();
      const result = await runLoopx(runtime, args, { cwd, env: isolatedEnv(), timeoutMs: 15_000 });
      expect(result.stderr).toBe("");
      expect(result.stdout).toBe("");
      expect(result.code).toBe(0);
      expect(readFileSync(join(cwd, "ran.log"), "utf8")).toBe(expected);
    });

    it("-n 0 validates the target but runs nothing", async () => {
      const cwd = loopingProject();
      const ok = await runLoopx(runtime, ["run", "ralph", "-n", "0"], { cwd, env: isolatedEnv() });
      expect(ok.code).toBe(0);
      expect(ok.stdout).toBe("");
      expect(existsSync(join(cwd, "ran.log"))).toBe(false);
      const missing = await runLoopx(runtime, ["run", "-n", "0", "nope"], { cwd, env: isolatedEnv() });
      expectOneLineError(missing, /nope/);
      expect(existsSync(join(cwd, "ran.log"))).toBe(false);
    });
  });
});
