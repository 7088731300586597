/**
 * `loopx run` — the loop state machine, observed end to end (spec §2.2, §6.1, §6.6, §6.7, §7.1, §7.2,
 * §5.1 discovery caching). Every script appends "<workflow>:<script> stdin=<what it read>" to
 * $LOOPX_PROJECT_ROOT/trace.log, so each test asserts the exact sequence of executions.
 */
import { join } from "node:path";
import { describe, expect } from "vitest";
import { RUNTIMES, expectClean, expectLoopxError, makeProject, readTrace, runIsolated as run, sh } from "../../helpers.js";
import { itFor } from "../../case-tables.js";
import { emit, traced } from "../../fixtures/loop/support.js";


describe.each(RUNTIMES)("run: loop state machine ($name)", (runtime) => {
  // Loopx's own logic: every test under Node, every third under Bun (test/case-tables.ts).
  const test = itFor(runtime);
  describe("starting target", () => {
    test.concurrent("`run ralph` starts at ralph:index and resets to it when there is no goto", async () => {
      const cwd = makeProject({
        ".loopx/ralph/index.sh": traced("index"),
        ".loopx/ralph/other.sh": traced("other"),
      });
      const result = await run(runtime, cwd, ["run", "-n", "3", "ralph"]);
      expectClean(result);
      expect(readTrace(cwd)).toEqual(["ralph:index stdin=", "ralph:index stdin=", "ralph:index stdin="]);
    });

    test.concurrent("`run ralph:index` is the same as `run ralph`", async () => {
      const cwd = makeProject({ ".loopx/ralph/index.sh": traced("index") });
      const result = await run(runtime, cwd, ["run", "-n", "2", "ralph:index"]);
      expectClean(result);
      expect(readTrace(cwd)).toEqual(["ralph:index stdin=", "ralph:index stdin="]);
    });

    test.concurrent("`run ralph:other` starts at ralph:other and resets to it (index never runs)", async () => {
      const cwd = makeProject({
        ".loopx/ralph/index.sh": traced("index"),
        ".loopx/ralph/other.sh": traced("other", emit({ result: "x" })),
      });
      const result = await run(runtime, cwd, ["run", "-n", "3", "ralph:other"]);
      expectClean(result);
      expect(readTrace(cwd)).toEqual(["ralph:other stdin=", "ralph:other stdin=", "ralph:other stdin="]);
    });

    test.concurrent("a non-index start that gotos index then resets to the non-index start", async () => {
      const cwd = makeProject({
        ".loopx/ralph/index.sh": traced("index"),
        ".loopx/ralph/other.sh": traced("other", emit({ goto: "index", result: "r" })),
      });
      const result = await run(runtime, cwd, ["run", "-n", "4", "ralph:other"]);
      expectClean(result);
      expect(readTrace(cwd)).toEqual([
        "ralph:other stdin=",
        "ralph:index stdin=r",
        "ralph:other stdin=",
        "ralph:index stdin=r",
      ]);
    });
  });

  describe("goto", () => {
    test.concurrent("reproduces the spec §2.2 five-iteration example exactly", async () => {
      const cwd = makeProject({
        ".loopx/ralph/index.sh": traced("index", emit({ goto: "check-ready" })),
        ".loopx/ralph/check-ready.sh": traced("check-ready", emit({ goto: "review-adr:request-feedback" })),
        // Decoys: a bare goto must never resolve to these.
        ".loopx/ralph/apply-feedback.sh": traced("apply-feedback"),
        ".loopx/ralph/request-feedback.sh": traced("request-feedback"),
        ".loopx/check-ready/index.sh": traced("index"),
        ".loopx/review-adr/index.sh": traced("index"),
        ".loopx/review-adr/request-feedback.sh": traced("request-feedback", emit({ goto: "apply-feedback" })),
        ".loopx/review-adr/apply-feedback.sh": traced("apply-feedback"),
      });
      const result = await run(runtime, cwd, ["run", "-n", "5", "ralph"]);
      expectClean(result);
      expect(readTrace(cwd)).toEqual([
        "ralph:index stdin=",
        "ralph:check-ready stdin=",
        "review-adr:request-feedback stdin=",
        "review-adr:apply-feedback stdin=",
        "ralph:index stdin=",
      ]);
    });

    test.concurrent("a bare goto names a script in the current workflow, not a workflow", async () => {
      const cwd = makeProject({
        ".loopx/ralph/index.sh": traced("index", emit({ goto: "other" })),
        ".loopx/ralph/other.sh": traced("other"),
        ".loopx/other/index.sh": traced("index"),
      });
      const result = await run(runtime, cwd, ["run", "-n", "2", "ralph"]);
      expectClean(result);
      expect(readTrace(cwd)).toEqual(["ralph:index stdin=", "ralph:other stdin="]);
    });

    test.concurrent("a qualified goto into the same workflow works like a bare one", async () => {
      const cwd = makeProject({
        ".loopx/ralph/index.sh": traced("index", emit({ goto: "ralph:b" })),
        ".loopx/ralph/b.sh": traced("b", emit({ goto: "ralph:index" })),
      });
      const result = await run(runtime, cwd, ["run", "-n", "4", "ralph"]);
      expectClean(result);
      expect(readTrace(cwd)).toEqual([
        "ralph:index stdin=",
        "ralph:b stdin=",
        "ralph:index stdin=",
        "ralph:b stdin=",
      ]);
    });

    test.concurrent("a qualified goto `wf:index` enters another workflow's entry point", async () => {
      const cwd = makeProject({
        ".loopx/ralph/index.sh": traced("index", emit({ goto: "other:index" })),
        ".loopx/other/index.sh": traced("index", emit({ goto: "step" })),
        ".loopx/other/step.sh": traced("step", emit({ stop: true })),
      });
      const result = await run(runtime, cwd, ["run", "ralph"]);
      expectClean(result);
      expect(readTrace(cwd)).toEqual(["ralph:index stdin=", "other:index stdin=", "other:step stdin="]);
    });

    test.concurrent("a script can goto itself; each self-hop is an iteration and gets the result", async () => {
      const cwd = makeProject({
        ".loopx/ralph/index.sh": traced(
          "index",
          [
            'if [ -z "$in" ]; then n=0; else n=$in; fi',
            'if [ "$n" -ge 3 ]; then $LOOPX_BIN output --stop; else $LOOPX_BIN output --result "$((n+1))" --goto index; fi',
          ].join("\n"),
        ),
      });
      const result = await run(runtime, cwd, ["run", "ralph"]);
      expectClean(result);
      expect(readTrace(cwd)).toEqual([
        "ralph:index stdin=",
        "ralph:index stdin=1",
        "ralph:index stdin=2",
        "ralph:index stdin=3",
      ]);
    });

    test.concurrent("a self goto is bounded by -n like any other hop", async () => {
      const cwd = makeProject({ ".loopx/ralph/index.sh": traced("index", emit({ goto: "index", result: "again" })) });
      const result = await run(runtime, cwd, ["run", "-n", "3", "ralph"]);
      expectClean(result);
      expect(readTrace(cwd)).toEqual(["ralph:index stdin=", "ralph:index stdin=again", "ralph:index stdin=again"]);
    });

    test.concurrent("cross-workflow goto does not change the starting target: the chain resets to the original start", async () => {
      const cwd = makeProject({
        ".loopx/ralph/index.sh": traced("index", emit({ goto: "other:index", result: "to-other" })),
        ".loopx/other/index.sh": traced("index", emit({ result: "ignored" })),
      });
      const result = await run(runtime, cwd, ["run", "-n", "5", "ralph"]);
      expectClean(result);
      expect(readTrace(cwd)).toEqual([
        "ralph:index stdin=",
        "other:index stdin=to-other",
        "ralph:index stdin=",
        "other:index stdin=to-other",
        "ralph:index stdin=",
      ]);
    });

    test.concurrent("after a cross-workflow goto, LOOPX_WORKFLOW and bare gotos follow the new workflow; reset returns to the start", async () => {
      const cwd = makeProject({
        ".loopx/a/index.sh": traced("index", emit({ goto: "b:one" })),
        ".loopx/a/two.sh": traced("two"),
        ".loopx/b/one.sh": traced("one", emit({ goto: "two" })),
        ".loopx/b/two.sh": traced("two", emit({ goto: "a:two" })),
      });
      const result = await run(runtime, cwd, ["run", "-n", "5", "a"]);
      expectClean(result);
      expect(readTrace(cwd)).toEqual([
        "a:index stdin=",
        "b:one stdin=",
        "b:two stdin=",
        "a:two stdin=",
        "a:index stdin=",
      ]);
    });
  });

  describe("-n and iteration counting", () => {
    const chain = (): string =>
      makeProject({
        ".loopx/ralph/index.sh": traced("index", emit({ goto: "a" })),
        ".loopx/ralph/a.sh": traced("a", emit({ goto: "b" })),
        ".loopx/ralph/b.sh": traced("b"),
      });

    test.concurrent("-n 1 runs only the starting target", async () => {
      const cwd = chain();
      expectClean(await run(runtime, cwd, ["run", "-n", "1", "ralph"]));
      expect(readTrace(cwd)).toEqual(["ralph:index stdin="]);
    });

    test.concurrent("-n 2 counts goto hops: index→a→b runs exactly index and a", async () => {
      const cwd = chain();
      expectClean(await run(runtime, cwd, ["run", "-n", "2", "ralph"]));
      expect(readTrace(cwd)).toEqual(["ralph:index stdin=", "ralph:a stdin="]);
    });

    test.concurrent("-n 4 counts the reset too: index, a, b, index", async () => {
      const cwd = chain();
      expectClean(await run(runtime, cwd, ["run", "-n", "4", "ralph"]));
      expect(readTrace(cwd)).toEqual(["ralph:index stdin=", "ralph:a stdin=", "ralph:b stdin=", "ralph:index stdin="]);
    });

    test.concurrent("when -n is reached, the final iteration's goto is not followed or validated (exit 0)", async () => {
      const cwd = makeProject({
        ".loopx/ralph/index.sh": traced("index", emit({ goto: "no-such-script" })),
        ".loopx/ralph/b.sh": traced("b", emit({ goto: "a:b:c" })),
      });
      expectClean(await run(runtime, cwd, ["run", "-n", "1", "ralph"]));
      expectClean(await run(runtime, cwd, ["run", "-n", "1", "ralph:b"]));
      expect(readTrace(cwd)).toEqual(["ralph:index stdin=", "ralph:b stdin="]);
    });

    test.concurrent("-n 0 on a valid target exits 0 and runs nothing", async () => {
      const cwd = chain();
      const result = await run(runtime, cwd, ["run", "-n", "0", "ralph"]);
      expectClean(result);
      expect(result.stderr).toBe("");
      expect(readTrace(cwd)).toEqual([]);
    });

    test.concurrent("-n 0 still validates the target: missing workflow → exit 1", async () => {
      const cwd = chain();
      expectLoopxError(await run(runtime, cwd, ["run", "-n", "0", "nope"]), "nope");
      expect(readTrace(cwd)).toEqual([]);
    });

    test.concurrent("-n 0 still validates the target: missing script → exit 1", async () => {
      const cwd = chain();
      expectLoopxError(await run(runtime, cwd, ["run", "-n", "0", "ralph:nope"]), "nope");
      expect(readTrace(cwd)).toEqual([]);
    });

    test.concurrent("-n 0 still validates the target: workflow without index → exit 1", async () => {
      const cwd = makeProject({ ".loopx/noindex/other.sh": traced("other") });
      expectLoopxError(await run(runtime, cwd, ["run", "-n", "0", "noindex"]), "noindex");
      expectClean(await run(runtime, cwd, ["run", "-n", "0", "noindex:other"]));
      expect(readTrace(cwd)).toEqual([]);
    });

    test.concurrent("-n 0 still validates discovery: a bad sibling workflow name → exit 1", async () => {
      const cwd = makeProject({
        ".loopx/ralph/index.sh": traced("index"),
        ".loopx/bad.name/index.sh": traced("index"),
      });
      expectLoopxError(await run(runtime, cwd, ["run", "-n", "0", "ralph"]), "bad.name");
      expect(readTrace(cwd)).toEqual([]);
    });

    test.concurrent("-n 0 still loads env files: a missing -e file → exit 1", async () => {
      const cwd = chain();
      expectLoopxError(await run(runtime, cwd, ["run", "-n", "0", "-e", "missing.env", "ralph"]), "missing.env");
      expect(readTrace(cwd)).toEqual([]);
    });

    test.concurrent("-n 0 with an existing -e file exits 0 and runs nothing", async () => {
      const cwd = makeProject({
        ".loopx/ralph/index.sh": traced("index"),
        "local.env": "FOO=bar\n",
      });
      expectClean(await run(runtime, cwd, ["run", "-n", "0", "-e", "local.env", "ralph"]));
      expect(readTrace(cwd)).toEqual([]);
    });
  });

  describe("stop", () => {
    test.concurrent("stop ends the loop with exit 0 after the stopping script ran (no -n needed)", async () => {
      const cwd = makeProject({
        ".loopx/ralph/index.sh": traced("index", emit({ goto: "b", result: "go" })),
        ".loopx/ralph/b.sh": traced("b", "$LOOPX_BIN output --result done --stop"),
      });
      const result = await run(runtime, cwd, ["run", "ralph"]);
      expectClean(result);
      expect(readTrace(cwd)).toEqual(["ralph:index stdin=", "ralph:b stdin=go"]);
    });

    test.concurrent("stop beats goto", async () => {
      const cwd = makeProject({
        ".loopx/ralph/index.sh": traced("index", emit({ goto: "b", stop: true, result: "r" })),
        ".loopx/ralph/b.sh": traced("b"),
      });
      const result = await run(runtime, cwd, ["run", "-n", "5", "ralph"]);
      expectClean(result);
      expect(readTrace(cwd)).toEqual(["ralph:index stdin="]);
    });

    test.concurrent("stop together with an invalid goto still stops cleanly", async () => {
      const cwd = makeProject({ ".loopx/ralph/index.sh": traced("index", emit({ goto: "a:b:c", stop: true })) });
      expectClean(await run(runtime, cwd, ["run", "ralph"]));
      expect(readTrace(cwd)).toEqual(["ralph:index stdin="]);
    });
  });

  describe("working directory", () => {
    test.concurrent("each bash script runs in its own workflow directory, including after a cross-workflow goto", async () => {
      const record = (name: string, then: string): string =>
        sh(`echo "${name} $(pwd)" >> "$LOOPX_PROJECT_ROOT/trace.log"\n${then}`);
      const cwd = makeProject({
        ".loopx/ralph/index.sh": record("ralph:index", emit({ goto: "other:step" })),
        ".loopx/other/step.sh": record("other:step", emit({ stop: true })),
      });
      const result = await run(runtime, cwd, ["run", "ralph"]);
      expectClean(result);
      expect(readTrace(cwd)).toEqual([
        `ralph:index ${join(cwd, ".loopx", "ralph")}`,
        `other:step ${join(cwd, ".loopx", "other")}`,
      ]);
    });

    test.concurrent("a TypeScript script also runs in its workflow directory, and LOOPX_PROJECT_ROOT is the invocation cwd", async () => {
      const cwd = makeProject({
        ".loopx/tsflow/index.ts": [
          'import { appendFileSync } from "node:fs";',
          'appendFileSync(process.env.LOOPX_PROJECT_ROOT + "/trace.log", `${process.env.LOOPX_WORKFLOW} ${process.cwd()} ${process.env.LOOPX_PROJECT_ROOT}\\n`);',
          'process.stdout.write(JSON.stringify({ stop: true }));',
          "",
        ].join("\n"),
      });
      const result = await run(runtime, cwd, ["run", "tsflow"]);
      expectClean(result);
      expect(readTrace(cwd)).toEqual([`tsflow ${join(cwd, ".loopx", "tsflow")} ${cwd}`]);
    });
  });
});
