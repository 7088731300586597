/**
 * Hardening — property-based tests (issue "faults, hostile input and long runs", item 1).
 *
 * test/unit/{output,envfile,target,script-helpers}.test.ts already hold the basic in-process
 * properties (parsers never throw on arbitrary strings, serializeOutput/serializeEnvAssignment
 * round-trips, the accepted-target set). This file adds what those do not reach:
 *
 * In-process (src/ imported directly):
 * - parseOutput on arbitrary *bytes* decoded the way loopx decodes a script's stdout, on any JSON
 *   layout (indentation, padding, extra keys in any order), and on pathologically deep nesting;
 * - the env-file parser on whole generated files mixing every assignment style, comments, blank
 *   and invalid lines, LF/CRLF endings and trailing whitespace, against a model — and `env set` /
 *   `env remove` edits of such files;
 * - parseTarget: every error is one line, and every accepted target re-parses to itself.
 *
 * Black-box (the built CLI, spawned under node and bun):
 * - `loopx output` flags → parseOutput round-trips, whatever the values look like (`-h`, `--`, ...);
 * - `loopx env set` → `env list` → the script's environment round-trips every settable value;
 * - `output()` inside a real script → the Output the API yields round-trips every valid Output;
 * - `loopx run <any string>` and any goto string never produce an internal error, and a goto is
 *   accepted exactly when it names an existing script.
 */
import fc from "fast-check";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseOutput, serializeOutput, type Output } from "../src/core/output.js";
import { parseEnvFile, serializeEnvAssignment, withEnvVar, withoutEnvVar } from "../src/core/envfile.js";
import { formatTarget, gotoTargetOf, parseTarget, runTargetOf } from "../src/core/target.js";
import { ROOT, RUNTIMES, isolatedEnv, makeProject, makeSymlink, runCommand, runLoopx, tempDir, type Runtime } from "./helpers.js";

// ---------------------------------------------------------------------------------------------
// Arbitraries
// ---------------------------------------------------------------------------------------------

/** Any UTF-16 string, lone surrogates included. */
const utf16 = (maxLength = 40) => fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength });

/** Tokens that look like CLI syntax: the values a flag parser is most likely to get wrong. */
const TRICKY = ["", " ", "-", "--", "-h", "--help", "--stop", "--result", "--goto", "-n", "-e", "=", "a=b", "--result=x", "#", '"', "'", '""', "''", "\\", "\\n", "$HOME", "`id`", "  trailing  ", "\t", "é", "😀", "中文", "\u2028", "null", "true", "{}", '{"stop":true}'];

/** Strings that can travel through argv: well-formed Unicode, no NUL. */
const argString = fc.oneof(
  { arbitrary: fc.constantFrom(...TRICKY), weight: 2 },
  { arbitrary: fc.string({ unit: "binary", maxLength: 24 }), weight: 3 },
  { arbitrary: fc.array(fc.constantFrom(...TRICKY), { maxLength: 4 }).map((parts) => parts.join("")), weight: 1 },
).filter((s) => !s.includes("\0"));

/** Values `loopx env set` accepts: no \n, no \r (spec §4.3). */
const settableValue = argString.filter((s) => !s.includes("\n") && !s.includes("\r"));

const envKey = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,6}$/);

/** A valid Output as `output()` / `loopx output` can produce it. */
const validOutput = fc
  .record({ result: fc.option(utf16(), { nil: undefined }), goto: fc.option(utf16(12), { nil: undefined }), stop: fc.option(fc.constant(true as const), { nil: undefined }) })
  .filter((o) => o.result !== undefined || o.goto !== undefined || o.stop !== undefined);

function normalized(o: { result?: unknown; goto?: unknown; stop?: unknown }): Output {
  const out: Output = {};
  if (o.result !== undefined) out.result = String(o.result);
  if (typeof o.goto === "string") out.goto = o.goto;
  if (o.stop === true) out.stop = true;
  return out;
}

// ---------------------------------------------------------------------------------------------
// In-process properties
// ---------------------------------------------------------------------------------------------

