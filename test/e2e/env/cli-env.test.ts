/**
 * `loopx env set|remove|list` and the global env file (spec §4.3, §8.1). Black-box: spawns the
 * built CLI with its own HOME / XDG_CONFIG_HOME per test.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { parseEnvFile } from "../../../src/core/envfile.js";
import { envKey, settableValue } from "../../fixtures/arbitraries.js";
import { RUNTIMES, expectOneLineError, isolatedEnv, makeProject, runLoopx, snapshotTree, tempDir, type RunResult } from "../../helpers.js";
import { dumpProject, globalEnvFile, parseEnvList, readDump, writeGlobalEnv } from "../../fixtures/env/support.js";
import { itFor, tableFor } from "../../case-tables.js";

function expectSuccess(result: RunResult, stdout = ""): void {
  expect(result.stderr).toBe("");
  expect(result.stdout).toBe(stdout);
  expect(result.code).toBe(0);
}

/** A per-test environment and the env file path it implies. */
function setup(extra: Record<string, string | undefined> = {}) {
  const env = isolatedEnv(extra);
  const configHome = env.XDG_CONFIG_HOME ?? join(env.HOME!, ".config");
  const dir = join(configHome, "loopx");
  return { env, dir, file: join(dir, "env"), cwd: tempDir() };
}

function writeEnvFile(file: string, text: string): void {
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, text);
}

