/**
 * Environment handling of `loopx run` (spec §3.4, §6.1, §8): the global env file, `-e` files, the
 * .env dialect, injection precedence and the loopx-injected variables. Black-box: every test
 * observes the environment a real script sees by having it dump `env -0` to a trace file.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  BIN,
  REAL_BIN,
  RUNTIMES,
  isolatedEnv,
  makeProject,
  makeSymlink,
  runCommand,
  runLoopx,
  tempDir,
} from "./helpers.js";

/** Parses the output of `env -0` (NUL-separated KEY=VALUE records). */
function parseEnvDump(text: string): Map<string, string> {
  const vars = new Map<string, string>();
  for (const record of text.split("\0")) {
    if (record === "") continue;
    const eq = record.indexOf("=");
    vars.set(record.slice(0, eq), record.slice(eq + 1));
  }
  return vars;
}

/** A bash script that dumps its whole environment, NUL-separated, to `trace`. */
function dumpScript(trace: string): string {
  return `env -0 > '${trace}'\n`;
}

/** A project whose `w:index` dumps its environment once; returns the project root and trace path. */
function dumpProject(extraFiles: Record<string, string> = {}): { cwd: string; trace: string } {
  const cwd = tempDir();
  const trace = join(cwd, "env.trace");
  makeProject({ ".loopx/w/index.sh": dumpScript(trace), ...extraFiles }, cwd);
  return { cwd, trace };
}

/** Writes the global env file of an isolatedEnv() environment (`$XDG_CONFIG_HOME/loopx/env`). */
function writeGlobalEnv(env: Record<string, string>, content: string): string {
  const dir = join(env.XDG_CONFIG_HOME!, "loopx");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, "env");
  writeFileSync(path, content);
  return path;
}

function readDump(trace: string): Map<string, string> {
  return parseEnvDump(readFileSync(trace, "utf8"));
}