describe("parseOutput — hostile stdout (in-process)", () => {
  it("arbitrary bytes, decoded as loopx decodes stdout: never throws; non-structured → the decoded text", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.constantFrom("", '{"result":"', '{"goto":"x","result":"'), (bytes, prefix) => {
        const stdout = Buffer.concat([Buffer.from(prefix), Buffer.from(bytes)]).toString("utf8");
        const parsed = parseOutput(stdout);
        let structured = false;
        try {
          const value = JSON.parse(stdout);
          structured = typeof value === "object" && value !== null && !Array.isArray(value) && ["result", "goto", "stop"].some((k) => Object.hasOwn(value, k));
        } catch {
          structured = false;
        }
        if (!structured) expect(parsed).toEqual({ result: stdout });
        for (const [key, value] of Object.entries(parsed)) {
          expect(["result", "goto", "stop"]).toContain(key);
          expect(key === "stop" ? value === true : typeof value === "string").toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });

  it("any JSON layout of a valid Output — indentation, padding, extra keys, key order — parses to that Output", () => {
    const ws = fc.array(fc.constantFrom(" ", "\t", "\n", "\r"), { maxLength: 4 }).map((a) => a.join(""));
    const extraKey = fc.string({ maxLength: 8 }).filter((k) => !["result", "goto", "stop", "__proto__"].includes(k));
    fc.assert(
      fc.property(validOutput, fc.dictionary(extraKey, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }), fc.constantFrom(0, 1, 2, "\t"), ws, ws, fc.boolean(), (output, extras, indent, before, after, extrasFirst) => {
        const known = JSON.parse(serializeOutput(output)) as Record<string, unknown>;
        const object = extrasFirst ? { ...extras, ...known } : { ...known, ...extras };
        const text = before + JSON.stringify(object, null, indent) + after;
        expect(parseOutput(text)).toEqual(normalized(output));
      }),
      { numRuns: 500 },
    );
  });

  it("a stop that is not exactly true, or a goto that is not a string, never survives any layout", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 2 }).filter((v) => v !== true), fc.jsonValue({ maxDepth: 2 }).filter((v) => typeof v !== "string"), utf16(), (stop, goto, result) => {
        const parsed = parseOutput(JSON.stringify({ goto, stop, result }, null, 1));
        expect(parsed).toEqual({ result });
      }),
      { numRuns: 300 },
    );
  });

  it("pathologically deep nesting (up to 200,000 levels) in and around known fields never throws", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 200_000 }), fc.constantFrom("[", "{\"a\":"), fc.constantFrom("bare", "result", "goto", "stop"), (depth, open, where) => {
        const close = open === "[" ? "]" : "}";
        const nested = open.repeat(depth) + (open === "[" ? "" : "1") + close.repeat(depth);
        const text = where === "bare" ? nested : `{"${where}":${nested}}`;
        const parsed = parseOutput(text);
        if (where === "result") expect(typeof parsed.result).toBe("string");
        if (where === "goto" || where === "stop") expect(parsed).toEqual({});
        if (where === "bare") expect(parsed).toEqual({ result: text });
      }),
      { numRuns: 40 },
    );
  });
});

