/**
 * The environment of a script under `loopx run` (spec §3.4, §6.1, §8.3): injection precedence,
 * the loopx-injected variables, env files read once per run, a NUL byte in an env value. Reading
 * the env files themselves: env-files.test.ts. Black-box: every test observes the environment a
 * real script sees by having it dump `env -0` to a file.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  BIN,
  REAL_BIN,
  RUNTIMES,
  expectOneLineError,
  isolatedEnv,
  makeProject,
  makeSymlink,
  runCommand,
  runLoopx,
  tempDir,
} from "../../helpers.js";
import { dumpProject, globalEnvFile, readDump, writeGlobalEnv } from "../../fixtures/env/support.js";

describe.each(RUNTIMES)("run: environment variables ($name)", (runtime) => {
  describe("injection (§8.3, §3.4, §6.1)", () => {
    it("precedence: system < global < local < LOOPX_BIN/LOOPX_PROJECT_ROOT/LOOPX_WORKFLOW", async () => {
      const { cwd, dump: trace } = dumpProject({
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
      const { cwd, dump: trace } = dumpProject();
      const result = await runLoopx(runtime, ["run", "-n", "1", "w"], { cwd, env: isolatedEnv() });
      expect(result.code).toBe(0);
      expect(readDump(trace).get("LOOPX_BIN")).toBe(REAL_BIN);
    });

    it("LOOPX_BIN is the realpath even when loopx is started through a symlink (chain) to dist/bin.js", async () => {
      const { cwd, dump: trace } = dumpProject();
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
      const { cwd, dump: trace } = dumpProject();
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

  describe("a NUL byte in an env value", () => {
    it.for(["global", "-e"] as const)("%s file: the problem is reported against the env file (warning or error), never blamed on a script", async (where, { expect }) => {
      const text = Buffer.from("GOOD=yes\nBAD=a\0b\n");
      const { cwd, dump } = dumpProject();
      const env = isolatedEnv();
      if (where === "global") writeGlobalEnv(env, text);
      else writeFileSync(join(cwd, "local.env"), text);
      const path = where === "global" ? globalEnvFile(env) : join(cwd, "local.env");
      const extra = where === "-e" ? ["-e", "local.env"] : [];
      const result = await runLoopx(runtime, ["run", "-n", "1", ...extra, "w"], { cwd, env });
      const zero = await runLoopx(runtime, ["run", "-n", "0", ...extra, "w"], { cwd, env });
      expect(result.stderr).not.toContain("internal error");
      expect(result.stderr).not.toMatch(/script w:index/);
      if (result.code === 0) {
        // Skipped with a warning naming the file; the rest of the file still applies.
        expect(result.stderr).toContain(path);
        const vars = readDump(dump);
        expect(vars.get("GOOD")).toBe("yes");
        expect(vars.has("BAD")).toBe(false);
        expect(zero.code).toBe(0);
      } else {
        // Or refused up front, naming the file, before any script — with -n 0 as well (§7.1 step 2).
        expectOneLineError(result, path);
        expect(existsSync(dump)).toBe(false);
        expectOneLineError(zero, path);
      }
    });
  });
});