describe.each(RUNTIMES)("run: environment variables ($name)", (runtime) => {
  describe("global env file (§8.1)", () => {
    it("injects variables from $XDG_CONFIG_HOME/loopx/env into scripts", async () => {
      const { cwd, trace } = dumpProject();
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

    it("falls back to $HOME/.config/loopx/env when XDG_CONFIG_HOME is unset", async () => {
      const { cwd, trace } = dumpProject();
      const env = isolatedEnv({ XDG_CONFIG_HOME: undefined });
      mkdirSync(join(env.HOME!, ".config", "loopx"), { recursive: true });
      writeFileSync(join(env.HOME!, ".config", "loopx", "env"), "FROM_HOME_CONFIG=yes\n");
      const result = await runLoopx(runtime, ["run", "-n", "1", "w"], { cwd, env });
      expect(result.code).toBe(0);
      const dump = readDump(trace);
      expect(dump.has("XDG_CONFIG_HOME")).toBe(false);
      expect(dump.get("FROM_HOME_CONFIG")).toBe("yes");
    });

    it("uses XDG_CONFIG_HOME, not ~/.config, when XDG_CONFIG_HOME is set", async () => {
      const { cwd, trace } = dumpProject();
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

    it("treats a missing config directory as no global variables", async () => {
      const { cwd, trace } = dumpProject();
      const env = isolatedEnv();
      const result = await runLoopx(runtime, ["run", "-n", "1", "w"], { cwd, env });
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(existsSync(trace)).toBe(true);
    });

    it("applies the .env rules: comments, blanks, quotes, no escapes, trimming, inline #, duplicates", async () => {
      const { cwd, trace } = dumpProject();
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

    it("accepts CRLF line endings", async () => {
      const { cwd, trace } = dumpProject();
      const env = isolatedEnv();
      writeGlobalEnv(env, '# comment\r\nCR_A=one\r\nCR_B="two"\r\n\r\nCR_C=\'three\'\r\n');
      const result = await runLoopx(runtime, ["run", "-n", "1", "w"], { cwd, env });
      expect(result.code).toBe(0);
      const dump = readDump(trace);
      expect(dump.get("CR_A")).toBe("one");
      expect(dump.get("CR_B")).toBe("two");
      expect(dump.get("CR_C")).toBe("three");
    });

    it("accepts a file without a trailing newline", async () => {
      const { cwd, trace } = dumpProject();
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
      const { cwd, trace } = dumpProject();
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

    it("warns once per invalid line when several are present", async () => {
      const { cwd, trace } = dumpProject();
      const env = isolatedEnv();
      writeGlobalEnv(env, "1BAD=x\nGOOD=yes\nKEY WITH SPACES=x\nnoequals\n");
      const result = await runLoopx(runtime, ["run", "-n", "1", "w"], { cwd, env });
      expect(result.code).toBe(0);
      expect(readDump(trace).get("GOOD")).toBe("yes");
      expect(result.stderr.trim().split("\n").length).toBeGreaterThanOrEqual(3);
    });

    it("fails with exit 1 and a one-line error when the global env file is a directory", async () => {
      const { cwd, trace } = dumpProject();
      const env = isolatedEnv();
      mkdirSync(join(env.XDG_CONFIG_HOME!, "loopx", "env"), { recursive: true });
      const result = await runLoopx(runtime, ["run", "-n", "1", "w"], { cwd, env });
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).not.toBe("");
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
      expect(existsSync(trace)).toBe(false);
    });

    it("validates an unreadable global env file even with -n 0", async () => {
      const { cwd } = dumpProject();
      const env = isolatedEnv();
      mkdirSync(join(env.XDG_CONFIG_HOME!, "loopx", "env"), { recursive: true });
      const result = await runLoopx(runtime, ["run", "-n", "0", "w"], { cwd, env });
      expect(result.code).toBe(1);
    });
  });

  describe("local env file -e (§8.2)", () => {
    it("merges the -e file over the global file (local wins)", async () => {
      const { cwd, trace } = dumpProject({ "local.env": "SHARED=local\nLOCAL_ONLY=l\n" });
      const env = isolatedEnv();
      writeGlobalEnv(env, "SHARED=global\nGLOBAL_ONLY=g\n");
      const result = await runLoopx(runtime, ["run", "-n", "1", "-e", "local.env", "w"], { cwd, env });
      expect(result.code).toBe(0);
      const dump = readDump(trace);
      expect(dump.get("SHARED")).toBe("local");
      expect(dump.get("LOCAL_ONLY")).toBe("l");
      expect(dump.get("GLOBAL_ONLY")).toBe("g");
    });

    it("applies the same .env rules to the -e file", async () => {
      const { cwd, trace } = dumpProject({
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

    it("resolves a relative -e path against the invocation cwd, not the workflow directory", async () => {
      const { cwd, trace } = dumpProject({
        "conf/local.env": "WHERE=project-conf\n",
        ".loopx/w/conf/local.env": "WHERE=workflow-dir\n",
      });
      const result = await runLoopx(runtime, ["run", "-e", "conf/local.env", "-n", "1", "w"], { cwd, env: isolatedEnv() });
      expect(result.code).toBe(0);
      expect(readDump(trace).get("WHERE")).toBe("project-conf");
    });

    it("accepts an absolute -e path", async () => {
      const other = tempDir("loopx-envdir-");
      writeFileSync(join(other, "abs.env"), "ABS=1\n");
      const { cwd, trace } = dumpProject();
      const result = await runLoopx(runtime, ["run", "-n", "1", "w", "-e", join(other, "abs.env")], { cwd, env: isolatedEnv() });
      expect(result.code).toBe(0);
      expect(readDump(trace).get("ABS")).toBe("1");
    });

    it("exits 1 naming the file when the -e file does not exist, without running a script", async () => {
      const { cwd, trace } = dumpProject();
      const result = await runLoopx(runtime, ["run", "-n", "1", "-e", "no-such-file.env", "w"], { cwd, env: isolatedEnv() });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("no-such-file.env");
      expect(existsSync(trace)).toBe(false);
    });

    it("exits 1 for a missing -e file even with -n 0", async () => {
      const { cwd } = dumpProject();
      const result = await runLoopx(runtime, ["run", "-n", "0", "-e", "missing.env", "w"], { cwd, env: isolatedEnv() });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("missing.env");
    });

    it("exits 1 when -e points to a directory", async () => {
      const { cwd, trace } = dumpProject({ "envdir/placeholder.txt": "" });
      const result = await runLoopx(runtime, ["run", "-n", "1", "-e", "envdir", "w"], { cwd, env: isolatedEnv() });
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).not.toBe("");
      expect(existsSync(trace)).toBe(false);
    });
  });

  describe("injection (§8.3, §3.4, §6.1)", () => {
    it("precedence: system < global < local < LOOPX_BIN/LOOPX_PROJECT_ROOT/LOOPX_WORKFLOW", async () => {
      const { cwd, trace } = dumpProject({
        "local.env": [
          "IN_LOCAL=local",
          "IN_LOCAL_GLOBAL=local",
          "IN_ALL=local",
          "LOOPX_BIN=/bogus/local/bin",
          "LOOPX_PROJECT_ROOT=/bogus/local/root",
          "LOOPX_WORKFLOW=bogus-local",
          "",
        ].join("\n"),
      });
      const env = isolatedEnv({
        SYS_ONLY: "system",
        IN_GLOBAL: "system",
        IN_LOCAL_GLOBAL: "system",
        IN_ALL: "system",
        LOOPX_BIN: "/bogus/system/bin",
        LOOPX_PROJECT_ROOT: "/bogus/system/root",
        LOOPX_WORKFLOW: "bogus-system",
      });
      writeGlobalEnv(
        env,
        [
          "IN_GLOBAL=global",
          "IN_LOCAL_GLOBAL=global",
          "IN_ALL=global",
          "GLOBAL_ONLY=global",
          "LOOPX_BIN=/bogus/global/bin",
          "LOOPX_PROJECT_ROOT=/bogus/global/root",
          "LOOPX_WORKFLOW=bogus-global",
          "",
        ].join("\n"),
      );
      const result = await runLoopx(runtime, ["run", "-n", "1", "-e", "local.env", "w"], { cwd, env });
      expect(result.code).toBe(0);
      const dump = readDump(trace);
      expect(dump.get("SYS_ONLY")).toBe("system");
      expect(dump.get("GLOBAL_ONLY")).toBe("global");
      expect(dump.get("IN_GLOBAL")).toBe("global");
      expect(dump.get("IN_LOCAL")).toBe("local");
      expect(dump.get("IN_LOCAL_GLOBAL")).toBe("local");
      expect(dump.get("IN_ALL")).toBe("local");
      expect(dump.get("LOOPX_BIN")).toBe(REAL_BIN);
      expect(dump.get("LOOPX_PROJECT_ROOT")).toBe(cwd);
      expect(dump.get("LOOPX_WORKFLOW")).toBe("w");
      // The inherited environment is still there.
      expect(dump.get("HOME")).toBe(env.HOME);
      expect(dump.get("PATH")).toBe(env.PATH);
    });

    it("LOOPX_BIN is the realpath of dist/bin.js", async () => {
      const { cwd, trace } = dumpProject();
      const result = await runLoopx(runtime, ["run", "-n", "1", "w"], { cwd, env: isolatedEnv() });
      expect(result.code).toBe(0);
      expect(readDump(trace).get("LOOPX_BIN")).toBe(REAL_BIN);
    });

    it("LOOPX_BIN is the realpath even when loopx is started through a symlink (chain) to dist/bin.js", async () => {
      const { cwd, trace } = dumpProject();
      const links = tempDir("loopx-links-");
      makeSymlink(BIN, join(links, "first", "loopx"));
      makeSymlink(join(links, "first", "loopx"), join(links, "second", "loopx"));
      for (const link of [join(links, "first", "loopx"), join(links, "second", "loopx")]) {
        const result = await runCommand(runtime.exe, [link, "run", "-n", "1", "w"], { cwd, env: isolatedEnv() });
        expect(result.stderr).toBe("");
        expect(result.code).toBe(0);
        expect(readDump(trace).get("LOOPX_BIN")).toBe(REAL_BIN);
      }
    });

    it("LOOPX_BIN is the realpath when dist/ is reached through a symlinked directory", async () => {
      const { cwd, trace } = dumpProject();
      const links = tempDir("loopx-links-");
      makeSymlink(join(REAL_BIN, ".."), join(links, "dist-link"));
      const result = await runCommand(runtime.exe, [join(links, "dist-link", "bin.js"), "run", "-n", "1", "w"], {
        cwd,
        env: isolatedEnv(),
      });
      expect(result.code).toBe(0);
      expect(readDump(trace).get("LOOPX_BIN")).toBe(REAL_BIN);
    });

    it("a bash script can call `$LOOPX_BIN output --result x --goto y` and the loop follows it", async () => {
      const cwd = tempDir();
      const trace = join(cwd, "goto.trace");
      makeProject(
        {
          ".loopx/w/index.sh": `echo "index" >> '${trace}'\n$LOOPX_BIN output --result "payload with spaces" --goto next\n`,
          ".loopx/w/next.sh": `printf 'next:%s\\n' "$(cat)" >> '${trace}'\n"$LOOPX_BIN" output --stop\n`,
        },
        cwd,
      );
      const result = await runLoopx(runtime, ["run", "-n", "10", "w"], { cwd, env: isolatedEnv() });
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.stdout).toBe("");
      expect(readFileSync(trace, "utf8")).toBe("index\nnext:payload with spaces\n");
    });

    it("LOOPX_PROJECT_ROOT is the absolute invocation cwd while scripts run in the workflow directory", async () => {
      const cwd = tempDir();
      const trace = join(cwd, "root.trace");
      makeProject({ ".loopx/w/index.sh": `printf '%s\\n%s\\n' "$LOOPX_PROJECT_ROOT" "$PWD" > '${trace}'\n` }, cwd);
      const result = await runLoopx(runtime, ["run", "-n", "1", "w"], { cwd, env: isolatedEnv() });
      expect(result.code).toBe(0);
      const [root, pwd] = readFileSync(trace, "utf8").split("\n");
      expect(root).toBe(cwd);
      expect(root!.startsWith("/")).toBe(true);
      expect(pwd).toBe(join(cwd, ".loopx", "w"));
    });

    it("LOOPX_WORKFLOW follows cross-workflow gotos and bare gotos stay in the new workflow", async () => {
      const cwd = tempDir();
      const trace = join(cwd, "wf.trace");
      makeProject(
        {
          ".loopx/alpha/index.sh": `echo "alpha:index:$LOOPX_WORKFLOW" >> '${trace}'\n$LOOPX_BIN output --goto beta:index\n`,
          ".loopx/beta/index.sh": `echo "beta:index:$LOOPX_WORKFLOW" >> '${trace}'\n$LOOPX_BIN output --goto next\n`,
          ".loopx/beta/next.ts": `import { appendFileSync } from "node:fs";\nappendFileSync(${JSON.stringify(trace)}, \`beta:next:\${process.env.LOOPX_WORKFLOW}\\n\`);\n`,
        },
        cwd,
      );
      // 4 iterations: alpha → beta:index → beta:next → (reset) alpha.
      const result = await runLoopx(runtime, ["run", "-n", "4", "alpha"], { cwd, env: isolatedEnv() });
      expect(result.code).toBe(0);
      expect(readFileSync(trace, "utf8")).toBe("alpha:index:alpha\nbeta:index:beta\nbeta:next:beta\nalpha:index:alpha\n");
    });

    it("reads env files once at loop start: rewriting them mid-loop changes nothing for later iterations", async () => {
      const cwd = tempDir();
      const trace = join(cwd, "once.trace");
      const env = isolatedEnv();
      const globalPath = writeGlobalEnv(env, "G_VAR=first\n");
      const localPath = join(cwd, "local.env");
      makeProject(
        {
          "local.env": "L_VAR=first\n",
          ".loopx/w/index.sh": [
            `echo "$G_VAR/$L_VAR/\${G_NEW:-none}" >> '${trace}'`,
            `printf 'G_VAR=second\\nG_NEW=new\\n' > '${globalPath}'`,
            `printf 'L_VAR=second\\n' > '${localPath}'`,
            "",
          ].join("\n"),
        },
        cwd,
      );
      const result = await runLoopx(runtime, ["run", "-n", "3", "-e", "local.env", "w"], { cwd, env });
      expect(result.code).toBe(0);
      expect(readFileSync(trace, "utf8")).toBe("first/first/none\nfirst/first/none\nfirst/first/none\n");
      // The script really did rewrite the files.
      expect(readFileSync(globalPath, "utf8")).toContain("G_VAR=second");
    });
  });
});