describe("env-file parser — whole generated files against a model (in-process)", () => {
  type Line =
    | { kind: "set"; key: string; value: string; style: "double" | "single" | "bare"; trailing: string }
    | { kind: "comment"; text: string }
    | { kind: "blank"; text: string }
    | { kind: "invalid"; text: string };

  // Values are single-line; a NUL makes the line invalid (no process environment can hold one).
  const noNewline = (s: string) => !s.includes("\n") && !s.includes("\r") && !s.includes("\0");
  const trailingWs = fc.array(fc.constantFrom(" ", "\t"), { maxLength: 3 }).map((a) => a.join(""));
  const bareValue = utf16(16).filter((v) => noNewline(v) && v === v.trimEnd() && !(v.length >= 2 && (v[0] === '"' || v[0] === "'") && v.at(-1) === v[0]));
  const line: fc.Arbitrary<Line> = fc.oneof(
    { arbitrary: fc.record({ kind: fc.constant("set" as const), key: envKey, value: utf16(16).filter(noNewline), style: fc.constantFrom("double" as const, "single" as const), trailing: trailingWs }), weight: 4 },
    { arbitrary: fc.record({ kind: fc.constant("set" as const), key: envKey, value: bareValue, style: fc.constant("bare" as const), trailing: fc.constant("") }), weight: 2 },
    { arbitrary: utf16(16).filter(noNewline).map((t) => ({ kind: "comment" as const, text: `#${t}` })), weight: 1 },
    { arbitrary: trailingWs.map((t) => ({ kind: "blank" as const, text: t })), weight: 1 },
    {
      arbitrary: fc
        .oneof(
          utf16(10).filter(noNewline).map((t) => `1BAD=${t}`),
          envKey.map((k) => ` ${k}=x`),
          envKey.map((k) => `${k} =x`),
          envKey.map((k) => `export ${k}=x`),
          fc.stringMatching(/^[a-z ]{1,10}$/).filter((t) => t.trim() !== ""),
        )
        .map((text) => ({ kind: "invalid" as const, text })),
      weight: 1,
    },
  );

  function render(l: Line): string {
    switch (l.kind) {
      case "set":
        if (l.style === "bare") return `${l.key}=${l.value}`;
        return `${l.key}=${l.style === "double" ? `"${l.value}"` : `'${l.value}'`}${l.trailing}`;
      default:
        return l.text;
    }
  }

  const file = fc.record({ lines: fc.array(line, { maxLength: 12 }), endings: fc.array(fc.constantFrom("\n", "\r\n"), { minLength: 12, maxLength: 12 }), finalNewline: fc.boolean() });

  function build(f: { lines: Line[]; endings: string[]; finalNewline: boolean }): string {
    return f.lines.map((l, i) => render(l) + (i < f.lines.length - 1 || f.finalNewline ? f.endings[i]! : "")).join("");
  }

  function model(lines: Line[]): Map<string, string> {
    const vars = new Map<string, string>();
    for (const l of lines) if (l.kind === "set") vars.set(l.key, l.value);
    return vars;
  }

  const sorted = (m: Map<string, string>) => [...m].sort(([a], [b]) => (a < b ? -1 : 1));

  it("mixed LF/CRLF files: every assignment style reads back exactly, one warning per invalid line", () => {
    fc.assert(
      fc.property(file, (f) => {
        const parsed = parseEnvFile(build(f), "env");
        expect(sorted(parsed.vars)).toEqual(sorted(model(f.lines)));
        expect(parsed.warnings).toHaveLength(f.lines.filter((l) => l.kind === "invalid").length);
      }),
      { numRuns: 1000 },
    );
  });

  it("env set / env remove on such files keep every other variable and write a parseable file", () => {
    fc.assert(
      fc.property(file, envKey, settableValue, fc.boolean(), (f, key, value, remove) => {
        const text = build(f);
        const expected = model(f.lines);
        let next: string;
        if (remove) {
          next = withoutEnvVar(text, key) ?? text;
          expected.delete(key);
        } else {
          next = withEnvVar(text, key, value);
          expected.set(key, value);
          expect(next.split("\n")).toContain(serializeEnvAssignment(key, value));
        }
        const parsed = parseEnvFile(next, "env");
        expect(sorted(parsed.vars)).toEqual(sorted(expected));
        expect(parsed.warnings).toHaveLength(f.lines.filter((l) => l.kind === "invalid").length);
      }),
      { numRuns: 1000 },
    );
  });
});

