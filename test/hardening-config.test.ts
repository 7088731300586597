/**
 * Hardening — config files (issue "faults, hostile input and long runs", item 6). Extends
 * run-env / cli-env (which cover a directory-shaped global env file, `-e` at a directory and
 * `env set` rejecting \n / \r) with:
 *
 * - a global env file that is really unreadable: loopx runs as an unprivileged user (uid 65534),
 *   since root reads a mode-000 file anyway; `run` (even -n 0), `env list/set/remove` all fail with
 *   one line and never rewrite the file; an unreadable config *directory* too;
 * - global env file or `-e` at a FIFO nobody writes to, at /dev/zero, at a symlink to a
 *   directory: a prompt one-line error, never a hang;
 * - a global env file that is a symlink into a dotfiles directory: `env set` must update the file
 *   it points to and keep the link;
 * - CR in env files: CRLF files with tricky quoted values (global and `-e`), `env set` into a
 *   CRLF file, a lone CR line, and CRs inside values / CR-only line endings (script env and
 *   `env list` agree);
 * - a NUL byte in an env value: the error (or warning) must point at the env file, not at a script;
 * - 20 concurrent `env set` processes (distinct keys, one key, and with concurrent readers): the
 *   spec leaves the outcome undefined, but the file must always parse, every surviving value must be
 *   exact and no temp file may be left behind.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseEnvFile } from "../src/core/envfile.js";
import { RUNTIMES, giveToUnprivileged, isolatedEnv, runLoopxUnprivileged, makeProject, runLoopx, tempDir, type RunResult, type Runtime } from "./helpers.js";

// ---------------------------------------------------------------------------------------------
// Local helpers
// ---------------------------------------------------------------------------------------------

/** Runs loopx as the unprivileged user (the suite runs as root in CI; see helpers.unprivileged). */
function runAsNobody(runtime: Runtime, args: string[], cwd: string, env: Record<string, string>): Promise<RunResult> {
  return runLoopxUnprivileged(runtime, args, { cwd, env });
}

/** Exactly one `loopx:` line on stderr (containing every needle), nothing on stdout, exit 1. */
function expectOneLineError(result: RunResult, ...needles: string[]): void {
  expect(result.stdout).toBe("");
  expect(result.stderr).toMatch(/^loopx: [^\n]*\n$/);
  expect(result.stderr).not.toContain("internal error");
  for (const needle of needles) expect(result.stderr).toContain(needle);
  expect(result.code).toBe(1);
}

/** The global env file path of an isolatedEnv() environment. */
const globalFile = (env: Record<string, string>) => join(env.XDG_CONFIG_HOME!, "loopx", "env");

function writeGlobal(env: Record<string, string>, text: string | Buffer): string {
  const file = globalFile(env);
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, text);
  return file;
}

function parseDump(file: string): Map<string, string> {
  const vars = new Map<string, string>();
  for (const record of readFileSync(file, "utf8").split("\0")) {
    if (record === "") continue;
    const eq = record.indexOf("=");
    vars.set(record.slice(0, eq), record.slice(eq + 1));
  }
  return vars;
}

/** A project whose w:index dumps its environment (NUL-separated) to env.dump. */
function dumpProject(files: Record<string, string> = {}): { cwd: string; dump: string } {
  const cwd = makeProject({ ".loopx/w/index.sh": 'env -0 > "$LOOPX_PROJECT_ROOT/env.dump"\n', ...files });
  return { cwd, dump: join(cwd, "env.dump") };
}

/** Parses `env list` output (KEY=VALUE lines; values never contain \n). */
function parseList(stdout: string): Map<string, string> {
  return new Map(stdout.split("\n").filter(Boolean).map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)] as const));
}


// ---------------------------------------------------------------------------------------------

