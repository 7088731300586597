/**
 * `loopx version` and `loopx output` (spec §4.3, §5.4). Black-box: spawns the built CLI.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { parseOutput } from "../../../src/core/output.js";
import { ROOT, RUNTIMES, expectOneLineError, isolatedEnv, makeProject, runLoopx, tempDir } from "../../helpers.js";
import { tableFor } from "../../case-tables.js";
import { argString, normalized } from "../../fixtures/arbitraries.js";

const PACKAGE_VERSION: string = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version;

/** A `.loopx/` that run <target> would reject: version/output must not care. */
function brokenProject(): string {
  return makeProject({
    ".loopx/ralph/index.sh": "#!/bin/bash\n",
    ".loopx/ralph/index.ts": "console.log(1);\n",
    ".loopx/bad.name/index.sh": "#!/bin/bash\n",
  });
}

describe.concurrent.each(RUNTIMES)("version and output ($name)", (runtime) => {
  describe("loopx version (§4.3)", () => {
    it("prints the bare package.json version and a newline, with or without .loopx/", async () => {
      expect(PACKAGE_VERSION).toMatch(/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/);
      for (const cwd of [tempDir(), brokenProject(), makeProject({ ".loopx": "a file\n" })]) {
        const result = await runLoopx(runtime, ["version"], { cwd, env: isolatedEnv() });
        expect(result.stdout).toBe(`${PACKAGE_VERSION}\n`);
        expect(result.stderr).toBe("");
        expect(result.code).toBe(0);
      }
      const empty = tempDir();
      await runLoopx(runtime, ["version"], { cwd: empty, env: isolatedEnv() });
      expect(existsSync(join(empty, ".loopx"))).toBe(false);
    });

    // Judgement call: the spec gives `loopx version` no arguments; extra ones are rejected.
    it("rejects extra arguments", async () => {
      expectOneLineError(await runLoopx(runtime, ["version", "extra"], { cwd: tempDir(), env: isolatedEnv() }), /extra/);
      expectOneLineError(await runLoopx(runtime, ["version", "--unknown"], { cwd: tempDir(), env: isolatedEnv() }), /--unknown/);
    });
  });

  describe("loopx output (§4.3)", () => {
    it.each<[string, string[], Record<string, unknown>]>(tableFor(runtime, [
      ["--result", ["--result", "x"], { result: "x" }],
      ["--goto", ["--goto", "g"], { goto: "g" }],
      ["--stop", ["--stop"], { stop: true }],
      ["--result --goto", ["--result", "done", "--goto", "next-step"], { result: "done", goto: "next-step" }],
      ["all three", ["--result", "r", "--goto", "w:s", "--stop"], { result: "r", goto: "w:s", stop: true }],
      ["flags in another order", ["--stop", "--goto", "g", "--result", "r"], { result: "r", goto: "g", stop: true }],
      ["--result with --stop", ["--result", "bye", "--stop"], { result: "bye", stop: true }],
      ["qualified goto", ["--goto", "review-adr:request-feedback"], { goto: "review-adr:request-feedback" }],
      ["goto a:b:c is not validated", ["--goto", "a:b:c"], { goto: "a:b:c" }],
      ["empty goto is not validated", ["--goto", ""], { goto: "" }],
      ["goto with a leading colon is not validated", ["--goto", ":x"], { goto: ":x" }],
      ["goto with a trailing colon is not validated", ["--goto", "wf:"], { goto: "wf:" }],
      ["goto with invalid name characters is not validated", ["--goto", "bad name!"], { goto: "bad name!" }],
      ["empty result", ["--result", ""], { result: "" }],
      ["result starting with a dash", ["--result", "-5"], { result: "-5" }],
      ["result that looks like a flag", ["--result", "--goto"], { result: "--goto" }],
      ["result that looks like --stop", ["--result", "--stop"], { result: "--stop" }],
      ["result that looks like -h", ["--result", "-h"], { result: "-h" }],
      ["result that looks like --help", ["--result", "--help"], { result: "--help" }],
      ["goto that looks like a flag", ["--goto", "--stop"], { goto: "--stop" }],
      ["result --", ["--result", "--"], { result: "--" }],
      ["result with spaces", ["--result", "  hello   world  "], { result: "  hello   world  " }],
      ["result with quotes and backslashes", ["--result", `say "hi" it's \\n \\"x\\"`], { result: `say "hi" it's \\n \\"x\\"` }],
      ["result with unicode", ["--result", "héllo wörld — 日本語 🚀"], { result: "héllo wörld — 日本語 🚀" }],
      ["result with a newline and a tab", ["--result", "line1\nline2\tend"], { result: "line1\nline2\tend" }],
      ["result with JSON in it", ["--result", '{"stop": true}'], { result: '{"stop": true}' }],
      ["--result=value form with =", ["--result=a=b"], { result: "a=b" }],
      ["--result= empty form", ["--result="], { result: "" }],
      ["--goto=value form", ["--goto=x:y", "--stop"], { goto: "x:y", stop: true }],
      ["result with = separated", ["--result", "a=b"], { result: "a=b" }],
    ]))("%s → exact JSON", async (_label, args, expected) => {
      const cwd = brokenProject();
      const result = await runLoopx(runtime, ["output", ...args], { cwd, env: isolatedEnv() });
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toStrictEqual(expected);
    });

    it.each<[string, string[], RegExp]>(tableFor(runtime, [
      ["no flags", [], /--result|--goto|--stop|flag/],
      ["unknown flag", ["--unknown"], /--unknown/],
      ["unknown flag with a valid one", ["--result", "x", "--nope"], /--nope/],
      ["positional argument", ["foo"], /foo/],
      ["--result missing its value", ["--result"], /--result/],
      ["--goto missing its value", ["--goto"], /--goto/],
      // Judgement calls: the spec rejects duplicate flags for run/install; output follows suit.
      ["duplicate --result", ["--result", "a", "--result", "b"], /--result/],
      ["duplicate --goto", ["--goto", "a", "--goto", "b"], /--goto/],
      ["duplicate --stop", ["--stop", "--stop"], /--stop/],
    ]))("%s → exit 1 with a one-line error", async (_label, args, pattern) => {
      const cwd = tempDir();
      const result = await runLoopx(runtime, ["output", ...args], { cwd, env: isolatedEnv() });
      expectOneLineError(result, pattern);
      expect(existsSync(join(cwd, ".loopx"))).toBe(false);
    });

    it("its JSON drives the loop: tricky result piped through goto, then stop", async () => {
      const value = `-x "q" 's' é=1 #h  `;
      const cwd = makeProject({
        ".loopx/ralph/index.sh": `#!/bin/bash\n"$LOOPX_BIN" output --result '${value.replace(/'/g, "'\\''")}' --goto check\n`,
        ".loopx/ralph/check.sh": '#!/bin/bash\ncat > "$LOOPX_PROJECT_ROOT/got.txt"\n"$LOOPX_BIN" output --stop\n',
      });
      const result = await runLoopx(runtime, ["run", "-n", "5", "ralph"], { cwd, env: isolatedEnv() });
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(readFileSync(join(cwd, "got.txt"), "utf8")).toBe(value);
    });
  });
});

describe.concurrent.each(RUNTIMES)("loopx output: properties ($name)", (runtime) => {
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
});