describe.concurrent.each(RUNTIMES)("loopx env ($name)", (runtime) => {
  // Loopx's own logic: every test under Node, every third under Bun (test/case-tables.ts).
  const test = itFor(runtime);
  const loopx = (args: string[], s: { env: Record<string, string>; cwd: string }) => runLoopx(runtime, args, { cwd: s.cwd, env: s.env });

  test("set then list; the file holds exactly KEY=\"value\" lines; works without .loopx/", async () => {
    const s = setup();
    expect(existsSync(s.dir)).toBe(false);
    expectSuccess(await loopx(["env", "set", "K", "v"], s));
    expect(readFileSync(s.file, "utf8")).toBe('K="v"\n');
    expectSuccess(await loopx(["env", "list"], s), "K=v\n");
    expectSuccess(await loopx(["env", "set", "OTHER", "two words"], s));
    expect(readFileSync(s.file, "utf8")).toBe('K="v"\nOTHER="two words"\n');
    expectSuccess(await loopx(["env", "list"], s), "K=v\nOTHER=two words\n");
    expect(existsSync(join(s.cwd, ".loopx"))).toBe(false);
  });

  // Judgement call: "lexicographically" is taken as plain code-unit order (A-Z < _ < a-z), not locale order.
  test("list is sorted lexicographically by key, whatever the insertion order", async () => {
    const s = setup();
    for (const key of ["b", "_x", "B1", "a", "A", "AB", "A_", "Z9"]) expectSuccess(await loopx(["env", "set", key, `v-${key}`], s));
    expectSuccess(await loopx(["env", "list"], s), ["A", "AB", "A_", "B1", "Z9", "_x", "a", "b"].map((k) => `${k}=v-${k}\n`).join(""));
  });

  test("list with no file, or only comments and blank lines, prints nothing and exits 0", async () => {
    const s = setup();
    expectSuccess(await loopx(["env", "list"], s));
    expect(existsSync(s.dir)).toBe(false);
    writeEnvFile(s.file, "# just a comment\n\n   \n#K=v\n");
    expectSuccess(await loopx(["env", "list"], s));
  });

  test("list reads the §8.1 format: quotes stripped only when matched, no escapes, trailing space trimmed, last duplicate wins", async () => {
    const s = setup();
    writeEnvFile(
      s.file,
      [
        "# comment",
        "A='single'",
        'B="double"',
        'C="unmatched',
        "D=trailing   ",
        "E=a#b # not a comment",
        'F="\\n"',
        "G=1",
        "G=2",
        "H=",
        "I=a=b=c",
        `J="'mixed'"`,
        "",
      ].join("\n"),
    );
    const result = await loopx(["env", "list"], s);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe(
      ["A=single", "B=double", 'C="unmatched', "D=trailing", "E=a#b # not a comment", "F=\\n", "G=2", "H=", "I=a=b=c", "J='mixed'", ""].join("\n"),
    );
  });

  test("list skips invalid lines with a warning on stderr and still lists valid ones", async () => {
    const s = setup();
    writeEnvFile(s.file, "GOOD=1\n1BAD=x\nno equals sign\nKEY WITH SPACES=v\n K=v\nLAST=2\n");
    const result = await loopx(["env", "list"], s);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("GOOD=1\nLAST=2\n");
    expect(result.stderr).not.toBe("");
    expect(result.stderr).not.toContain("    at ");
  });

  test("set round-trips values with spaces, #, =, quotes, trailing spaces, dashes, unicode, backslashes", async () => {
    const values: Array<[string, string]> = [
      ["spaces", "hello big world"],
      ["a #", "a # b"],
      ["a leading #", "#not-a-comment"],
      ["=", "a=b=c"],
      ["double quotes inside", 'say "hi" now'],
      ["a value wrapped in double quotes", '"wrapped"'],
      ["a value wrapped in single quotes", "'wrapped'"],
      ["a lone double quote", '"'],
      ["a lone single quote", "'"],
      ["trailing spaces", "trailing   "],
      ["leading spaces", "   leading"],
      ["only spaces", "   "],
      ["a tab", "a\tb"],
      ["a leading dash", "-x"],
      ["a double dash", "--"],
      ["something like a flag", "--help"],
      ["-h", "-h"],
      ["unicode", "héllo — 日本語 🚀"],
      ["a backslash-n (no escapes)", "a\\nb"],
      ["shell syntax", "$HOME `id` $(x) ${Y}"],
      ["empty", ""],
    ];
    const s = setup();
    const keys = values.map((_, i) => `K${String(i).padStart(2, "0")}`);
    for (const [i, [label, value]] of values.entries()) {
      const result = await loopx(["env", "set", keys[i]!, value], s);
      expect(result.code, label).toBe(0);
      expect(result.stderr, label).toBe("");
    }
    expect(readFileSync(s.file, "utf8")).toBe(values.map(([, value], i) => `${keys[i]}="${value}"\n`).join(""));
    expectSuccess(await loopx(["env", "list"], s), values.map(([, value], i) => `${keys[i]}=${value}\n`).join(""));
  });

  test("set K -x stores the dash-leading value (it is not parsed as a flag)", async () => {
    const s = setup();
    expectSuccess(await loopx(["env", "set", "K", "-x"], s));
    expectSuccess(await loopx(["env", "list"], s), "K=-x\n");
  });

  it.each<[string, string]>(tableFor(runtime, [
    ["a leading digit", "1BAD"],
    ["a dash", "A-B"],
    ["a space", "A B"],
    ["empty", ""],
    ["an =", "A=B"],
    ["a dot", "A.B"],
    ["non-ASCII", "É"],
    ["a leading dash", "-K"],
  ]))("set rejects a name with %s (exit 1, nothing written)", async (_label, name) => {
    const s = setup();
    writeEnvFile(s.file, '# keep\nA="1"\n');
    const before = snapshotTree(s.env.HOME!);
    expectOneLineError(await loopx(["env", "set", name, "v"], s));
    expect(snapshotTree(s.env.HOME!)).toEqual(before);
    const fresh = setup();
    expectOneLineError(await loopx(["env", "set", name, "v"], fresh));
    expect(existsSync(fresh.dir)).toBe(false);
  });

  it.each<[string, string]>(tableFor(runtime, [
    ["\\n", "a\nb"],
    ["\\r", "a\rb"],
    ["\\r\\n", "a\r\nb"],
    ["a trailing \\n", "value\n"],
    ["only \\n", "\n"],
  ]))("set rejects a value containing %s (exit 1, file unchanged)", async (_label, value) => {
    const s = setup();
    writeEnvFile(s.file, '# keep\nA="1"\n');
    const before = snapshotTree(s.env.HOME!);
    expectOneLineError(await loopx(["env", "set", "K", value], s));
    expect(snapshotTree(s.env.HOME!)).toEqual(before);
    expectSuccess(await loopx(["env", "list"], s), "A=1\n");
  });

  test("set of an existing key replaces it and keeps every other line (comments, blanks, odd lines)", async () => {
    const s = setup();
    const original = ['# global secrets', 'A="1"', "", "K=old", "# K=commented", "B='2'", "1BAD=kept", ""].join("\n");
    writeEnvFile(s.file, original);
    const set = await loopx(["env", "set", "K", "new value"], s);
    expect(set.code).toBe(0);
    expect(set.stdout).toBe("");
    const after = readFileSync(s.file, "utf8");
    expect(after.endsWith("\n")).toBe(true);
    const isK = (line: string) => line.startsWith("K=");
    expect(after.split("\n").filter(isK)).toEqual(['K="new value"']);
    expect(after.split("\n").filter((l) => !isK(l))).toEqual(original.split("\n").filter((l) => !isK(l)));
    const list = await loopx(["env", "list"], s);
    expect(list.code).toBe(0);
    expect(list.stdout).toBe("A=1\nB=2\nK=new value\n");
  });

  test("set of a key that appears twice leaves it with the new value", async () => {
    const s = setup();
    writeEnvFile(s.file, "K=1\nA=a\nK=2\n");
    expectSuccess(await loopx(["env", "set", "K", "3"], s));
    expectSuccess(await loopx(["env", "list"], s), "A=a\nK=3\n");
  });

  test("set appends correctly to a file without a trailing newline", async () => {
    const s = setup();
    writeEnvFile(s.file, 'A="1"');
    expectSuccess(await loopx(["env", "set", "B", "2"], s));
    expect(readFileSync(s.file, "utf8")).toBe('A="1"\nB="2"\n');
    expectSuccess(await loopx(["env", "list"], s), "A=1\nB=2\n");
  });

  test("remove deletes the key and keeps other lines; a missing key is a silent no-op", async () => {
    const s = setup();
    writeEnvFile(s.file, '# comment\nA="1"\nK="x"\nB="2"\n');
    expectSuccess(await loopx(["env", "remove", "K"], s));
    expect(readFileSync(s.file, "utf8")).toBe('# comment\nA="1"\nB="2"\n');
    expectSuccess(await loopx(["env", "list"], s), "A=1\nB=2\n");
    const before = snapshotTree(s.env.HOME!);
    expectSuccess(await loopx(["env", "remove", "NOPE"], s));
    expect(snapshotTree(s.env.HOME!)).toEqual(before);
  });

  // Judgement call beyond "does not create the file": no directory is created either.
  test("remove with no env file exits 0 and creates nothing", async () => {
    const s = setup();
    const before = snapshotTree(s.env.HOME!);
    expectSuccess(await loopx(["env", "remove", "K"], s));
    expect(existsSync(s.file)).toBe(false);
    expect(snapshotTree(s.env.HOME!)).toEqual(before);
  });

  test("honours XDG_CONFIG_HOME, creating the directory on first set", async () => {
    const xdg = join(tempDir(), "deep", "nested", "config");
    const s = setup({ XDG_CONFIG_HOME: xdg });
    expectSuccess(await loopx(["env", "set", "K", "v"], s));
    expect(readFileSync(join(xdg, "loopx", "env"), "utf8")).toBe('K="v"\n');
    expect(existsSync(join(s.env.HOME!, ".config"))).toBe(false);
    expectSuccess(await loopx(["env", "list"], s), "K=v\n");
    // A different XDG_CONFIG_HOME is a different store.
    const other = { ...s, env: { ...s.env, XDG_CONFIG_HOME: join(tempDir(), "cfg") } };
    expectSuccess(await loopx(["env", "list"], other));
  });

  test("falls back to $HOME/.config/loopx/env when XDG_CONFIG_HOME is unset", async () => {
    const s = setup({ XDG_CONFIG_HOME: undefined });
    expect(s.env.XDG_CONFIG_HOME).toBeUndefined();
    expectSuccess(await loopx(["env", "set", "K", "v"], s));
    expect(readFileSync(join(s.env.HOME!, ".config", "loopx", "env"), "utf8")).toBe('K="v"\n');
    expectSuccess(await loopx(["env", "list"], s), "K=v\n");
    expectSuccess(await loopx(["env", "remove", "K"], s));
    expectSuccess(await loopx(["env", "list"], s));
  });

  // Judgement call: per the XDG base-directory spec, an empty XDG_CONFIG_HOME counts as unset.
  test("treats an empty XDG_CONFIG_HOME as unset", async () => {
    const s = setup({ XDG_CONFIG_HOME: "" });
    expectSuccess(await loopx(["env", "set", "K", "v"], s));
    expect(readFileSync(join(s.env.HOME!, ".config", "loopx", "env"), "utf8")).toBe('K="v"\n');
    expect(existsSync(join(s.cwd, "loopx"))).toBe(false);
  });

  test("leaves no temporary files next to the env file after set and remove", async () => {
    const s = setup();
    expectSuccess(await loopx(["env", "set", "A", "1"], s));
    expectSuccess(await loopx(["env", "set", "B", "2"], s));
    expectSuccess(await loopx(["env", "set", "A", "3"], s));
    expectSuccess(await loopx(["env", "remove", "B"], s));
    expectSuccess(await loopx(["env", "remove", "MISSING"], s));
    expect(readdirSync(s.dir)).toEqual(["env"]);
    expect(readdirSync(join(s.dir, ".."))).toEqual(["loopx"]);
    expect(readFileSync(s.file, "utf8")).toBe('A="3"\n');
  });

  test("an env file path that is a directory: list, set and remove fail with one line, nothing changes", async () => {
    const s = setup();
    mkdirSync(s.file, { recursive: true });
    writeFileSync(join(s.file, "inside"), "x\n");
    const before = snapshotTree(s.env.HOME!);
    for (const args of [["env", "list"], ["env", "set", "K", "v"], ["env", "remove", "K"]]) {
      const result = await loopx(args, s);
      expectOneLineError(result);
      expect(snapshotTree(s.env.HOME!), args.join(" ")).toEqual(before);
    }
  });

  test("a config dir path that is a file: set fails with one line, nothing changes", async () => {
    const s = setup();
    writeEnvFile(s.dir, "i am a file, not the loopx dir\n");
    const before = snapshotTree(s.env.HOME!);
    expectOneLineError(await loopx(["env", "set", "K", "v"], s));
    expect(snapshotTree(s.env.HOME!)).toEqual(before);
  });

  it.each<[string, string[]]>(tableFor(runtime, [
    ["env with no subcommand", ["env"]],
    ["unknown env subcommand", ["env", "get", "K"]],
    ["set with no arguments", ["env", "set"]],
    ["set with no value", ["env", "set", "K"]],
    ["set with an extra argument", ["env", "set", "K", "v", "extra"]],
    ["remove with no name", ["env", "remove"]],
    ["remove with an extra argument", ["env", "remove", "K", "extra"]],
    // Judgement call: list takes no arguments.
    ["list with an argument", ["env", "list", "extra"]],
  ]))("%s → exit 1 with a one-line error, nothing written", async (_label, args) => {
    const s = setup();
    const before = snapshotTree(s.env.HOME!);
    expectOneLineError(await loopx(args, s));
    expect(snapshotTree(s.env.HOME!)).toEqual(before);
  });
});

