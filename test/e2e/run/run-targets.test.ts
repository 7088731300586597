/**
 * `loopx run <target>` — target grammar and validation (spec §4.1, §7.1 step 3, §12 "invalid target
 * strings ... are not usage errors — they are rejected after discovery").
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { RUNTIMES, expectClean, expectLoopxError, isolatedEnv, makeProject, readTrace, runIsolated as run, runLoopx, sh, tempDir } from "../../helpers.js";
import { tableFor } from "../../case-tables.js";
import { argString } from "../../fixtures/arbitraries.js";

/** Records "<workflow>:<label>" and stops. */
const mark = (label: string): string =>
  sh(`echo "$LOOPX_WORKFLOW:${label}" >> "$LOOPX_PROJECT_ROOT/trace.log"\necho '{"stop":true}'`);

/**
 * A project in which every invalid target below has a plausible "lenient" interpretation that exists
 * (wf:index, script `script` in wf, a:b, ...), so a lenient implementation would run something.
 */
function project(): string {
  return makeProject({
    ".loopx/wf/index.sh": mark("index"),
    ".loopx/wf/script.sh": mark("script"),
    ".loopx/wf/name.sh": mark("name"),
    ".loopx/script/index.sh": mark("index"),
    ".loopx/a/index.sh": mark("index"),
    ".loopx/a/b.sh": mark("b"),
    ".loopx/b/index.sh": mark("index"),
    ".loopx/bad/index.sh": mark("index"),
    ".loopx/bad/name.sh": mark("name"),
  });
}

/** Invalid target strings (all non-empty; the empty string is tested separately). */
const INVALID = [
  ":",
  ":script",
  ":index",
  "wf:",
  "a:b:c",
  "a:b:",
  "::",
  "wf::script",
  "bad name",
  "wf:bad.name",
  "wf:script.sh",
  "wf.sh",
  "-wf",
  "wf:-x",
  " wf",
  "wf ",
  "wf: script",
  "wf/script",
  ".loopx/wf",
  "w\u00f6rk",
  "wf:index\n",
];

describe.each(RUNTIMES)("run: targets ($name)", (runtime) => {
  describe("valid targets", () => {
    it.concurrent.each([
      ["wf", "wf:index"],
      ["wf:index", "wf:index"],
      ["wf:script", "wf:script"],
      ["script", "script:index"],
      ["a:b", "a:b"],
    ])("`run %s` runs %s", async (target, expected) => {
      const cwd = project();
      expectClean(await run(runtime, cwd, ["run", target]));
      expect(readTrace(cwd)).toEqual([expected]);
    });

    it.concurrent("the target may come before or after the run options", async () => {
      const cwd = project();
      expectClean(await run(runtime, cwd, ["run", "wf:script", "-n", "1"]));
      expectClean(await run(runtime, cwd, ["run", "-n", "1", "a:b"]));
      expect(readTrace(cwd)).toEqual(["wf:script", "a:b"]);
    });
  });

  describe("invalid targets → exit 1 naming the target, nothing runs", () => {
    it.concurrent("the empty string", async () => {
      const cwd = project();
      const line = expectLoopxError(await run(runtime, cwd, ["run", ""]));
      expect(line).toMatch(/""|empty/);
      expect(readTrace(cwd)).toEqual([]);
    });

    it.concurrent.each(tableFor(runtime, INVALID))("%j", async (target) => {
      const cwd = project();
      expectLoopxError(await run(runtime, cwd, ["run", target]), target.trimEnd() === target ? target : target.trimEnd());
      expect(readTrace(cwd)).toEqual([]);
    });

    it.concurrent.each(tableFor(runtime, [":script", "wf:", "a:b:c", "bad name", ""]))("%j is rejected with -n 0 as well", async (target) => {
      const cwd = project();
      expectLoopxError(await run(runtime, cwd, ["run", "-n", "0", target]));
      expect(readTrace(cwd)).toEqual([]);
    });
  });

  describe("invalid targets are detected after discovery, not as usage errors", () => {
    const noLoopxError = async (cwd: string): Promise<string> => {
      const reference = await run(runtime, cwd, ["run", "ralph"]);
      return expectLoopxError(reference, ".loopx");
    };

    it.concurrent.each(tableFor(runtime, ["", ":", ":script", "wf:", "a:b:c", "bad name", "wf:bad.name"]))(
      "with no .loopx/, `run %j` reports the missing .loopx/ (same error as a valid target)",
      async (target) => {
        const cwd = tempDir();
        const expected = await noLoopxError(cwd);
        const line = expectLoopxError(await run(runtime, cwd, ["run", target]), ".loopx");
        expect(line).toBe(expected);
      },
    );

    it.concurrent("with an invalid sibling workflow, an invalid target still fails with exit 1 and runs nothing", async () => {
      const cwd = makeProject({ ".loopx/wf/index.sh": mark("index"), ".loopx/bad.name/index.sh": mark("index") });
      expectLoopxError(await run(runtime, cwd, ["run", "wf:"]));
      expect(readTrace(cwd)).toEqual([]);
    });

    it.concurrent("an invalid target is reported as a target error, not with usage text on stdout", async () => {
      const cwd = project();
      const result = await run(runtime, cwd, ["run", "a:b:c"]);
      expectLoopxError(result, "a:b:c");
      expect(result.stdout).toBe("");
    });
  });
});

describe.concurrent.each(RUNTIMES)("run: any target string ($name)", (runtime) => {
  it("`loopx run <any string>`: help, a run, or one clean `loopx:` error line — never a crash", { timeout: 120_000 }, async ({ expect }) => {
    const cwd = makeProject({ ".loopx/w/index.sh": 'echo \'{"stop":true}\'\n', ".loopx/w/other.sh": 'echo \'{"stop":true}\'\n' });
    const env = isolatedEnv();
    const target = fc.oneof(fc.constantFrom("", ":", "w:", ":index", "a:b:c", "w:index", "w", "w:other", "W", " w", "w ", "w\t", "w:index:", "w::index", "../w", ".loopx/w", "w/index"), argString);
    await fc.assert(
      fc.asyncProperty(target, async (t) => {
        const run = await runLoopx(runtime, ["run", "-n", "1", t], { cwd, env });
        expect([0, 1]).toContain(run.code);
        if (run.code === 1) {
          // One clean `loopx:` line: no internal error, no stack trace.
          expect(run.stderr).not.toContain("internal error");
          expect(run.stderr).not.toMatch(/^\s+at /m);
          expect(run.stderr).toMatch(/^loopx: [^\n]*\n$/);
        }
        else expect(run.stderr).not.toContain("loopx:");
        const valid = ["w", "w:index", "w:other"].includes(t);
        if (valid) expect(run.code).toBe(0);
      }),
      { numRuns: 15 },
    );
  });
});
