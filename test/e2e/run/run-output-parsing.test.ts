/**
 * `loopx run` — structured-output parsing observed end to end (spec §2.3, §6.6, §7.1 step 11, §4.1
 * target validation of goto values).
 *
 * The outcomes that go on (reset, goto) run as one loop per runtime (batch below): on its k-th
 * visit ralph:index prints case k's exact bytes (payloads/k, a non-script file in the workflow)
 * and ralph:b records its stdin for case k, so the trace tells each case's outcome apart:
 *   reset → index k, index k+1        goto b → index k, b k, index k+1
 * A stop or an error ends a run, so each of those cases is a run of its own (`-n 3` or more):
 *   stop → index
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  consumer,
  runConsumer,
  RUNTIMES,
  expectClean,
  expectLoopxError,
  isolatedEnv,
  makeProject,
  readTrace,
  runLoopx,
  sh,
  type RunResult,
  type Runtime,
} from "../../helpers.js";
import { tableFor } from "../../case-tables.js";
import { utf16 } from "../../fixtures/arbitraries.js";

/** A project whose ralph:index prints `payload` verbatim; `extra` adds more files. */
function fixture(payload: string, extra: Record<string, string> = {}): string {
  return makeProject({
    ".loopx/ralph/payload.txt": payload,
    ".loopx/ralph/index.sh": sh('echo index >> "$LOOPX_PROJECT_ROOT/trace.log"\ncat payload.txt'),
    ".loopx/ralph/b.sh": sh('cat > "$LOOPX_PROJECT_ROOT/b.stdin"\necho b >> "$LOOPX_PROJECT_ROOT/trace.log"'),
    ...extra,
  });
}

async function runFixture(runtime: Runtime, cwd: string, n = 3): Promise<RunResult> {
  return runLoopx(runtime, ["run", "-n", String(n), "ralph"], { cwd, env: isolatedEnv() });
}

const STOP = ["index"];

/** [description, exact stdout of ralph:index] → loop resets to the starting target. */
const resetCases: Array<[string, string]> = [
  ["empty stdout (0 bytes)", ""],
  ["a lone newline", "\n"],
  ["plain text", "hello world\n"],
  ["text that merely contains a goto object", 'please {"goto":"b"}\n'],
  ["a JSON array that looks like a goto", '["goto","b"]\n'],
  ["a JSON array of goto objects", '[{"goto":"b"}]\n'],
  ["a JSON string", '"goto"\n'],
  ["a JSON string naming a script", '"b"\n'],
  ["a JSON number", "42\n"],
  ["JSON null", "null\n"],
  ["JSON true", "true\n"],
  ["JSON false", "false\n"],
  ["an empty object", "{}\n"],
  ["an object without known fields", '{"foo":1}\n'],
  ["known field names with the wrong case", '{"Goto":"b","STOP":true,"Result":"x"}\n'],
  ["a goto nested in another field", '{"data":{"goto":"b","stop":true}}\n'],
  ["a numeric goto", '{"goto": 5}\n'],
  ["a null goto", '{"goto": null}\n'],
  ["an array goto", '{"goto": ["b"]}\n'],
  ["an object goto", '{"goto": {"b": 1}}\n'],
  ["a boolean goto", '{"goto": true}\n'],
  ["result without goto", '{"result":"not piped"}\n'],
  ['stop "true" (a string)', '{"stop": "true"}\n'],
  ['stop "false" (a string)', '{"stop": "false"}\n'],
  ["stop 1", '{"stop": 1}\n'],
  ["stop false", '{"stop": false}\n'],
  ["stop null", '{"stop": null}\n'],
  ["stop [true]", '{"stop": [true]}\n'],
  ["a log line before the JSON (stdout is not valid JSON)", 'progress...\n{"goto":"b"}\n'],
  ["two JSON objects", '{"goto":"b"}\n{"goto":"b"}\n'],
  ["truncated JSON", '{"goto":"b"'],
  ["JSON followed by text", '{"goto":"b"} trailing\n'],
];