describe.concurrent.each(RUNTIMES)("hardening: config files ($name)", (runtime) => {
  describe("an unreadable global env file (loopx running as an unprivileged user)", () => {
    function nobodySetup() {
      const { cwd, dump } = dumpProject({ "local.env": "LOCAL=1\n" });
      const env = isolatedEnv();
      const file = writeGlobal(env, 'SECRET="s3cr3t"\n');
      giveToUnprivileged(env.HOME!);
      giveToUnprivileged(cwd);
      chmodSync(file, 0o000);
      return { cwd, dump, env, file };
    }

    it("run (also with -n 0 and with -e) exits 1 with one line naming the file; no script runs", async ({ expect }) => {
      const s = nobodySetup();
      for (const args of [["run", "-n", "1", "w"], ["run", "-n", "0", "w"], ["run", "-n", "1", "-e", "local.env", "w"]]) {
        const result = await runAsNobody(runtime, args, s.cwd, s.env);
        expectOneLineError(result, s.file, "permission denied");
      }
      expect(existsSync(s.dump)).toBe(false);
    });

    it("env list, set and remove exit 1 with one line and never rewrite (or replace) the file", async ({ expect }) => {
      const s = nobodySetup();
      const before = { ino: statSync(s.file).ino, mode: statSync(s.file).mode, text: readFileSync(s.file, "utf8") };
      for (const args of [["env", "list"], ["env", "set", "SECRET", "overwritten"], ["env", "set", "NEW", "v"], ["env", "remove", "SECRET"]]) {
        const result = await runAsNobody(runtime, args, s.cwd, s.env);
        expectOneLineError(result, s.file);
        const after = statSync(s.file);
        expect({ ino: after.ino, mode: after.mode, text: readFileSync(s.file, "utf8") }, args.join(" ")).toEqual(before);
      }
      expect(readdirSync(join(s.file, ".."))).toEqual(["env"]);
    });

    it("an unreadable config directory: run and env list exit 1 with one line; env set writes nothing", async ({ expect }) => {
      const { cwd, dump } = dumpProject();
      const env = isolatedEnv();
      const file = writeGlobal(env, 'A="1"\n');
      giveToUnprivileged(env.HOME!);
      giveToUnprivileged(cwd);
      chmodSync(join(file, ".."), 0o000);
      for (const args of [["run", "-n", "1", "w"], ["env", "list"], ["env", "set", "B", "2"]]) {
        expectOneLineError(await runAsNobody(runtime, args, cwd, env));
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
      mkdirSync(join(globalFile(env), ".."), { recursive: true });
      execFileSync("mkfifo", [globalFile(env)]);
      for (const args of [["run", "-n", "1", "w"], ["run", "-n", "0", "w"], ["env", "list"], ["env", "set", "A", "1"], ["env", "remove", "A"]]) {
        const started = Date.now();
        const result = await runLoopx(runtime, args, { cwd, env, timeoutMs: TIMEOUT });
        expectOneLineError(result, globalFile(env));
        expect(Date.now() - started).toBeLessThan(10_000);
      }
      expect(lstatSync(globalFile(env)).isFIFO()).toBe(true); // env set did not replace it
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
      mkdirSync(join(globalFile(env), ".."), { recursive: true });
      symlinkSync(target, globalFile(env));
      const cwd = tempDir();
      const set = await runLoopx(runtime, ["env", "set", "B", "2"], { cwd, env });
      expect(set.stderr).toBe("");
      expect(set.code).toBe(0);
      const list = await runLoopx(runtime, ["env", "list"], { cwd, env });
      expect(list.stdout).toBe("A=1\nB=2\n");
      // Nothing lost: the link still points at the dotfiles copy, which holds the new value.
      expect(lstatSync(globalFile(env)).isSymbolicLink()).toBe(true);
      expect(readlinkSync(globalFile(env))).toBe(target);
      expect(readFileSync(target, "utf8")).toBe('# mine\nA="1"\nB="2"\n');
    });

    it("global env file is a dangling symlink: treated as absent by run and list", async ({ expect }) => {
      const { cwd, dump } = dumpProject();
      const env = isolatedEnv();
      mkdirSync(join(globalFile(env), ".."), { recursive: true });
      symlinkSync(join(tempDir(), "missing.env"), globalFile(env));
      const run = await runLoopx(runtime, ["run", "-n", "1", "w"], { cwd, env });
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      expect(existsSync(dump)).toBe(true);
      const list = await runLoopx(runtime, ["env", "list"], { cwd, env });
      expect(list.code).toBe(0);
      expect(list.stdout).toBe("");
    });
  });

  describe("CR in env files and values", () => {
    const TRICKY_CRLF =
      '# exported from Windows\r\nQ_SPACES="  padded  "\r\nQ_HASH="a # not a comment"\r\nQ_EQ="k=v=w"\r\n' +
      "S_QUOTES='say \"hi\"'\r\nBARE=plain value\r\nTRAIL=\"x\"   \r\nEMPTY=\"\"\r\n\r\n";
    const TRICKY_EXPECTED: Record<string, string> = {
      Q_SPACES: "  padded  ",
      Q_HASH: "a # not a comment",
      Q_EQ: "k=v=w",
      S_QUOTES: 'say "hi"',
      BARE: "plain value",
      TRAIL: "x",
      EMPTY: "",
    };

    it.for(["global", "-e"] as const)("a CRLF %s file with quoted spaces, #, =, quotes: exact values, no stray CR, no warning", async (where, { expect }) => {
      const { cwd, dump } = dumpProject({ "local.env": where === "-e" ? TRICKY_CRLF : "" });
      const env = isolatedEnv();
      if (where === "global") writeGlobal(env, TRICKY_CRLF);
      const args = where === "-e" ? ["run", "-n", "1", "-e", "local.env", "w"] : ["run", "-n", "1", "w"];
      const result = await runLoopx(runtime, args, { cwd, env });
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      const vars = parseDump(dump);
      for (const [key, value] of Object.entries(TRICKY_EXPECTED)) expect(vars.get(key), key).toBe(value);
      if (where === "global") {
        const list = await runLoopx(runtime, ["env", "list"], { cwd, env });
        expect(list.stderr).toBe("");
        expect(Object.fromEntries(parseList(list.stdout))).toEqual(TRICKY_EXPECTED);
      }
    });

    it("env set into a CRLF file: other values stay exact (no CR leaks), the file still parses cleanly", async ({ expect }) => {
      const { cwd, dump } = dumpProject();
      const env = isolatedEnv();
      writeGlobal(env, TRICKY_CRLF);
      expect((await runLoopx(runtime, ["env", "set", "Q_HASH", "replaced #"], { cwd, env })).code).toBe(0);
      expect((await runLoopx(runtime, ["env", "set", "ADDED", "new \"one\""], { cwd, env })).code).toBe(0);
      expect((await runLoopx(runtime, ["env", "remove", "BARE"], { cwd, env })).code).toBe(0);
      const expected = { ...TRICKY_EXPECTED, Q_HASH: "replaced #", ADDED: 'new "one"' } as Record<string, string>;
      delete expected.BARE;
      const list = await runLoopx(runtime, ["env", "list"], { cwd, env });
      expect(list.stderr).toBe("");
      expect(Object.fromEntries(parseList(list.stdout))).toEqual(expected);
      const parsed = parseEnvFile(readFileSync(globalFile(env), "utf8"), "env");
      expect(parsed.warnings).toEqual([]);
      expect(Object.fromEntries(parsed.vars)).toEqual(expected);
      const run = await runLoopx(runtime, ["run", "-n", "1", "w"], { cwd, env });
      expect(run.code).toBe(0);
      const vars = parseDump(dump);
      for (const [key, value] of Object.entries(expected)) expect(vars.get(key), key).toBe(value);
    });

    it("a line holding only CR is blank; CRs inside values and CR-only line endings: script env and env list agree, no crash", async ({ expect }) => {
      const { cwd, dump } = dumpProject();
      const env = isolatedEnv();
      writeGlobal(env, 'BEFORE=1\n\r\nMID="a\rb"\nBARE_MID=c\rd\nMAC_A=1\rMAC_B=2\r\nAFTER=2\n');
      const run = await runLoopx(runtime, ["run", "-n", "1", "w"], { cwd, env });
      expect(run.stderr).not.toContain("internal error");
      expect(run.code).toBe(0);
      const list = await runLoopx(runtime, ["env", "list"], { cwd, env });
      expect(list.code).toBe(0);
      const listed = parseList(list.stdout);
      const seen = parseDump(dump);
      expect(seen.get("BEFORE")).toBe("1");
      expect(seen.get("AFTER")).toBe("2");
      for (const [key, value] of listed) expect(seen.get(key), key).toBe(value);
      console.log(`[${runtime.name}] CR values as loaded: ${JSON.stringify(Object.fromEntries([...listed].filter(([k]) => k !== "BEFORE" && k !== "AFTER")))}; warnings: ${JSON.stringify(run.stderr)}`);
    });
  });

  describe("a NUL byte in an env value", () => {
    it.for(["global", "-e"] as const)("%s file: the problem is reported against the env file (warning or error), never blamed on a script", async (where, { expect }) => {
      const text = Buffer.from("GOOD=yes\nBAD=a\0b\n");
      const { cwd, dump } = dumpProject();
      const env = isolatedEnv();
      if (where === "global") writeGlobal(env, text);
      else writeFileSync(join(cwd, "local.env"), text);
      const path = where === "global" ? globalFile(env) : join(cwd, "local.env");
      const extra = where === "-e" ? ["-e", "local.env"] : [];
      const result = await runLoopx(runtime, ["run", "-n", "1", ...extra, "w"], { cwd, env });
      const zero = await runLoopx(runtime, ["run", "-n", "0", ...extra, "w"], { cwd, env });
      expect(result.stderr).not.toContain("internal error");
      expect(result.stderr).not.toMatch(/script w:index/);
      if (result.code === 0) {
        // Skipped with a warning naming the file; the rest of the file still applies.
        expect(result.stderr).toContain(path);
        const vars = parseDump(dump);
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

  describe("20 concurrent `env set` processes (outcome undefined by the spec, but the file must parse)", () => {
    const N = 20;
    const value = (i: number) => `value ${i} with "quotes" # and = signs ${"é".repeat(i)}  `;

    function expectWellFormed(file: string, allowed: (key: string, value: string) => boolean): Map<string, string> {
      const text = readFileSync(file, "utf8");
      expect(text.endsWith("\n")).toBe(true);
      for (const line of text.slice(0, -1).split("\n")) expect(line, "a torn or foreign line").toMatch(/^[A-Za-z_][A-Za-z0-9_]*=".*"$/);
      const parsed = parseEnvFile(text, "env");
      expect(parsed.warnings).toEqual([]);
      for (const [k, v] of parsed.vars) expect(allowed(k, v), `${k}=${v}`).toBe(true);
      expect(readdirSync(join(file, ".."))).toEqual(["env"]); // no temp file left behind
      return parsed.vars;
    }

    it("distinct keys: every process exits 0; the file parses; every surviving value is exact; env list agrees", { timeout: 60_000 }, async ({ expect }) => {
      const env = isolatedEnv();
      const cwd = tempDir();
      writeGlobal(env, 'SEED="kept?"\n');
      const results = await Promise.all(Array.from({ length: N }, (_, i) => runLoopx(runtime, ["env", "set", `K${i}`, value(i)], { cwd, env, timeoutMs: 45_000 })));
      for (const r of results) {
        expect(r.stderr).toBe("");
        expect(r.code).toBe(0);
      }
      const vars = expectWellFormed(globalFile(env), (k, v) => (k === "SEED" ? v === "kept?" : /^K\d+$/.test(k) && v === value(Number(k.slice(1)))));
      const list = await runLoopx(runtime, ["env", "list"], { cwd, env });
      expect(list.stderr).toBe("");
      expect(parseList(list.stdout)).toEqual(new Map([...vars].sort(([a], [b]) => (a < b ? -1 : 1))));
      console.log(`[${runtime.name}] ${N} concurrent env set (distinct keys): ${vars.size - (vars.has("SEED") ? 1 : 0)}/${N} survived, SEED ${vars.has("SEED") ? "kept" : "lost"}`);
    });

    it("one key: the final value is exactly one of the 20 written, on exactly one line", { timeout: 60_000 }, async ({ expect }) => {
      const env = isolatedEnv();
      const cwd = tempDir();
      const results = await Promise.all(Array.from({ length: N }, (_, i) => runLoopx(runtime, ["env", "set", "SAME", value(i)], { cwd, env, timeoutMs: 45_000 })));
      for (const r of results) expect(r.code).toBe(0);
      const values = new Set(Array.from({ length: N }, (_, i) => value(i)));
      const vars = expectWellFormed(globalFile(env), (k, v) => k === "SAME" && values.has(v));
      expect(vars.size).toBe(1);
      expect(readFileSync(globalFile(env), "utf8").split("\n").filter(Boolean)).toHaveLength(1);
    });

    it("writers racing with `run` readers: no reader ever sees a torn file (no warning, exact values)", { timeout: 90_000 }, async ({ expect }) => {
      const env = isolatedEnv();
      const { cwd } = dumpProject();
      writeGlobal(env, 'SEED="s"\n');
      const readers = Array.from({ length: 6 }, (_, i) => {
        const reader = dumpProject();
        return runLoopx(runtime, ["run", "-n", "1", "w"], { cwd: reader.cwd, env, timeoutMs: 80_000 }).then((r) => ({ r, dump: reader.dump, i }));
      });
      const writers = Array.from({ length: N }, (_, i) => runLoopx(runtime, ["env", "set", `K${i}`, value(i)], { cwd, env, timeoutMs: 80_000 }));
      const [readResults, writeResults] = await Promise.all([Promise.all(readers), Promise.all(writers)]);
      for (const w of writeResults) expect(w.code).toBe(0);
      for (const { r, dump } of readResults) {
        expect(r.stderr).toBe("");
        expect(r.code).toBe(0);
        for (const [k, v] of parseDump(dump)) if (/^K\d+$/.test(k)) expect(v).toBe(value(Number(k.slice(1))));
      }
      expectWellFormed(globalFile(env), (k, v) => (k === "SEED" ? v === "s" : /^K\d+$/.test(k) && v === value(Number(k.slice(1)))));
    });
  });
});