describe("parseTarget — messages and idempotence (in-process)", () => {
  it("every rejection is a single line (safe for a one-line `loopx:` error), whatever the input", () => {
    fc.assert(
      fc.property(fc.oneof(utf16(30), fc.constantFrom("\n", "a\nb", "w:\r", ":\n", "a:b\n:c", "\u0000", "\u001b[2J")), (s) => {
        const parsed = parseTarget(s);
        if (!parsed.ok) {
          expect(parsed.error).not.toMatch(/[\n\r\u0000\u001b]/);
          expect(parsed.error.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("every accepted target, resolved for run or goto and formatted, re-parses to the same target", () => {
    const name = fc.stringMatching(/^[a-zA-Z0-9_][a-zA-Z0-9_-]{0,8}$/);
    fc.assert(
      fc.property(fc.oneof(name, fc.tuple(name, name).map(([a, b]) => `${a}:${b}`)), name, (s, current) => {
        const parsed = parseTarget(s);
        expect(parsed.ok).toBe(true);
        if (!parsed.ok) return;
        for (const target of [gotoTargetOf(parsed.target, current), runTargetOf(parsed.target)]) {
          const again = parseTarget(formatTarget(target));
          expect(again.ok && again.target).toEqual({ workflow: target.workflow, script: target.script });
        }
      }),
      { numRuns: 1000 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Black-box properties
// ---------------------------------------------------------------------------------------------

function consumer(source: string, files: Record<string, string>): string {
  const dir = makeProject({ "consumer.mjs": source, ...files });
  makeSymlink(ROOT, join(dir, "node_modules", "loopx"));
  return dir;
}

async function runConsumer(runtime: Runtime, dir: string, timeoutMs = 120_000): Promise<any> {
  const result = await runCommand(runtime.exe, ["consumer.mjs"], { cwd: dir, env: isolatedEnv(), timeoutMs });
  const last = result.stdout.trim().split("\n").pop() ?? "";
  try {
    return JSON.parse(last);
  } catch {
    throw new Error(`consumer failed (code ${result.code}):\n${result.stdout.slice(0, 3000)}\n${result.stderr.slice(0, 3000)}`);
  }
}

/** Exactly one `loopx:` line, no stack trace, no internal error. */
function expectCleanError(stderr: string): void {
  expect(stderr).not.toContain("internal error");
  expect(stderr).not.toMatch(/^\s+at /m);
  expect(stderr).toMatch(/^loopx: [^\n]*\n$/);
}

describe.concurrent.each(RUNTIMES)("black-box properties ($name)", (runtime) => {
  it("`loopx output` flags (any order, `--flag value` or `--flag=value`) → parseOutput round-trips", { timeout: 120_000 }, async ({ expect }) => {
    const cwd = tempDir();
    const env = isolatedEnv();
    await fc.assert(
      fc.asyncProperty(
        fc.record({ result: fc.option(argString, { nil: undefined }), goto: fc.option(argString, { nil: undefined }), stop: fc.boolean() }).filter((o) => o.result !== undefined || o.goto !== undefined || o.stop),
        fc.constantFrom("result-goto-stop", "stop-goto-result", "goto-stop-result"),
        fc.boolean(),
        async (o, order, joined) => {
          const groups: Record<string, string[]> = {
            result: o.result === undefined ? [] : joined ? [`--result=${o.result}`] : ["--result", o.result],
            goto: o.goto === undefined ? [] : joined ? [`--goto=${o.goto}`] : ["--goto", o.goto],
            stop: o.stop ? ["--stop"] : [],
          };
          const args = ["output", ...order.split("-").flatMap((k) => groups[k]!)];
          const run = await runLoopx(runtime, args, { cwd, env });
          expect(run.stderr).toBe("");
          expect(run.code).toBe(0);
          expect(run.stdout.endsWith("\n")).toBe(true);
          expect(parseOutput(run.stdout)).toEqual(normalized({ result: o.result, goto: o.goto, stop: o.stop || undefined }));
        },
      ),
      { numRuns: 25 },
    );
  });

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
      { numRuns: 10 },
    );
  });

  it("output() in a real script process → the Output the API yields round-trips every valid Output", { timeout: 180_000 }, async ({ expect }) => {
    const count = runtime.name === "node" ? 10 : 30; // a TS script under node+tsx costs ~0.5-1 s
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof({ arbitrary: validOutput, weight: 4 }, { arbitrary: fc.oneof(utf16(), fc.integer(), fc.boolean(), fc.double({ noNaN: true, noDefaultInfinity: true }) /* must survive cases.json */), weight: 1 }), { minLength: count, maxLength: count }), async (cases) => {
        const dir = consumer(
          `import { runPromise } from "loopx";
           const cases = ${JSON.stringify(cases.length)};
           const outs = [];
           for (let i = 0; i < cases; i++) {
             process.env.CASE_INDEX = String(i);
             const [o] = await runPromise("w", { maxIterations: 1 });
             outs.push(o);
           }
           console.log(JSON.stringify(outs));`,
          {
            "cases.json": JSON.stringify(cases),
            ".loopx/w/index.ts":
              'import { output } from "loopx";\nimport { readFileSync } from "node:fs";\n' +
              'const cases = JSON.parse(readFileSync(`${process.env.LOOPX_PROJECT_ROOT}/cases.json`, "utf8"));\n' +
              "output(cases[Number(process.env.CASE_INDEX)]);\n",
          },
        );
        const outs = await runConsumer(runtime, dir);
        const expected = cases.map((c) => (typeof c === "object" && c !== null ? normalized(c) : { result: String(c) }));
        expect(outs).toEqual(expected);
      }),
      { numRuns: 1 },
    );
  });

  it("`loopx run <any string>`: help, a run, or one clean `loopx:` error line — never a crash", { timeout: 120_000 }, async ({ expect }) => {
    const cwd = makeProject({ ".loopx/w/index.sh": 'echo \'{"stop":true}\'\n', ".loopx/w/other.sh": 'echo \'{"stop":true}\'\n' });
    const env = isolatedEnv();
    const target = fc.oneof(fc.constantFrom("", ":", "w:", ":index", "a:b:c", "w:index", "w", "w:other", "W", " w", "w ", "w\t", "w:index:", "w::index", "../w", ".loopx/w", "w/index"), argString);
    await fc.assert(
      fc.asyncProperty(target, async (t) => {
        const run = await runLoopx(runtime, ["run", "-n", "1", t], { cwd, env });
        expect([0, 1]).toContain(run.code);
        if (run.code === 1) expectCleanError(run.stderr);
        else expect(run.stderr).not.toContain("loopx:");
        const valid = ["w", "w:index", "w:other"].includes(t);
        if (valid) expect(run.code).toBe(0);
      }),
      { numRuns: 30 },
    );
  });

  it("any goto string: followed exactly when it names an existing script, else a one-line error naming the goto", { timeout: 120_000 }, async ({ expect }) => {
    const gotos = fc.sample(fc.oneof(fc.constantFrom("index", "other", "w:index", "w:other", "w:nope", "nope", "x:index", "", ":", "w:", ":other", "a:b:c", "other ", "OTHER"), utf16(12)), { numRuns: 80 });
    const dir = consumer(
      `import { runPromise } from "loopx";
       import { writeFileSync } from "node:fs";
       const gotos = ${JSON.stringify(gotos)};
       const out = [];
       for (const goto of gotos) {
         writeFileSync("goto.json", JSON.stringify({ goto }));
         try { const outputs = await runPromise("w", { maxIterations: 2 }); out.push({ ok: outputs.length }); }
         catch (e) { out.push({ error: e instanceof Error ? e.message : "non-error: " + String(e) }); }
       }
       console.log(JSON.stringify(out));`,
      { ".loopx/w/index.sh": 'cat "$LOOPX_PROJECT_ROOT/goto.json"\n', ".loopx/w/other.sh": "exit 0\n" },
    );
    const outs: Array<{ ok?: number; error?: string }> = await runConsumer(runtime, dir);
    expect(outs).toHaveLength(gotos.length);
    gotos.forEach((goto, i) => {
      const follows = ["index", "other", "w:index", "w:other"].includes(goto);
      if (follows) expect(outs[i], JSON.stringify(goto)).toEqual({ ok: 2 });
      else {
        expect(outs[i]!.error, JSON.stringify(goto)).toBeTypeOf("string");
        expect(outs[i]!.error).toContain("goto");
        expect(outs[i]!.error).not.toMatch(/[\n\r]/);
      }
    });
  });
});