/** → goto ralph:b. */
const gotoCases: Array<[string, string]> = [
  ["a bare object", '{"goto":"b"}'],
  ["an object plus echo's newline", '{"goto":"b"}\n'],
  ["leading and trailing whitespace", ' \n\t {"goto":"b"} \t\n\n'],
  ["CRLF line endings", '\r\n{"goto":"b"}\r\n'],
  ["pretty-printed JSON", '{\n  "goto": "b"\n}\n'],
  ["extra fields", '{"goto":"b","extra":1,"nested":{"stop":true},"list":[1,2]}\n'],
  ['stop "true" with goto (stop ignored)', '{"stop":"true","goto":"b"}\n'],
  ["stop 1 with goto (stop ignored)", '{"stop":1,"goto":"b"}\n'],
  ["stop false with goto", '{"stop":false,"goto":"b"}\n'],
  ["a unicode-escaped goto", '{"goto":"\\u0062"}\n'],
  ["a qualified same-workflow goto", '{"goto":"ralph:b"}\n'],
];

/** → stop after the first iteration. */
const stopCases: Array<[string, string]> = [
  ["stop true", '{"stop":true}\n'],
  ["stop true with surrounding whitespace", '  \n{"stop": true}  \n'],
  ["stop true with a valid goto", '{"stop":true,"goto":"b"}\n'],
  ["stop true with a goto to a missing script", '{"stop":true,"goto":"missing"}\n'],
  ["stop true with a non-string goto", '{"stop":true,"goto":5}\n'],
  ["stop true with a result", '{"stop":true,"result":"bye"}\n'],
  ["stop true with extra fields", '{"stop":true,"foo":"bar"}\n'],
];

/** [description, `result` JSON value, what ralph:b must read on stdin]. */
const pipeCases: Array<[string, string, string]> = [
  ["a string", '"hello"', "hello"],
  ["an empty string", '""', ""],
  ["a string with spaces and newlines", '"  two\\nlines  \\n"', "  two\nlines  \n"],
  ["non-ASCII text", '"caf\u00e9 \u4e2d \ud83d\ude00"', "caf\u00e9 \u4e2d \ud83d\ude00"],
  ["a string that is itself JSON", '"{\\"goto\\":\\"index\\"}"', '{"goto":"index"}'],
  ["null", "null", "null"],
  ["42", "42", "42"],
  ["1.5", "1.5", "1.5"],
  ["1e21", "1e21", "1e+21"],
  ["true", "true", "true"],
  ["false", "false", "false"],
  ["an object", '{"a":1}', "[object Object]"],
  ["an array", "[1,2]", "1,2"],
  ["an empty array", "[]", ""],
];

/** A case that goes on: what ralph:index prints, and what follows it (b with this stdin, or index again). */
interface Continuing {
  payload: string;
  /** undefined: the loop resets to ralph:index; a string: goto ralph:b, which reads exactly this. */
  bStdin?: string;
}

/** One loop through every case in order, then one empty payload (a reset) so the last case has a next iteration. */
async function runBatch(runtime: Runtime, cases: readonly Continuing[]): Promise<{ result: RunResult; trace: string[]; stdinOf(k: number): string | undefined }> {
  const payloads = Object.fromEntries([...cases.map((c) => c.payload), ""].map((payload, k) => [`.loopx/ralph/payloads/${k}`, payload]));
  const cwd = makeProject({
    ...payloads,
    ".loopx/ralph/index.sh": sh('k=$(cat "$LOOPX_PROJECT_ROOT/k" 2>/dev/null || echo 0)\necho "index $k" >> "$LOOPX_PROJECT_ROOT/trace.log"\necho $((k + 1)) > "$LOOPX_PROJECT_ROOT/k"\ncat "payloads/$k"'),
    ".loopx/ralph/b.sh": sh('k=$(($(cat "$LOOPX_PROJECT_ROOT/k") - 1))\ncat > "$LOOPX_PROJECT_ROOT/b.stdin.$k"\necho "b $k" >> "$LOOPX_PROJECT_ROOT/trace.log"'),
  });
  const iterations = cases.reduce((n, c) => n + (c.bStdin === undefined ? 1 : 2), 1);
  const result = await runFixture(runtime, cwd, iterations);
  const stdinOf = (k: number) => (existsSync(join(cwd, `b.stdin.${k}`)) ? readFileSync(join(cwd, `b.stdin.${k}`), "utf8") : undefined);
  return { result, trace: readTrace(cwd), stdinOf };
}

