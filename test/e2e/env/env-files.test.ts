/**
 * The env files loopx reads (spec §8.1 global, §8.2 `-e`), as `loopx run` sees them: the .env
 * dialect, where the global file lives, the -e path, and files that cannot be read — unreadable
 * (loopx as an unprivileged user, since root reads a mode-000 file anyway), a FIFO nobody writes
 * to, /dev/zero, a symlink to a directory, a directory: one clear line, never a hang, never a
 * rewritten file. `env set`/`env list` on the same files: cli-env.test.ts.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RUNTIMES, expectOneLineError, giveToUnprivileged, isolatedEnv, makeProject, runLoopx, runLoopxUnprivileged, tempDir } from "../../helpers.js";
import { itFor } from "../../case-tables.js";
import { dumpProject, globalEnvFile, readDump, writeGlobalEnv } from "../../fixtures/env/support.js";

describe.each(RUNTIMES)("run: environment variables ($name)", (runtime) => {
  // Loopx's own logic: every test under Node, every third under Bun (test/case-tables.ts).
  const test = itFor(runtime);
  describe("global env file (§8.1)", () => {
    test("injects variables from $XDG_CONFIG_HOME/loopx/env into scripts", async () => {
      const { cwd, dump: trace } = dumpProject();
      const env = isolatedEnv();
      writeGlobalEnv(env, "GLOBAL_ONE=alpha\nGLOBAL_TWO=beta\n");
      const result = await runLoopx(runtime, ["run", "-n", "1", "w"], { cwd, env });
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      const dump = readDump(trace);
      expect(dump.get("GLOBAL_ONE")).toBe("alpha");
      expect(dump.get("GLOBAL_TWO")).toBe("beta");
    });

    it("injects global variables into JS/TS scripts too", async () => {
      const cwd = tempDir();
      const trace = join(cwd, "ts.trace");
      makeProject(
        {
          ".loopx/w/index.ts": `import { writeFileSync } from "node:fs";\nconst value: string = process.env.FROM_GLOBAL ?? "unset";\nwriteFileSync(${JSON.stringify(trace)}, value);\n`,
        },
        cwd,
      );
      const env = isolatedEnv();
      writeGlobalEnv(env, "FROM_GLOBAL=visible-in-ts\n");
      const result = await runLoopx(runtime, ["run", "-n", "1", "w"], { cwd, env });
      expect(result.code).toBe(0);
      expect(readFileSync(trace, "utf8")).toBe("visible-in-ts");
    });

    test("falls back to $HOME/.config/loopx/env when XDG_CONFIG_HOME is unset", async () => {
      const { cwd, dump: trace } = dumpProject();
      const env = isolatedEnv({ XDG_CONFIG_HOME: undefined });
      mkdirSync(join(env.HOME!, ".config", "loopx"), { recursive: true });
      writeFileSync(join(env.HOME!, ".config", "loopx", "env"), "FROM_HOME_CONFIG=yes\n");
      const result = await runLoopx(runtime, ["run", "-n", "1", "w"], { cwd, env });
      expect(result.code).toBe(0);
      const dump = readDump(trace);
      expect(dump.has("XDG_CONFIG_HOME")).toBe(false);
      expect(dump.get("FROM_HOME_CONFIG")).toBe("yes");
    });

    test("uses XDG_CONFIG_HOME, not ~/.config, when XDG_CONFIG_HOME is set", async () => {
      const { cwd, dump: trace } = dumpProject();
      const env = isolatedEnv({ XDG_CONFIG_HOME: tempDir("loopx-xdg-") });
      mkdirSync(join(env.HOME!, ".config", "loopx"), { recursive: true });
      writeFileSync(join(env.HOME!, ".config", "loopx", "env"), "WHICH=home\nONLY_HOME=1\n");
      writeGlobalEnv(env, "WHICH=xdg\n");
      const result = await runLoopx(runtime, ["run", "-n", "1", "w"], { cwd, env });
      expect(result.code).toBe(0);
      const dump = readDump(trace);
      expect(dump.get("WHICH")).toBe("xdg");
      expect(dump.has("ONLY_HOME")).toBe(false);
    });

    test("treats a missing config directory as no global variables", async () => {
      const { cwd, dump: trace } = dumpProject();
      const env = isolatedEnv();
      const result = await runLoopx(runtime, ["run", "-n", "1", "w"], { cwd, env });
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(existsSync(trace)).toBe(true);
    });

    test("applies the .env rules: comments, blanks, quotes, no escapes, trimming, inline #, duplicates", async () => {
      const { cwd, dump: trace } = dumpProject();
      const env = isolatedEnv();
      writeGlobalEnv(
        env,
        [
          "# a comment line",
          "#COMMENTED=should-not-appear",
          "",
          "   ",
          "\t",
          "PLAIN=hello",
          'DQ="quoted value"',
          "SQ='single value'",
          'UNMATCHED_D="hello',
          "UNMATCHED_S='world",
          'MIXED_QUOTES="mixed\'',
          'ESC="a\\nb"',
          "ESC_BARE=c\\td",
          "TRAIL=trailing   \t ",
          'QUOTED_TRAIL="inner  "   ',
          "LEAD_SPACE=  leading",
          "INLINE=value # not a comment",
          "HASH_ONLY=#",
          "DUP=first",
          "DUP=second",
          "EMPTY=",
          'EMPTY_DQ=""',
          "EQUALS=a=b=c",
          'LONE_QUOTE="',
          'INNER="x"y"',
          "_UNDERSCORE_1=ok",
          "",
        ].join("\n"),
      );
      const result = await runLoopx(runtime, ["run", "-n", "1", "w"], { cwd, env });
      expect(result.stderr).toBe(""); // every line above is valid or ignorable: no warnings
      expect(result.code).toBe(0);
      const dump = readDump(trace);
      expect(dump.has("COMMENTED")).toBe(false);
      expect(dump.has("#COMMENTED")).toBe(false);
      expect(dump.get("PLAIN")).toBe("hello");
      expect(dump.get("DQ")).toBe("quoted value");
      expect(dump.get("SQ")).toBe("single value");
      expect(dump.get("UNMATCHED_D")).toBe('"hello');
      expect(dump.get("UNMATCHED_S")).toBe("'world");
      expect(dump.get("MIXED_QUOTES")).toBe("\"mixed'");
      expect(dump.get("ESC")).toBe("a\\nb");
      expect(dump.get("ESC_BARE")).toBe("c\\td");
      expect(dump.get("TRAIL")).toBe("trailing");
      expect(dump.get("QUOTED_TRAIL")).toBe("inner  ");
      expect(dump.get("LEAD_SPACE")).toBe("  leading");
      expect(dump.get("INLINE")).toBe("value # not a comment");
      expect(dump.get("HASH_ONLY")).toBe("#");
      expect(dump.get("DUP")).toBe("second");
      expect(dump.get("EMPTY")).toBe("");
      expect(dump.get("EMPTY_DQ")).toBe("");
      expect(dump.get("EQUALS")).toBe("a=b=c");
      expect(dump.get("LONE_QUOTE")).toBe('"');
      expect(dump.get("INNER")).toBe('x"y');
      expect(dump.get("_UNDERSCORE_1")).toBe("ok");
    });

    test("accepts CRLF line endings", async () => {
      const { cwd, dump: trace } = dumpProject();
      const env = isolatedEnv();
      writeGlobalEnv(env, '# comment\r\nCR_A=one\r\nCR_B="two"\r\n\r\nCR_C=\'three\'\r\n');
      const result = await runLoopx(runtime, ["run", "-n", "1", "w"], { cwd, env });
      expect(result.code).toBe(0);
      const dump = readDump(trace);
      expect(dump.get("CR_A")).toBe("one");
      expect(dump.get("CR_B")).toBe("two");
      expect(dump.get("CR_C")).toBe("three");
    });

    test("accepts a file without a trailing newline", async () => {
      const { cwd, dump: trace } = dumpProject();
      const env = isolatedEnv();
      writeGlobalEnv(env, "FIRST=1\nLAST=no-newline");
      const result = await runLoopx(runtime, ["run", "-n", "1", "w"], { cwd, env });
      expect(result.code).toBe(0);
      expect(readDump(trace).get("LAST")).toBe("no-newline");
    });

    it.each([
      ["1BAD=x", ["1BAD"]],
      ["KEY WITH SPACES=x", ["KEY WITH SPACES", "KEY"]],
      ["noequals", ["noequals"]],
      ["SPACED =x", ["SPACED ", "SPACED"]],
      ["BAD-DASH=x", ["BAD-DASH"]],
      ["export EXPORTED=x", ["export EXPORTED", "EXPORTED"]],
    ])("an invalid line %j is ignored with a warning and the loop still runs", async (line, absentKeys) => {
      const { cwd, dump: trace } = dumpProject();
      const env = isolatedEnv();
      writeGlobalEnv(env, `BEFORE=1\n${line}\nAFTER_LINE=2\n`);
      const result = await runLoopx(runtime, ["run", "-n", "1", "w"], { cwd, env });
      expect(result.code).toBe(0);
      const dump = readDump(trace);
      expect(dump.get("BEFORE")).toBe("1");
      expect(dump.get("AFTER_LINE")).toBe("2");
      for (const key of absentKeys) expect(dump.has(key)).toBe(false);
      expect(result.stderr.trim()).not.toBe("");
    });

    test("warns once per invalid line when several are present", async () => {
      const { cwd, dump: trace } = dumpProject();
      const env = isolatedEnv();
      writeGlobalEnv(env, "1BAD=x\nGOOD=yes\nKEY WITH SPACES=x\nnoequals\n");
      const result = await runLoopx(runtime, ["run", "-n", "1", "w"], { cwd, env });
      expect(result.code).toBe(0);
      expect(readDump(trace).get("GOOD")).toBe("yes");
      expect(result.stderr.trim().split("\n").length).toBeGreaterThanOrEqual(3);
    });

    test("fails with exit 1 and a one-line error when the global env file is a directory", async () => {
      const { cwd, dump: trace } = dumpProject();
      const env = isolatedEnv();
      mkdirSync(join(env.XDG_CONFIG_HOME!, "loopx", "env"), { recursive: true });
      const result = await runLoopx(runtime, ["run", "-n", "1", "w"], { cwd, env });
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).not.toBe("");
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
      expect(existsSync(trace)).toBe(false);
    });

    test("validates an unreadable global env file even with -n 0", async () => {
      const { cwd } = dumpProject();
      const env = isolatedEnv();
      mkdirSync(join(env.XDG_CONFIG_HOME!, "loopx", "env"), { recursive: true });
      const result = await runLoopx(runtime, ["run", "-n", "0", "w"], { cwd, env });
      expect(result.code).toBe(1);
    });
  });

  describe("local env file -e (§8.2)", () => {
    test("merges the -e file over the global file (local wins)", async () => {
      const { cwd, dump: trace } = dumpProject({ "local.env": "SHARED=local\nLOCAL_ONLY=l\n" });
      const env = isolatedEnv();
      writeGlobalEnv(env, "SHARED=global\nGLOBAL_ONLY=g\n");
      const result = await runLoopx(runtime, ["run", "-n", "1", "-e", "local.env", "w"], { cwd, env });
      expect(result.code).toBe(0);
      const dump = readDump(trace);
      expect(dump.get("SHARED")).toBe("local");
      expect(dump.get("LOCAL_ONLY")).toBe("l");
      expect(dump.get("GLOBAL_ONLY")).toBe("g");
    });

    test("applies the same .env rules to the -e file", async () => {
      const { cwd, dump: trace } = dumpProject({
        "local.env": '# c\n\nQ="a b"\nS=\'x\'\nU="open\nINL=v # h\nD=1\nD=2\n1BAD=no\n',
      });
      const env = isolatedEnv();
      const result = await runLoopx(runtime, ["run", "-n", "1", "-e", "local.env", "w"], { cwd, env });
      expect(result.code).toBe(0);
      expect(result.stderr.trim()).not.toBe(""); // the 1BAD line
      const dump = readDump(trace);
      expect(dump.get("Q")).toBe("a b");
      expect(dump.get("S")).toBe("x");
      expect(dump.get("U")).toBe('"open');
      expect(dump.get("INL")).toBe("v # h");
      expect(dump.get("D")).toBe("2");
      expect(dump.has("1BAD")).toBe(false);
    });

    test("resolves a relative -e path against the invocation cwd, not the workflow directory", async () => {
      const { cwd, dump: trace } = dumpProject({
        "conf/local.env": "WHERE=project-conf\n",
        ".loopx/w/conf/local.env": "WHERE=workflow-dir\n",
      });
      const result = await runLoopx(runtime, ["run", "-e", "conf/local.env", "-n", "1", "w"], { cwd, env: isolatedEnv() });
      expect(result.code).toBe(0);
      expect(readDump(trace).get("WHERE")).toBe("project-conf");
    });

    test("accepts an absolute -e path", async () => {
      const other = tempDir("loopx-envdir-");
      writeFileSync(join(other, "abs.env"), "ABS=1\n");
      const { cwd, dump: trace } = dumpProject();
      const result = await runLoopx(runtime, ["run", "-n", "1", "w", "-e", join(other, "abs.env")], { cwd, env: isolatedEnv() });
      expect(result.code).toBe(0);
      expect(readDump(trace).get("ABS")).toBe("1");
    });

    test("exits 1 naming the file when the -e file does not exist, without running a script", async () => {
      const { cwd, dump: trace } = dumpProject();
      const result = await runLoopx(runtime, ["run", "-n", "1", "-e", "no-such-file.env", "w"], { cwd, env: isolatedEnv() });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("no-such-file.env");
      expect(existsSync(trace)).toBe(false);
    });

    test("exits 1 for a missing -e file even with -n 0", async () => {
      const { cwd } = dumpProject();
      const result = await runLoopx(runtime, ["run", "-n", "0", "-e", "missing.env", "w"], { cwd, env: isolatedEnv() });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("missing.env");
    });

    test("exits 1 when -e points to a directory", async () => {
      const { cwd, dump: trace } = dumpProject({ "envdir/placeholder.txt": "" });
      const result = await runLoopx(runtime, ["run", "-n", "1", "-e", "envdir", "w"], { cwd, env: isolatedEnv() });
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).not.toBe("");
      expect(existsSync(trace)).toBe(false);
    });
  });
});

describe.concurrent.each(RUNTIMES)("env files that cannot be read ($name)", (runtime) => {
  describe("an unreadable global env file (loopx running as an unprivileged user)", () => {
    function nobodySetup() {
      const { cwd, dump } = dumpProject({ "local.env": "LOCAL=1\n" });
      const env = isolatedEnv();
      const file = writeGlobalEnv(env, 'SECRET="s3cr3t"\n');
      giveToUnprivileged(env.HOME!);
      giveToUnprivileged(cwd);
      chmodSync(file, 0o000);
      return { cwd, dump, env, file };
    }

    it("run (also with -n 0 and with -e) exits 1 with one line naming the file; no script runs", async ({ expect }) => {
      const s = nobodySetup();
      for (const args of [["run", "-n", "1", "w"], ["run", "-n", "0", "w"], ["run", "-n", "1", "-e", "local.env", "w"]]) {
        const result = await runLoopxUnprivileged(runtime, args, { cwd: s.cwd, env: s.env });
        expectOneLineError(result, s.file, "permission denied");
      }
      expect(existsSync(s.dump)).toBe(false);
    });

    it("env list, set and remove exit 1 with one line and never rewrite (or replace) the file", async ({ expect }) => {
      const s = nobodySetup();
      const before = { ino: statSync(s.file).ino, mode: statSync(s.file).mode, text: readFileSync(s.file, "utf8") };
      for (const args of [["env", "list"], ["env", "set", "SECRET", "overwritten"], ["env", "set", "NEW", "v"], ["env", "remove", "SECRET"]]) {
        const result = await runLoopxUnprivileged(runtime, args, { cwd: s.cwd, env: s.env });
        expectOneLineError(result, s.file);
        const after = statSync(s.file);
        expect({ ino: after.ino, mode: after.mode, text: readFileSync(s.file, "utf8") }, args.join(" ")).toEqual(before);
      }
      expect(readdirSync(join(s.file, ".."))).toEqual(["env"]);
    });

    it("an unreadable config directory: run and env list exit 1 with one line; env set writes nothing", async ({ expect }) => {
      const { cwd, dump } = dumpProject();
      const env = isolatedEnv();
      const file = writeGlobalEnv(env, 'A="1"\n');
      giveToUnprivileged(env.HOME!);
      giveToUnprivileged(cwd);
      chmodSync(join(file, ".."), 0o000);
      for (const args of [["run", "-n", "1", "w"], ["env", "list"], ["env", "set", "B", "2"]]) {
        expectOneLineError(await runLoopxUnprivileged(runtime, args, { cwd, env }));
      }
      chmodSync(join(file, ".."), 0o700);
      expect(readdirSync(join(file, ".."))).toEqual(["env"]);
      expect(readFileSync(file, "utf8")).toBe('A="1"\n');
      expect(existsSync(dump)).toBe(false);
    });
  });

  describe("odd file types: never a hang, always one clear line", () => {
    const TIMEOUT = 15_000;

    it("global env file is a FIFO nobody writes to: run, env list and env set fail promptly", async ({ expect }) => {
      const { cwd, dump } = dumpProject();
      const env = isolatedEnv();
      mkdirSync(join(globalEnvFile(env), ".."), { recursive: true });
      execFileSync("mkfifo", [globalEnvFile(env)]);
      for (const args of [["run", "-n", "1", "w"], ["run", "-n", "0", "w"], ["env", "list"], ["env", "set", "A", "1"], ["env", "remove", "A"]]) {
        const started = Date.now();
        const result = await runLoopx(runtime, args, { cwd, env, timeoutMs: TIMEOUT });
        expectOneLineError(result, globalEnvFile(env));
        expect(Date.now() - started).toBeLessThan(10_000);
      }
      expect(lstatSync(globalEnvFile(env)).isFIFO()).toBe(true); // env set did not replace it
      expect(existsSync(dump)).toBe(false);
    });

    it.for([
      ["a FIFO nobody writes to", "fifo"],
      ["/dev/zero (endless)", "/dev/zero"],
      ["a symlink to a directory", "dirlink"],
      ["a directory, with -n 0", "dir"],
    ] as const)("-e at %s: exit 1 promptly with one line naming it; no script runs", async ([, kind], { expect }) => {
      const { cwd, dump } = dumpProject({ "envdir/x.env": "A=1\n" });
      let path: string = kind;
      if (kind === "fifo") execFileSync("mkfifo", [(path = join(cwd, "pipe.env"))]);
      if (kind === "dirlink") symlinkSync(join(cwd, "envdir"), (path = join(cwd, "link.env")));
      if (kind === "dir") path = join(cwd, "envdir");
      const args = kind === "dir" ? ["run", "-n", "0", "-e", path, "w"] : ["run", "-n", "1", "-e", path, "w"];
      const started = Date.now();
      const result = await runLoopx(runtime, args, { cwd, env: isolatedEnv(), timeoutMs: TIMEOUT });
      expectOneLineError(result, path);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(existsSync(dump)).toBe(false);
    });

    it("global env file is a symlink into a dotfiles directory: env set updates the target and keeps the link", async ({ expect }) => {
      const env = isolatedEnv();
      const dotfiles = tempDir("loopx-dotfiles-");
      const target = join(dotfiles, "loopx.env");
      writeFileSync(target, '# mine\nA="1"\n');
      mkdirSync(join(globalEnvFile(env), ".."), { recursive: true });
      symlinkSync(target, globalEnvFile(env));
      const cwd = tempDir();
      const set = await runLoopx(runtime, ["env", "set", "B", "2"], { cwd, env });
      expect(set.stderr).toBe("");
      expect(set.code).toBe(0);
      const list = await runLoopx(runtime, ["env", "list"], { cwd, env });
      expect(list.stdout).toBe("A=1\nB=2\n");
      // Nothing lost: the link still points at the dotfiles copy, which holds the new value.
      expect(lstatSync(globalEnvFile(env)).isSymbolicLink()).toBe(true);
      expect(readlinkSync(globalEnvFile(env))).toBe(target);
      expect(readFileSync(target, "utf8")).toBe('# mine\nA="1"\nB="2"\n');
    });

    it("global env file is a dangling symlink: treated as absent by run and list", async ({ expect }) => {
      const { cwd, dump } = dumpProject();
      const env = isolatedEnv();
      mkdirSync(join(globalEnvFile(env), ".."), { recursive: true });
      symlinkSync(join(tempDir(), "missing.env"), globalEnvFile(env));
      const run = await runLoopx(runtime, ["run", "-n", "1", "w"], { cwd, env });
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      expect(existsSync(dump)).toBe(true);
      const list = await runLoopx(runtime, ["env", "list"], { cwd, env });
      expect(list.code).toBe(0);
      expect(list.stdout).toBe("");
    });
  });
});
