/**
 * The loop's environment (spec §8), its first-entry version checks (§3.2) and a property test of
 * the whole §7.1 algorithm against a model — over the in-memory host of memory-host.ts.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LoopxError } from "../../../src/core/errors.js";
import { runLoop } from "../../../src/core/loop.js";
import { parseOutput, type Output } from "../../../src/core/output.js";
import { collect, GLOBAL_ENV, J, memoryHost, MemoryTree, request, ROOT, session, STOP, type Reply } from "./memory-host.js";

describe("environment (spec §8)", () => {
  // Precedence (highest wins): loopx-injected > RunOptions.env > local -e > global > inherited.
  it("merges inherited < global < local < RunOptions.env < loopx-injected", async () => {
    const { host, calls } = memoryHost(
      { "ralph:index": STOP },
      {
        envFiles: {
          [GLOBAL_ENV]: 'A=global\nB=global\nLOOPX_WORKFLOW=evil\nQ="quoted value # x"\n',
          "/env/local.env": "B=local\nC=local\nE=local\nLOOPX_BIN=evil\nLOOPX_PROJECT_ROOT=evil\n",
        },
      },
    );
    const baseEnv = { A: "base", B: "base", D: "base", LOOPX_BIN: "base" };
    const { error } = await collect(runLoop(request("ralph", { envFile: "/env/local.env", baseEnv, env: { E: "option", LOOPX_RUN_ID: "option" } }), host, session()));
    expect(error).toBeUndefined();
    const env = calls[0]!.env;
    expect(env).toMatchObject({ A: "global", B: "local", C: "local", D: "base", E: "option", Q: "quoted value # x" });
    expect(env).toMatchObject({ LOOPX_BIN: "/x", LOOPX_PROJECT_ROOT: ROOT, LOOPX_WORKFLOW: "ralph" });
    expect(env.LOOPX_RUN_ID).not.toBe("option");
  });

  it("LOOPX_WORKFLOW follows the workflow of the running script", async () => {
    const { host, calls } = memoryHost({
      "ralph:index": [J({ goto: "review-adr:start" }), STOP],
      "review-adr:start": J({ goto: "apply-feedback" }),
      "review-adr:apply-feedback": "",
    });
    await collect(runLoop(request("ralph"), host, session()));
    expect(calls.map((c) => [c.label, c.env.LOOPX_WORKFLOW])).toStrictEqual([
      ["ralph:index", "ralph"],
      ["review-adr:start", "review-adr"],
      ["review-adr:apply-feedback", "review-adr"],
      ["ralph:index", "ralph"],
    ]);
  });

  it("no global env file → only inherited + injected variables", async () => {
    const { host, calls } = memoryHost({ "ralph:index": STOP });
    const before = Date.now();
    const s = session();
    await collect(runLoop(request("ralph", { baseEnv: { ONLY: "base" } }), host, s));
    expect(calls[0]!.env).toStrictEqual({ ONLY: "base", LOOPX_BIN: "/x", LOOPX_PROJECT_ROOT: ROOT, LOOPX_WORKFLOW: "ralph", LOOPX_RUN_ID: s.id, LOOPX_ITERATION: "1" });
    // newRunId: 8 base-36 digits of the start time in ms, then one digit per random byte (7, as the engine gives).
    expect(s.id).toMatch(/^[0-9a-z]{8}[0-9a-z]{7}$/);
    const started = parseInt(s.id.slice(0, 8), 36);
    expect(started).toBeGreaterThanOrEqual(before);
    expect(started).toBeLessThanOrEqual(Date.now());
  });

  it("env keys like __proto__ and constructor are passed as ordinary variables", async () => {
    const { host, calls } = memoryHost({ "ralph:index": STOP }, { envFiles: { [GLOBAL_ENV]: "__proto__=p\nconstructor=c\ntoString=t\n" } });
    await collect(runLoop(request("ralph"), host, session()));
    const env = calls[0]!.env;
    expect(Object.hasOwn(env, "__proto__")).toBe(true);
    expect(Object.getOwnPropertyDescriptor(env, "__proto__")?.value).toBe("p");
    expect(Object.getOwnPropertyDescriptor(env, "constructor")?.value).toBe("c");
    expect(Object.getOwnPropertyDescriptor(env, "toString")?.value).toBe("t");
  });

  // "Non-blank, non-comment lines that do not contain a valid key ... are ignored with a warning to stderr."
  it("invalid env lines become warnings and are skipped", async () => {
    const { host, calls, warnings } = memoryHost({ "ralph:index": STOP }, { envFiles: { [GLOBAL_ENV]: "GOOD=1\n1BAD=val\nno equals\n" } });
    expect((await collect(runLoop(request("ralph"), host, session()))).error).toBeUndefined();
    expect(warnings).toHaveLength(2);
    expect(calls[0]!.env.GOOD).toBe("1");
    expect(Object.keys(calls[0]!.env)).not.toContain("1BAD");
  });

  // "Environment variables are loaded once at loop start and cached for the duration of the loop."
  it("env files are read once: edits during the loop are not picked up", async () => {
    const envFiles: Record<string, string> = { [GLOBAL_ENV]: "V=before\n" };
    const { host, calls } = memoryHost({ "ralph:index": [() => ((envFiles[GLOBAL_ENV] = "V=after\n"), ""), STOP] }, { envFiles });
    await collect(runLoop(request("ralph"), host, session()));
    expect(calls.map((c) => c.env.V)).toStrictEqual(["before", "before"]);
  });

  // "-e <path> ... a missing file is an error"; an unreadable global env file is one too (the
  // host's reader says why: see test/unit/runtime/env-files.test.ts for the real files).
  it.each<[string, Record<string, string | LoopxError>, string | undefined]>([
    ["a missing -e file", {}, "/env/nope.env"],
    ["an unreadable -e file", { "/env/locked.env": new LoopxError("cannot read env file /env/locked.env: permission denied") }, "/env/locked.env"],
    ["an unreadable global env file", { [GLOBAL_ENV]: new LoopxError(`cannot read global env file ${GLOBAL_ENV}: permission denied`) }, undefined],
  ])("%s is an error before any iteration", async (_label, envFiles, envFile) => {
    const { host, calls } = memoryHost({ "ralph:index": STOP }, { envFiles });
    const { error } = await collect(runLoop(request("ralph", { envFile }), host, session()));
    expect(error).toBeInstanceOf(LoopxError);
    expect((error as Error).message).toContain(envFile ?? GLOBAL_ENV);
    expect(calls).toHaveLength(0);
  });
});

describe("first entry into workflows (spec §3.2 version check)", () => {
  it("is made once per workflow, before its first script runs", async () => {
    const { host, entries, events } = memoryHost({
      "ralph:index": [J({ goto: "review-adr:start" }), J({ goto: "review-adr:index" })],
      "review-adr:start": "",
      "review-adr:index": STOP,
    });
    await collect(runLoop(request("ralph"), host, session()));
    expect(entries()).toStrictEqual(["ralph", "review-adr"]);
    expect(events).toStrictEqual(["enter:ralph", "run:ralph:index", "enter:review-adr", "run:review-adr:start", "run:ralph:index", "run:review-adr:index"]);
  });

  it.each<[string, string, string[]]>([
    ["a satisfied range", J({ dependencies: { loopx: "^1.0.0" } }), []],
    ["an unsatisfied range", J({ dependencies: { loopx: "^2.0.0" } }), ['workflow "review-adr" declares loopx version ^2.0.0, but the running loopx version is 1.0.0 (not satisfied)']],
    ["invalid JSON", "{", [expect.stringMatching(/^workflow "review-adr": package.json is invalid JSON \(.*\); loopx version check skipped$/) as unknown as string]],
    ["no loopx dependency", J({ dependencies: { other: "1" } }), []],
  ])("%s warns as spec §3.2 says, on entry by goto", async (_label, packageJson, expected) => {
    const tree = new MemoryTree();
    tree.add({ ".loopx/review-adr/package.json": packageJson });
    const { host, warnings } = memoryHost({ "ralph:index": [J({ goto: "review-adr:start" }), STOP], "review-adr:start": "" }, { tree });
    expect((await collect(runLoop(request("ralph"), host, session()))).error).toBeUndefined();
    expect(warnings).toStrictEqual(expected);
  });
});

describe("property: runLoop matches a model of the §7.1 algorithm", () => {
  // Known scripts of the standard project.
  const SCRIPTS: Record<string, string[]> = {
    ralph: ["index", "check-ready", "other"],
    "review-adr": ["index", "request-feedback", "apply-feedback", "start"],
    noindex: ["only"],
  };
  const ALL_LABELS = Object.entries(SCRIPTS).flatMap(([w, ss]) => ss.map((s) => `${w}:${s}`));
  const NAME = /^[a-zA-Z0-9_][a-zA-Z0-9_-]*$/;

  function resolveGoto(goto: string, current: string): string | undefined {
    const parts = goto.split(":");
    if (parts.length > 2 || !parts.every((p) => NAME.test(p))) return undefined;
    const [w, s] = parts.length === 1 ? [current, parts[0]!] : [parts[0]!, parts[1]!];
    return SCRIPTS[w]?.includes(s) ? `${w}:${s}` : undefined;
  }

  const gotoValue = fc.oneof(
    fc.constantFrom("index", "check-ready", "other", "only", "start", "apply-feedback", "request-feedback", "nope"),
    fc.constantFrom(...ALL_LABELS),
    fc.constantFrom("noindex:index", "nope:index", "a:b:c", ":x", "x:", "", "bad name", "review-adr"),
  );
  const reply = fc.oneof(
    fc.record({ result: fc.option(fc.string({ maxLength: 6 }), { nil: undefined }), goto: fc.option(gotoValue, { nil: undefined }), stop: fc.option(fc.constantFrom(true, false, "true"), { nil: undefined }) }).map((o) => JSON.stringify(o)),
    fc.constantFrom("", "raw text", "[1]", '{"goto":5,"result":"n"}', "{}"),
  );

  it("calls, stdin, outputs and errors agree with the model", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("ralph", "ralph:check-ready", "review-adr:start", "noindex:only"),
        fc.option(fc.integer({ min: 0, max: 8 }), { nil: undefined }),
        fc.array(reply, { minLength: 1, maxLength: 12 }),
        async (target, max, replies) => {
          // Model
          const start = target.includes(":") ? target : `${target}:index`;
          const expectedCalls: Array<[string, string]> = [];
          const expectedOutputs: Output[] = [];
          let expectError = false;
          const next = (i: number) => (i < replies.length ? replies[i]! : STOP);
          let cur = start;
          let stdin = "";
          for (let i = 0; ; i++) {
            if (max === 0) break;
            expectedCalls.push([cur, stdin]);
            const out = parseOutput(next(i));
            expectedOutputs.push(out);
            if (out.stop === true) break;
            if (max !== undefined && i + 1 >= max) break;
            if (out.goto !== undefined) {
              const resolved = resolveGoto(out.goto, cur.split(":")[0]!);
              if (!resolved) {
                expectError = true;
                break;
              }
              cur = resolved;
              stdin = out.result ?? "";
            } else {
              cur = start;
              stdin = "";
            }
          }

          // Actual
          let i = 0;
          const table: Record<string, Reply> = {};
          for (const label of ALL_LABELS) table[label] = () => next(i++);
          const { host, calls } = memoryHost(table);
          const { outputs, error } = await collect(runLoop(request(target, { maxIterations: max }), host, session()));
          expect(calls.map((c) => [c.label, c.stdin])).toStrictEqual(expectedCalls);
          expect(outputs).toStrictEqual(expectedOutputs);
          if (expectError) {
            expect(error).toBeInstanceOf(LoopxError);
            expect((error as LoopxError).exitCode).toBe(1);
          } else expect(error).toBeUndefined();
        },
      ),
      { numRuns: 300 },
    );
  });
});