describe.concurrent.each(RUNTIMES)("loopx env: hostile files and concurrent writers ($name)", (runtime) => {
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
      if (where === "global") writeGlobalEnv(env, TRICKY_CRLF);
      const args = where === "-e" ? ["run", "-n", "1", "-e", "local.env", "w"] : ["run", "-n", "1", "w"];
      const result = await runLoopx(runtime, args, { cwd, env });
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      const vars = readDump(dump);
      for (const [key, value] of Object.entries(TRICKY_EXPECTED)) expect(vars.get(key), key).toBe(value);
      if (where === "global") {
        const list = await runLoopx(runtime, ["env", "list"], { cwd, env });
        expect(list.stderr).toBe("");
        expect(Object.fromEntries(parseEnvList(list.stdout))).toEqual(TRICKY_EXPECTED);
      }
    });

    it("env set into a CRLF file: other values stay exact (no CR leaks), the file still parses cleanly", async ({ expect }) => {
      const { cwd, dump } = dumpProject();
      const env = isolatedEnv();
      writeGlobalEnv(env, TRICKY_CRLF);
      expect((await runLoopx(runtime, ["env", "set", "Q_HASH", "replaced #"], { cwd, env })).code).toBe(0);
      expect((await runLoopx(runtime, ["env", "set", "ADDED", "new \"one\""], { cwd, env })).code).toBe(0);
      expect((await runLoopx(runtime, ["env", "remove", "BARE"], { cwd, env })).code).toBe(0);
      const expected = { ...TRICKY_EXPECTED, Q_HASH: "replaced #", ADDED: 'new "one"' } as Record<string, string>;
      delete expected.BARE;
      const list = await runLoopx(runtime, ["env", "list"], { cwd, env });
      expect(list.stderr).toBe("");
      expect(Object.fromEntries(parseEnvList(list.stdout))).toEqual(expected);
      const parsed = parseEnvFile(readFileSync(globalEnvFile(env), "utf8"), "env");
      expect(parsed.warnings).toEqual([]);
      expect(Object.fromEntries(parsed.vars)).toEqual(expected);
      const run = await runLoopx(runtime, ["run", "-n", "1", "w"], { cwd, env });
      expect(run.code).toBe(0);
      const vars = readDump(dump);
      for (const [key, value] of Object.entries(expected)) expect(vars.get(key), key).toBe(value);
    });

    it("a line holding only CR is blank; CRs inside values and CR-only line endings: script env and env list agree, no crash", async ({ expect }) => {
      const { cwd, dump } = dumpProject();
      const env = isolatedEnv();
      writeGlobalEnv(env, 'BEFORE=1\n\r\nMID="a\rb"\nBARE_MID=c\rd\nMAC_A=1\rMAC_B=2\r\nAFTER=2\n');
      const run = await runLoopx(runtime, ["run", "-n", "1", "w"], { cwd, env });
      expect(run.stderr).not.toContain("internal error");
      expect(run.code).toBe(0);
      const list = await runLoopx(runtime, ["env", "list"], { cwd, env });
      expect(list.code).toBe(0);
      const listed = parseEnvList(list.stdout);
      const seen = readDump(dump);
      expect(seen.get("BEFORE")).toBe("1");
      expect(seen.get("AFTER")).toBe("2");
      for (const [key, value] of listed) expect(seen.get(key), key).toBe(value);
      console.log(`[${runtime.name}] CR values as loaded: ${JSON.stringify(Object.fromEntries([...listed].filter(([k]) => k !== "BEFORE" && k !== "AFTER")))}; warnings: ${JSON.stringify(run.stderr)}`);
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
      writeGlobalEnv(env, 'SEED="kept?"\n');
      const results = await Promise.all(Array.from({ length: N }, (_, i) => runLoopx(runtime, ["env", "set", `K${i}`, value(i)], { cwd, env, timeoutMs: 45_000 })));
      for (const r of results) {
        expect(r.stderr).toBe("");
        expect(r.code).toBe(0);
      }
      const vars = expectWellFormed(globalEnvFile(env), (k, v) => (k === "SEED" ? v === "kept?" : /^K\d+$/.test(k) && v === value(Number(k.slice(1)))));
      const list = await runLoopx(runtime, ["env", "list"], { cwd, env });
      expect(list.stderr).toBe("");
      expect(parseEnvList(list.stdout)).toEqual(new Map([...vars].sort(([a], [b]) => (a < b ? -1 : 1))));
      console.log(`[${runtime.name}] ${N} concurrent env set (distinct keys): ${vars.size - (vars.has("SEED") ? 1 : 0)}/${N} survived, SEED ${vars.has("SEED") ? "kept" : "lost"}`);
    });

    it("one key: the final value is exactly one of the 20 written, on exactly one line", { timeout: 60_000 }, async ({ expect }) => {
      const env = isolatedEnv();
      const cwd = tempDir();
      const results = await Promise.all(Array.from({ length: N }, (_, i) => runLoopx(runtime, ["env", "set", "SAME", value(i)], { cwd, env, timeoutMs: 45_000 })));
      for (const r of results) expect(r.code).toBe(0);
      const values = new Set(Array.from({ length: N }, (_, i) => value(i)));
      const vars = expectWellFormed(globalEnvFile(env), (k, v) => k === "SAME" && values.has(v));
      expect(vars.size).toBe(1);
      expect(readFileSync(globalEnvFile(env), "utf8").split("\n").filter(Boolean)).toHaveLength(1);
    });

    it("writers racing with `run` readers: no reader ever sees a torn file (no warning, exact values)", { timeout: 90_000 }, async ({ expect }) => {
      const env = isolatedEnv();
      const { cwd } = dumpProject();
      writeGlobalEnv(env, 'SEED="s"\n');
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
        for (const [k, v] of readDump(dump)) if (/^K\d+$/.test(k)) expect(v).toBe(value(Number(k.slice(1))));
      }
      expectWellFormed(globalEnvFile(env), (k, v) => (k === "SEED" ? v === "s" : /^K\d+$/.test(k) && v === value(Number(k.slice(1)))));
    });
  });
});

