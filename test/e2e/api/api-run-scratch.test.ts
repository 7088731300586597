/**
 * loopx's own run variables and RunOptions.env through the programmatic API, under node and bun:
 * a consumer program imports the built package as `loopx`. LOOPX_TMPDIR must be gone by the time
 * each way of ending a run returns control to the caller (checked inside the consumer, at once).
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RUNTIMES, consumer, isolatedEnv, leftovers, runConsumer, scratchEnv, sh } from "../../helpers.js";

/** What every consumer.mjs here starts with: the scratch directory's bookkeeping. */
const PRELUDE = `import { run, runPromise } from "loopx";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
const tmpOf = () => readFileSync("tmp.txt", "utf8").trim();
const gone = () => !existsSync(tmpOf());
const waitFile = async (f) => { for (let i = 0; i < 400 && !existsSync(f); i++) await new Promise((r) => setTimeout(r, 25)); };
const report = (value) => console.log(JSON.stringify(value));
`;

/** Records the run's LOOPX_TMPDIR in <project>/tmp.txt, then `body`. */
const noting = (body: string) => sh(`echo "$LOOPX_TMPDIR" > "$LOOPX_PROJECT_ROOT/tmp.txt"\ntouch "$LOOPX_TMPDIR/file"\n${body}`);

describe.each(RUNTIMES)("LOOPX_TMPDIR / RUN_ID / ITERATION through the API ($name)", (runtime) => {
  it.concurrent("same directory across start, goto, cross-workflow goto and reset; ITERATION counts as maxIterations does; RUN_ID per run; concurrent runs apart", async ({ expect }) => {
    const line = '"$LOOPX_ITERATION $LOOPX_RUN_ID $LOOPX_TMPDIR $(stat -c %a "$LOOPX_TMPDIR") $(cat "$LOOPX_TMPDIR/handoff" 2>/dev/null | tr "\\n" ,)"';
    const dir = consumer(PRELUDE +
      `const one = await runPromise("a", { maxIterations: 5 });
       const two = await runPromise("a", { maxIterations: 1 });
       const [c1, c2] = await Promise.all([runPromise("a", { maxIterations: 1 }), runPromise("a", { maxIterations: 1 })]);
       report({ one: one.map((o) => o.result), two: two[0].result, c1: c1[0].result, c2: c2[0].result });`,
      {
        ".loopx/a/index.sh": sh(`r=${line}\necho "i$LOOPX_ITERATION" >> "$LOOPX_TMPDIR/handoff"\n$LOOPX_BIN output --result "$r" --goto b`),
        ".loopx/a/b.sh": sh(`$LOOPX_BIN output --result ${line} --goto other:x`),
        ".loopx/other/x.sh": sh(`r=${line}\necho "x$LOOPX_ITERATION" >> "$LOOPX_TMPDIR/handoff"\n$LOOPX_BIN output --result "$r"`),
      },
    );
    const { env, tmp } = scratchEnv();
    const result = await runConsumer(runtime, dir, { env });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const rows = (result.json.one as string[]).map((r) => r.split(" "));
    expect(rows.map((r) => r[0])).toEqual(["1", "2", "3", "4", "5"]);
    expect(rows.map((r) => r[4] ?? "")).toEqual(["", "i1,", "i1,", "i1,x3,", "i1,x3,i4,"]);
    for (const r of rows) expect(r.slice(1, 4)).toEqual([rows[0]![1], rows[0]![2], "700"]);
    expect(rows[0]![1]).toMatch(/^[0-9a-z]{15}$/);
    expect(rows[0]![2]).toMatch(new RegExp(`^${tmp}/loopx-[A-Za-z0-9]{6}$`));
    const [two, c1, c2] = [result.json.two, result.json.c1, result.json.c2].map((r: string) => r.split(" "));
    expect(new Set([rows[0]![1], two![1], c1![1], c2![1]]).size).toBe(4);
    expect(new Set([rows[0]![2], two![2], c1![2], c2![2]]).size).toBe(4);
    expect(leftovers(tmp)).toEqual([]);
  });

  it.concurrent("no directory for maxIterations: 0 or a failed validation; creation failure rejects before any script runs", async ({ expect }) => {
    const dir = consumer(PRELUDE +
      `const errors = [];
       await runPromise("w", { maxIterations: 0 });
       for (const t of ["nope", "w:nope"]) await runPromise(t).catch((e) => errors.push(e.message));
       await runPromise("w", { envFile: "missing.env" }).catch((e) => errors.push(e.message));
       report({ errors, ran: existsSync("ran") });`,
      { ".loopx/w/index.sh": sh('touch "$LOOPX_PROJECT_ROOT/ran"') },
    );
    const { env, tmp } = scratchEnv();
    const result = await runConsumer(runtime, dir, { env });
    expect(result.code).toBe(0);
    expect(result.json).toMatchObject({ ran: false });
    expect(result.json.errors).toHaveLength(3);
    expect(readdirSync(tmp).filter((name) => name.startsWith("loopx-"))).toEqual([]);

    const failing = consumer(PRELUDE +
      `const gen = run("w");
       const first = await gen.next().then(() => "resolved", (e) => e.message);
       const rejected = await runPromise("w").then(() => "resolved", (e) => e.message);
       report({ first, rejected, ran: existsSync("ran") });`,
      { ".loopx/w/index.sh": sh('touch "$LOOPX_PROJECT_ROOT/ran"') },
    );
    const missing = join(tmp, "missing");
    const bad = await runConsumer(runtime, failing, { env: isolatedEnv({ TMPDIR: missing }) });
    expect(bad.code).toBe(0);
    const message = `cannot create the run's temporary directory (LOOPX_TMPDIR) in ${missing}: no such file or directory (ENOENT)`;
    expect(bad.json).toEqual({ first: message, rejected: message, ran: false });
  });

  describe("removed before control returns to the caller", () => {
    const STOP = { ".loopx/w/index.sh": noting("$LOOPX_BIN output --result one --stop") };
    const TWO = { ".loopx/w/index.sh": noting('$LOOPX_BIN output --result "$LOOPX_ITERATION"') };
    const SLOW = { ".loopx/w/index.sh": noting('touch "$LOOPX_PROJECT_ROOT/ready"\nexec sleep 30') };
    const cases: [string, string, Record<string, string>][] = [
      ["stop (for await completes)", `const seen = []; for await (const o of run("w")) seen.push(o); report({ seen: seen.length, gone: gone() });`, STOP],
      ["maxIterations reached", `const seen = []; for await (const o of run("w", { maxIterations: 2 })) seen.push(o); report({ seen: seen.length, gone: gone() });`, TWO],
      ["runPromise() resolving", `const outs = await runPromise("w"); report({ seen: outs.length, gone: gone() });`, STOP],
      ["a script exiting non-zero (run() throws)", `let e; try { for await (const o of run("w")); } catch (x) { e = x.message; } report({ e, gone: gone() });`, { ".loopx/w/index.sh": noting("exit 3") }],
      ["a script exiting non-zero (runPromise() rejects)", `const e = await runPromise("w").then(() => "resolved", (x) => x.message); report({ e, gone: gone() });`, { ".loopx/w/index.sh": noting("exit 3") }],
      ["an invalid goto target", `const e = await runPromise("w").then(() => "resolved", (x) => x.message); report({ e, gone: gone() });`, { ".loopx/w/index.sh": noting('$LOOPX_BIN output --goto "a:b:c"') }],
      ["a missing goto target", `const e = await runPromise("w").then(() => "resolved", (x) => x.message); report({ e, gone: gone() });`, { ".loopx/w/index.sh": noting('$LOOPX_BIN output --goto "gone:x"') }],
      ["an abort while a script runs", `const c = new AbortController(); const gen = run("w", { signal: c.signal }); const p = gen.next(); await waitFile("ready"); c.abort(); const e = await p.then(() => "resolved", (x) => x.name); report({ e, gone: gone() });`, SLOW],
      ["an abort between iterations", `const c = new AbortController(); const gen = run("w", { signal: c.signal }); await gen.next(); const before = gone(); c.abort(); const e = await gen.next().then(() => "resolved", (x) => x.name); report({ before, e, gone: gone() });`, TWO],
      ["break after a yield", `let before; for await (const o of run("w")) { before = gone(); break; } report({ before, gone: gone() });`, TWO],
      ["return() while a script runs", `const gen = run("w"); const p = gen.next(); await waitFile("ready"); await gen.return(); const r = await p; report({ r, gone: gone() });`, SLOW],
      ["throw() on the generator", `const gen = run("w"); await gen.next(); const e = await gen.throw(new Error("mine")).then(() => "resolved", (x) => x.message); report({ e, gone: gone() });`, TWO],
    ];
    const expected: Record<string, unknown> = {
      "stop (for await completes)": { seen: 1 },
      "maxIterations reached": { seen: 2 },
      "runPromise() resolving": { seen: 1 },
      "a script exiting non-zero (run() throws)": { e: "script w:index exited with code 3" },
      "a script exiting non-zero (runPromise() rejects)": { e: "script w:index exited with code 3" },
      "an abort while a script runs": { e: "AbortError" },
      "an abort between iterations": { before: false, e: "AbortError" },
      "break after a yield": { before: false },
      "return() while a script runs": { r: { done: true } },
      "throw() on the generator": { e: "mine" },
    };
    it.concurrent.each(cases)("%s", async (name, source, files) => {
      const { env, tmp } = scratchEnv();
      const result = await runConsumer(runtime, consumer(PRELUDE + source, files), { env });
      expect(result.code, result.stderr).toBe(0);
      expect(result.json).toMatchObject({ gone: true, ...(expected[name] as object) });
      if (name.includes("goto")) expect(result.json.e).toMatch(name.includes("invalid") ? /^invalid goto/ : /"gone" not found/);
      expect(leftovers(tmp)).toEqual([]);
    });
  });
});

