/**
 * `-h`/`--help` on every command and subcommand shows that command's help (seen before:
 * `env set -h` → "missing argument", `env remove -h` → `invalid variable name "-h"`, `env list -h`
 * → "unexpected argument"), and top-level `--version` stays a usage error (spec §4.2: -h is the
 * only top-level option) whose message points to `loopx version`. Black-box: spawns the built CLI.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RUNTIMES, expectOneLineError, isolatedEnv, runLoopx, snapshotTree, tempDir } from "../../helpers.js";
import { tableFor } from "../../case-tables.js";

/** Each (sub)command, and the command whose help it shows (`loopx help <command>`: its own). */
const COMMANDS: Array<[path: string[], helpOf: string[]]> = [
  [["version"], ["version"]],
  [["output"], ["output"]],
  [["env"], ["env"]],
  [["env", "set"], ["help", "env", "set"]],
  [["env", "remove"], ["help", "env", "remove"]],
  [["env", "list"], ["help", "env", "list"]],
  [["runs"], ["runs"]],
  [["runs", "show"], ["help", "runs", "show"]],
  [["runs", "tail"], ["help", "runs", "tail"]],
  [["install"], ["install"]],
];

describe.concurrent.each(RUNTIMES)("-h on every (sub)command ($name)", (runtime) => {
  it.each(tableFor(runtime, COMMANDS))("loopx %j -h / --help: its help on stdout, exit 0, nothing written", async (path, helpOf) => {
    const reference = await runLoopx(runtime, helpOf[0] === "help" ? helpOf : [...helpOf, "--help"], { cwd: tempDir(), env: isolatedEnv() });
    expect(reference.code).toBe(0);
    expect(reference.stdout).toMatch(new RegExp(`^Usage:[\\s\\S]*loopx ${path.join(" ")}\\b`));
    for (const flag of ["-h", "--help"]) {
      const cwd = tempDir();
      const env = isolatedEnv();
      const before = [snapshotTree(cwd), snapshotTree(env.HOME!)];
      const result = await runLoopx(runtime, [...path, flag], { cwd, env });
      const label = `loopx ${[...path, flag].join(" ")}`;
      expect(result.stderr, label).toBe("");
      expect(result.code, label).toBe(0);
      expect(result.stdout, label).toBe(reference.stdout);
      expect([snapshotTree(cwd), snapshotTree(env.HOME!)], label).toEqual(before);
    }
  });

  it("env set <name> -h still stores the value -h (a value is data, only the name position asks for help)", async () => {
    const env = isolatedEnv();
    const set = await runLoopx(runtime, ["env", "set", "K", "-h"], { cwd: tempDir(), env });
    expect(set.code).toBe(0);
    expect(set.stdout).toBe("");
    expect(readFileSync(join(env.XDG_CONFIG_HOME!, "loopx", "env"), "utf8")).toBe('K="-h"\n');
  });

  it.each([["--version"], ["-V"], ["-v"]])("loopx %s: usage error (exit 1) pointing to 'loopx version'", async (flag) => {
    const result = await runLoopx(runtime, [flag], { cwd: tempDir(), env: isolatedEnv() });
    expectOneLineError(result, new RegExp(`unknown option "${flag}".*loopx version`));
  });
});