/** What followed case k in the batch's trace: ["index k+1"] after a reset, ["b k", "index k+1"] after a goto. */
function after(trace: string[], k: number): string[] {
  const at = trace.indexOf(`index ${k}`);
  if (at === -1) return [];
  const next = trace.indexOf(`index ${k + 1}`, at);
  return next === -1 ? trace.slice(at + 1) : trace.slice(at + 1, next + 1);
}

describe.each(RUNTIMES)("run: structured output parsing ($name)", (runtime) => {
  // The cases that go on, in one loop for this runtime: each test reads its own case from it.
  const resets = tableFor(runtime, resetCases);
  const gotos = tableFor(runtime, gotoCases);
  const pipes = tableFor(runtime, pipeCases);
  const continuing: Continuing[] = [
    ...resets.map(([, payload]) => ({ payload })),
    ...gotos.map(([, payload]) => ({ payload, bStdin: "" })),
    ...pipes.map(([, json, expected]) => ({ payload: `{"result": ${json}, "goto": "b"}\n`, bStdin: expected })),
  ];
  let batch: ReturnType<typeof runBatch> | undefined;
  /** The loop, run once for all the cases below (the first test to ask starts it). */
  const batched = async (k: number) => {
    batch ??= runBatch(runtime, continuing);
    const { result, trace, stdinOf } = await batch;
    try {
      expectClean(result);
    } catch (failure) {
      batch = undefined; // a retried test runs the loop again
      throw failure;
    }
    return { next: after(trace, k), stdin: stdinOf(k) };
  };

  describe("falls back to raw result → loop resets (no goto, no stop)", () => {
    it.concurrent.each(resets.map((row, k) => [...row, k] as const))("%s", async (_name, _payload, k) => {
      const { next, stdin } = await batched(k);
      expect(next).toEqual([`index ${k + 1}`]);
      expect(stdin).toBeUndefined();
    });
  });

  describe("parsed as a goto to ralph:b", () => {
    it.concurrent.each(gotos.map((row, i) => [...row, resets.length + i] as const))("%s", async (_name, _payload, k) => {
      const { next, stdin } = await batched(k);
      expect(next).toEqual([`b ${k}`, `index ${k + 1}`]);
      expect(stdin).toBe("");
    });
  });

  describe("parsed as stop → exit 0 after one iteration", () => {
    it.concurrent.each(tableFor(runtime, stopCases))("%s", async (_name, payload) => {
      const cwd = fixture(payload);
      const result = await runFixture(runtime, cwd, 5);
      expectClean(result);
      expect(readTrace(cwd)).toEqual(STOP);
    });
  });

  describe("result is coerced with String(value) and piped to the goto target", () => {
    it.concurrent.each(pipes.map((row, i) => [...row, resets.length + gotos.length + i] as const))("%s", async (_name, _json, expected, k) => {
      const { next, stdin } = await batched(k);
      expect(next).toEqual([`b ${k}`, `index ${k + 1}`]);
      expect(stdin).toBe(expected);
    });

    it.concurrent("a result with extra fields is still piped", async () => {
      const cwd = fixture('{"extra": {"x": 1}, "result": "kept", "goto": "b", "more": null}');
      expectClean(await runFixture(runtime, cwd, 2));
      expect(readFileSync(join(cwd, "b.stdin"), "utf8")).toBe("kept");
    });

    it.concurrent("a result next to a non-string goto is not piped anywhere (reset with empty stdin)", async () => {
      const cwd = makeProject({
        ".loopx/ralph/index.sh": sh(
          'in=$(cat); echo "index stdin=$in" >> "$LOOPX_PROJECT_ROOT/trace.log"\necho \'{"result":"r","goto":7}\'',
        ),
      });
      expectClean(await runFixture(runtime, cwd, 2));
      expect(readTrace(cwd)).toEqual(["index stdin=", "index stdin="]);
    });

    it.concurrent("JSON printed by a TypeScript script is parsed the same way", async () => {
      const project = makeProject({
        ".loopx/ralph/index.ts":
          'import { appendFileSync } from "node:fs";\nappendFileSync(process.env.LOOPX_PROJECT_ROOT + "/trace.log", "ts\\n");\nconsole.log(JSON.stringify({ result: 7, goto: "b", junk: true }));\n',
        ".loopx/ralph/b.sh": sh('cat > "$LOOPX_PROJECT_ROOT/b.stdin"\necho b >> "$LOOPX_PROJECT_ROOT/trace.log"'),
      });
      expectClean(await runFixture(runtime, project, 3));
      expect(readTrace(project)).toEqual(["ts", "b", "ts"]);
      expect(readFileSync(join(project, "b.stdin"), "utf8")).toBe("7");
    });
  });

  describe("invalid goto strings → exit 1 naming the goto", () => {
    // Extra workflows make sure the invalid forms are not "helpfully" resolved to something that exists.
    const extra = {
      ".loopx/a/b.sh": sh('echo "a:b" >> "$LOOPX_PROJECT_ROOT/trace.log"'),
      ".loopx/a/index.sh": sh('echo "a:index" >> "$LOOPX_PROJECT_ROOT/trace.log"'),
      ".loopx/b/index.sh": sh('echo "b:index" >> "$LOOPX_PROJECT_ROOT/trace.log"'),
    };
    const invalid: string[] = [
      ":",
      ":b",
      "b:",
      "ralph:",
      "a:b:c",
      "ralph:b:",
      "::",
      "bad name",
      "b ",
      " b",
      "b.sh",
      "-b",
      "ralph:b.sh",
      "ralph:-b",
      "bad.wf:index",
      "a/b",
      "w\u00f6rk",
    ];

    it.concurrent("an empty-string goto is an invalid target, not an absent goto", async () => {
      const cwd = fixture('{"goto":""}\n', extra);
      const line = expectLoopxError(await runFixture(runtime, cwd));
      expect(line).toMatch(/goto/i);
      expect(line).toMatch(/""|empty/);
      expect(readTrace(cwd)).toEqual(["index"]);
    });

    it.concurrent.each(tableFor(runtime, invalid))("goto %j", async (target) => {
      const cwd = fixture(`${JSON.stringify({ goto: target, result: "r" })}\n`, extra);
      const line = expectLoopxError(await runFixture(runtime, cwd), target);
      expect(line).toMatch(/goto/i);
      expect(readTrace(cwd)).toEqual(["index"]);
    });
  });

  describe("goto to something that does not exist → exit 1 naming it", () => {
    const extra = {
      ".loopx/other/index.sh": sh('echo "other:index" >> "$LOOPX_PROJECT_ROOT/trace.log"'),
      ".loopx/other/step.sh": sh('echo "other:step" >> "$LOOPX_PROJECT_ROOT/trace.log"'),
      ".loopx/noindex/step.sh": sh('echo "noindex:step" >> "$LOOPX_PROJECT_ROOT/trace.log"'),
      ".loopx/loose.sh": sh('echo "loose" >> "$LOOPX_PROJECT_ROOT/trace.log"'),
    };
    const cases: Array<[string, string, string]> = [
      ["a missing bare script", "nope", "nope"],
      ["a bare name that is another workflow, not a script here", "other", "other"],
      ["a missing workflow", "nowf:index", "nowf"],
      ["a missing script in another workflow", "other:nope", "nope"],
      ["the index of a workflow that has none", "noindex:index", "noindex"],
      ["a script that exists only in another workflow", "step", "step"],
      ["a loose file directly in .loopx/", "loose:index", "loose"],
    ];
    it.concurrent.each(tableFor(runtime, cases))("%s (%s)", async (_name, target, needle) => {
      const cwd = fixture(`${JSON.stringify({ goto: target })}\n`, extra);
      const line = expectLoopxError(await runFixture(runtime, cwd), needle);
      expect(line).toMatch(/goto/i);
      expect(readTrace(cwd)).toEqual(["index"]);
    });
  });
});

describe.concurrent.each(RUNTIMES)("run: any goto string ($name)", (runtime) => {
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
    const outs: Array<{ ok?: number; error?: string }> = (await runConsumer(runtime, dir, { timeoutMs: 120_000 })).json;
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