describe.concurrent.each(RUNTIMES)("loopx env: properties ($name)", (runtime) => {
  it("`env set` → `env list` → the script's environment round-trips every settable value", { timeout: 120_000 }, async ({ expect }) => {
    const cwd = makeProject({ ".loopx/w/index.sh": 'env -0 > "$LOOPX_PROJECT_ROOT/env.dump"\n' });
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.tuple(envKey.map((k) => `P_${k}`), settableValue), { minLength: 1, maxLength: 3, selector: ([k]) => k }), async (pairs) => {
        const env = isolatedEnv();
        for (const [key, value] of pairs) {
          const set = await runLoopx(runtime, ["env", "set", key, value], { cwd, env });
          expect(set.stderr).toBe("");
          expect(set.code).toBe(0);
        }
        const expected = [...pairs].sort(([a], [b]) => (a < b ? -1 : 1));
        const list = await runLoopx(runtime, ["env", "list"], { cwd, env });
        expect(list.stderr).toBe("");
        expect(list.stdout).toBe(expected.map(([k, v]) => `${k}=${v}\n`).join(""));
        const run = await runLoopx(runtime, ["run", "-n", "1", "w"], { cwd, env });
        expect(run.stderr).toBe("");
        expect(run.code).toBe(0);
        const dump = new Map(readFileSync(join(cwd, "env.dump"), "utf8").split("\0").filter(Boolean).map((r) => [r.slice(0, r.indexOf("=")), r.slice(r.indexOf("=") + 1)] as const));
        for (const [key, value] of pairs) expect(dump.get(key)).toBe(value);
      }),
      { numRuns: 4 },
    );
  });
});