describe.each(RUNTIMES)("RunOptions.env ($name)", (runtime) => {
  const DUMP = {
    ".loopx/w/index.sh": sh(
      'v=""; for k in A B C D LOOPX_BIN LOOPX_PROJECT_ROOT LOOPX_WORKFLOW LOOPX_TMPDIR LOOPX_RUN_ID LOOPX_ITERATION; do v="$v$k=${!k}|"; done\n$LOOPX_BIN output --result "$v" --stop',
    ),
    "local.env": "A=local\nB=local\n",
  };
  const parse = (result: string) => Object.fromEntries(result.split("|").filter(Boolean).map((pair) => pair.split("=", 2) as [string, string]));

  it.concurrent("precedence: inherited < global env file < envFile < RunOptions.env < loopx's own variables", async ({ expect }) => {
    const loopxNames = { LOOPX_BIN: "x", LOOPX_PROJECT_ROOT: "x", LOOPX_WORKFLOW: "x", LOOPX_TMPDIR: "x", LOOPX_RUN_ID: "x", LOOPX_ITERATION: "x" };
    const dir = consumer(PRELUDE +
      `const withFile = await runPromise("w", { envFile: "local.env", env: { A: "opt", ...${JSON.stringify(loopxNames)} } });
       const noFile = await runPromise("w", { env: { C: "opt" } });
       report({ withFile: withFile[0].result, noFile: noFile[0].result });`,
      DUMP,
    );
    const { env, tmp } = scratchEnv({ A: "inh", B: "inh", C: "inh", D: "inh" });
    const { mkdirSync, writeFileSync } = await import("node:fs");
    mkdirSync(join(env.XDG_CONFIG_HOME!, "loopx"), { recursive: true });
    writeFileSync(join(env.XDG_CONFIG_HOME!, "loopx", "env"), "A=glob\nB=glob\nC=glob\n");
    const result = await runConsumer(runtime, dir, { env });
    expect([result.code, result.stderr]).toEqual([0, ""]);
    const withFile = parse(result.json.withFile);
    expect(withFile).toMatchObject({ A: "opt", B: "local", C: "glob", D: "inh", LOOPX_WORKFLOW: "w", LOOPX_ITERATION: "1", LOOPX_PROJECT_ROOT: dir });
    expect(withFile.LOOPX_BIN).not.toBe("x");
    expect(withFile.LOOPX_RUN_ID).toMatch(/^[0-9a-z]{15}$/);
    expect(withFile.LOOPX_TMPDIR).toMatch(new RegExp(`^${tmp}/loopx-`));
    expect(parse(result.json.noFile)).toMatchObject({ A: "glob", B: "glob", C: "opt", D: "inh" });
  });

  it.concurrent("copied at call time: later changes to the object have no effect; concurrent runs keep their own values", async ({ expect }) => {
    const dir = consumer(PRELUDE +
      `const e1 = { A: "before" }; const gen = run("w", { env: e1 }); e1.A = "after"; e1.B = "added";
       const first = (await gen.next()).value.result;
       const e2 = { A: "p-before" }; const p = runPromise("w", { env: e2 }); e2.A = "p-after";
       const second = (await p)[0].result;
       const both = await Promise.all([runPromise("w", { env: { A: "one" } }), runPromise("w", { env: { A: "two" } })]);
       report({ first, second, both: both.map((o) => o[0].result) });`,
      DUMP,
    );
    const result = await runConsumer(runtime, dir, { env: scratchEnv().env });
    expect([result.code, result.stderr]).toEqual([0, ""]);
    expect(parse(result.json.first)).toMatchObject({ A: "before", B: "" });
    expect(parse(result.json.second)).toMatchObject({ A: "p-before" });
    expect(result.json.both.map((r: string) => parse(r).A)).toEqual(["one", "two"]);
  });

  it.concurrent("each invalid shape: run() throws on first next(), runPromise() rejects, naming the bad key; no script runs", async ({ expect }) => {
    const dir = consumer(PRELUDE +
      `const shapes = { string: "A=1", number: 42, array: [["A", "1"]], null: null, map: new Map([["A", "1"]]), numberValue: { OK: "1", A: 1 },
         nullValue: { A: null }, undefinedValue: { A: undefined }, objectValue: { A: {} }, badName: { "A=B": "1" }, emptyName: { "": "1" }, nulValue: { A: "x\\0y" } };
       const out = {};
       for (const [name, env] of Object.entries(shapes)) {
         let gen; try { gen = run("w", { env }); } catch { out[name] = "threw synchronously"; continue; }
         const first = await gen.next().then(() => "resolved", (e) => e.message);
         const rejected = await runPromise("w", { env }).then(() => "resolved", (e) => e.message);
         out[name] = first === rejected ? first : [first, rejected];
       }
       report({ out, ran: existsSync("tmp.txt") });`,
      { ".loopx/w/index.sh": noting("$LOOPX_BIN output --stop") },
    );
    const result = await runConsumer(runtime, dir, { env: scratchEnv().env });
    expect([result.code, result.stderr]).toEqual([0, ""]);
    expect(result.json.out).toEqual({
      string: 'env must be an object of variable names to string values, got string "A=1"',
      number: "env must be an object of variable names to string values, got number 42",
      array: "env must be an object of variable names to string values, got an array",
      null: "env must be an object of variable names to string values, got null",
      map: "env must be an object of variable names to string values, got a Map",
      numberValue: "env.A must be a string, got number 1",
      nullValue: "env.A must be a string, got null",
      undefinedValue: "env.A must be a string, got undefined",
      objectValue: "env.A must be a string, got an object",
      badName: 'env has an invalid variable name "A=B": names are non-empty and hold no "=" or NUL',
      emptyName: 'env has an invalid variable name "": names are non-empty and hold no "=" or NUL',
      nulValue: "env.A must not contain a NUL character",
    });
    expect(result.json.ran).toBe(false);
  });
});
