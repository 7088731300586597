/**
 * `loopx run` when a script fails, is killed, or vanishes (spec §5.1, §7.1, §7.2): a non-zero exit
 * or a death by signal ends the loop with exit 1 (never 128+N) and its stdout is not parsed;
 * discovery is cached at loop start, so a script added later is not found, and a script whose file
 * is gone mid-loop (deleted, renamed, a dangling symlink, its workflow removed, replaced by a
 * directory, deleted from outside) is a launch error naming it. The process-tree cases read /proc
 * for survivors: Linux only.
 */
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { R, RUNTIMES, expectClean, expectLoopxError, fileLines, linuxOnly, makeProject, processAlive, readTrace, runIsolated as run, sh, taggedSurvivors, waitFor } from "../../helpers.js";
import { emit, traced } from "../../fixtures/loop/support.js";
import { describeProcs, startTagged, treePids } from "../../fixtures/process/support.js";

describe.each(RUNTIMES)("run: loop state machine ($name)", (runtime) => {
  describe("script failure", () => {
    it.concurrent("a non-zero exit stops the loop with exit 1 and its stdout is not parsed", async () => {
      const cwd = makeProject({
        ".loopx/ralph/index.sh": traced("index", `${emit({ goto: "x" })}\necho "index failing" >&2\nexit 3`),
        ".loopx/ralph/x.sh": traced("x"),
      });
      const result = await run(runtime, cwd, ["run", "-n", "5", "ralph"]);
      expectLoopxError(result, "index");
      expect(result.stderr).toContain("index failing");
      expect(readTrace(cwd)).toEqual(["ralph:index stdin="]);
    });

    it.concurrent("a non-zero exit with `stop` on stdout is still a failure (exit 1)", async () => {
      const cwd = makeProject({ ".loopx/ralph/index.sh": traced("index", `${emit({ stop: true })}\nexit 1`) });
      expectLoopxError(await run(runtime, cwd, ["run", "ralph"]), "index");
      expect(readTrace(cwd)).toEqual(["ralph:index stdin="]);
    });

    it.concurrent("a failing goto target stops the loop (no reset) with exit 1", async () => {
      const cwd = makeProject({
        ".loopx/ralph/index.sh": traced("index", emit({ goto: "other:bad" })),
        ".loopx/other/bad.sh": traced("bad", "exit 42"),
      });
      expectLoopxError(await run(runtime, cwd, ["run", "-n", "5", "ralph"]), "bad");
      expect(readTrace(cwd)).toEqual(["ralph:index stdin=", "other:bad stdin="]);
    });

    it.concurrent("a script killed by a signal stops the loop with exit 1", async () => {
      const cwd = makeProject({
        ".loopx/ralph/index.sh": traced("index", `${emit({ goto: "index" })}\nkill -KILL $$`),
      });
      expectLoopxError(await run(runtime, cwd, ["run", "-n", "5", "ralph"]), "index");
      expect(readTrace(cwd)).toEqual(["ralph:index stdin="]);
    });

    it.concurrent("a failing JS/TS script stops the loop with exit 1", async () => {
      const cwd = makeProject({
        ".loopx/ralph/index.sh": traced("index", emit({ goto: "fails" })),
        ".loopx/ralph/fails.ts": 'process.stdout.write(JSON.stringify({ goto: "index" }));\nprocess.exit(2);\n',
      });
      const result = await run(runtime, cwd, ["run", "-n", "5", "ralph"]);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe("");
      expect(readTrace(cwd)).toEqual(["ralph:index stdin="]);
    });
  });

  describe("discovery is cached at loop start", () => {
    it.concurrent("a script added during the loop is not found by a later goto (exit 1)", async () => {
      const cwd = makeProject({
        ".loopx/ralph/index.sh": traced(
          "index",
          [`printf '#!/bin/bash\\necho late >> "$LOOPX_PROJECT_ROOT/trace.log"\\n' > late.sh`, "chmod +x late.sh", emit({ goto: "late" })].join("\n"),
        ),
      });
      const result = await run(runtime, cwd, ["run", "-n", "5", "ralph"]);
      expectLoopxError(result, "late");
      expect(existsSync(join(cwd, ".loopx/ralph/late.sh"))).toBe(true);
      expect(readTrace(cwd)).toEqual(["ralph:index stdin="]);
    });

    it.concurrent("a workflow added during the loop is not found by a later qualified goto (exit 1)", async () => {
      const cwd = makeProject({
        ".loopx/ralph/index.sh": traced(
          "index",
          [
            'mkdir -p "$LOOPX_PROJECT_ROOT/.loopx/newwf"',
            `printf '#!/bin/bash\\necho newwf >> "$LOOPX_PROJECT_ROOT/trace.log"\\n' > "$LOOPX_PROJECT_ROOT/.loopx/newwf/index.sh"`,
            emit({ goto: "newwf:index" }),
          ].join("\n"),
        ),
      });
      const result = await run(runtime, cwd, ["run", "-n", "5", "ralph"]);
      expectLoopxError(result, "newwf");
      expect(readTrace(cwd)).toEqual(["ralph:index stdin="]);
    });

    it.concurrent("a script added during the loop with a colliding base name does not fail the running loop", async () => {
      const cwd = makeProject({
        ".loopx/ralph/index.sh": traced("index", [`printf 'x\\n' > b.ts`, emit({ goto: "b" })].join("\n")),
        ".loopx/ralph/b.sh": traced("b"),
      });
      const result = await run(runtime, cwd, ["run", "-n", "3", "ralph"]);
      expectClean(result);
      expect(readTrace(cwd)).toEqual(["ralph:index stdin=", "ralph:b stdin=", "ralph:index stdin="]);
    });

    it.concurrent("edits to an existing script's contents take effect on the next execution", async () => {
      const cwd = makeProject({
        ".loopx/ralph/index.sh": sh(
          [
            'n=$(cat "$LOOPX_PROJECT_ROOT/count" 2>/dev/null || echo 0); n=$((n+1)); echo "$n" > "$LOOPX_PROJECT_ROOT/count"',
            'echo "index $n" >> "$LOOPX_PROJECT_ROOT/trace.log"',
            `if [ "$n" -eq 2 ]; then printf '#!/bin/bash\\necho "b v2" >> "$LOOPX_PROJECT_ROOT/trace.log"\\n' > b.sh; fi`,
            emit({ goto: "b" }),
          ].join("\n"),
        ),
        ".loopx/ralph/b.sh": sh('echo "b v1" >> "$LOOPX_PROJECT_ROOT/trace.log"'),
      });
      const result = await run(runtime, cwd, ["run", "-n", "4", "ralph"]);
      expectClean(result);
      expect(readTrace(cwd)).toEqual(["index 1", "b v1", "index 2", "b v2"]);
    });

    it.concurrent("a bash script deleted mid-loop fails at spawn time: exit 1 naming it", async () => {
      const cwd = makeProject({
        ".loopx/ralph/index.sh": traced("index", ["rm b.sh", emit({ goto: "b" })].join("\n")),
        ".loopx/ralph/b.sh": traced("b"),
      });
      const result = await run(runtime, cwd, ["run", "-n", "5", "ralph"]);
      expectLoopxError(result, "b");
      expect(readTrace(cwd)).toEqual(["ralph:index stdin="]);
    });

    it.concurrent("a TypeScript script deleted mid-loop fails at spawn time: exit 1 naming it", async () => {
      const cwd = makeProject({
        ".loopx/ralph/index.sh": traced("index", ["rm check.ts", emit({ goto: "check" })].join("\n")),
        ".loopx/ralph/check.ts": 'process.stdout.write("{}");\n',
      });
      const result = await run(runtime, cwd, ["run", "-n", "5", "ralph"]);
      expectLoopxError(result, "check");
      expect(readTrace(cwd)).toEqual(["ralph:index stdin="]);
    });

    it.concurrent("the starting script deleted mid-loop fails on reset: exit 1", async () => {
      const cwd = makeProject({ ".loopx/ralph/index.sh": traced("index", 'rm "$0"') });
      const result = await run(runtime, cwd, ["run", "-n", "5", "ralph"]);
      expectLoopxError(result, "index");
      expect(readTrace(cwd)).toEqual(["ralph:index stdin="]);
    });
  });
});

linuxOnly.concurrent.each(RUNTIMES)("run: scripts that vanish or die ($name)", (runtime) => {
  describe("the script's file disappears mid-loop (§5.1: launch error → exit 1)", () => {
    it.concurrent.for([
      ["renamed", "mv b.sh moved.sh"],
      ["replaced by a dangling symlink", "rm b.sh && ln -s does-not-exist.sh b.sh"],
      ["its workflow directory removed", "rm -rf ../other"],
    ] as const)("goto target %s → exit 1, one clear line naming it, nothing else runs", async ([, how], { expect }) => {
      const cwd = makeProject({
        ".loopx/w/index.sh": `echo index >> ${R}/trace\n${how}\necho '{"goto":"${how.includes("other") ? "other:b" : "b"}"}'\n`,
        ".loopx/w/b.sh": `echo b >> ${R}/trace\n`,
        ".loopx/other/b.sh": `echo other-b >> ${R}/trace\n`,
      });
      const started = startTagged(runtime, ["run", "-n", "5", "w"], cwd);
      const result = await started.result;
      const label = how.includes("other") ? "other:b" : "w:b";
      const line = expectLoopxError(result, label);
      expect(line).toMatch(/no longer exists|cannot be started/);
      expect(fileLines(join(cwd, "trace"))).toEqual(["index"]);
      expect(describeProcs(taggedSurvivors(started.tag))).toBe("");
    });

    it.concurrent("goto target replaced by a directory of the same name → exit 1 naming it", async ({ expect }) => {
      const cwd = makeProject({
        ".loopx/w/index.sh": `echo index >> ${R}/trace\nrm b.sh && mkdir b.sh\necho '{"goto":"b"}'\n`,
        ".loopx/w/b.sh": `echo b >> ${R}/trace\n`,
      });
      const result = await startTagged(runtime, ["run", "-n", "5", "w"], cwd).result;
      expectLoopxError(result, "w:b");
      expect(fileLines(join(cwd, "trace"))).toEqual(["index"]);
    });

    it.concurrent("a TS goto target replaced by a dangling symlink → exit 1 naming it", async ({ expect }) => {
      const cwd = makeProject({
        ".loopx/w/index.sh": `echo index >> ${R}/trace\nrm check.ts && ln -s gone.ts check.ts\necho '{"goto":"check"}'\n`,
        ".loopx/w/check.ts": 'import { appendFileSync } from "node:fs";\nappendFileSync(`${process.env.LOOPX_PROJECT_ROOT}/trace`, "check\\n");\n',
      });
      const result = await startTagged(runtime, ["run", "-n", "5", "w"], cwd).result;
      expectLoopxError(result, "w:check");
      expect(fileLines(join(cwd, "trace"))).toEqual(["index"]);
    });

    it.concurrent("the starting script deleted from outside while the loop runs → exit 1 within an iteration, naming it", async ({ expect }) => {
      const cwd = makeProject({ ".loopx/w/index.sh": `echo $$ >> ${R}/trace\nsleep 0.2\n` });
      const started = startTagged(runtime, ["run", "w"], cwd);
      const trace = join(cwd, "trace");
      expect(await waitFor(() => fileLines(trace).length >= 3, 15_000)).toBe(true);
      rmSync(join(cwd, ".loopx", "w", "index.sh"));
      const deletedAt = Date.now();
      const result = await started.result;
      // The iteration running at deletion time still completes (bash holds the file open).
      expect(started.exitedAt() - deletedAt).toBeLessThan(3000);
      expectLoopxError(result, "w:index");
      for (const pid of fileLines(trace).map(Number)) expect(processAlive(pid)).toBe(false);
      expect(describeProcs(taggedSurvivors(started.tag))).toBe("");
    });
  });

  describe("a script killed by a signal itself → exit 1 (never 128+N), stdout not parsed", () => {
    it.concurrent.for([
      ["SIGINT", "INT"],
      ["SIGTERM", "TERM"],
      ["SIGSEGV", "SEGV"],
      ["SIGKILL", "KILL"],
    ] as const)("a bash script that kills itself with %s", async ([signal, name], { expect }) => {
      const cwd = makeProject({
        // Valid stop JSON first: a script that died of a signal must not be parsed as stopping.
        ".loopx/w/index.sh": `echo run >> ${R}/trace\necho '{"stop":true}'\nkill -${name} $$\nsleep 5\n`,
      });
      const result = await startTagged(runtime, ["run", "-n", "3", "w"], cwd).result;
      expectLoopxError(result, "w:index", signal);
      expect(fileLines(join(cwd, "trace"))).toEqual(["run"]);
    });

    it.concurrent("a TS script that SIGKILLs itself after output-like stdout", async () => {
      const cwd = makeProject({
        ".loopx/w/index.ts": 'process.stdout.write(JSON.stringify({ stop: true }));\nprocess.kill(process.pid, "SIGKILL");\nsetTimeout(() => {}, 5000);\n',
      });
      const result = await startTagged(runtime, ["run", "-n", "3", "w"], cwd).result;
      expectLoopxError(result, "w:index", "SIGKILL");
    });

    it.concurrent.for(["SIGTERM", "SIGINT"] as const)(
      "the script killed from outside loopx with %s → exit 1, not 128+N; loopx itself was not signalled",
      async (signal, { expect }) => {
        const cwd = makeProject({ ".loopx/w/index.sh": `echo $$ > ${R}/l1.pid\nsleep 1000\n` });
        const started = startTagged(runtime, ["run", "w"], cwd);
        const [pid] = await treePids(cwd, 1);
        // Kill the whole script group (as a supervisor or the OOM killer of a cgroup might).
        process.kill(-pid!, signal);
        const result = await started.result;
        expectLoopxError(result, "w:index");
        expect(describeProcs(taggedSurvivors(started.tag))).toBe("");
      },
    );

    it.concurrent("a grandchild killed by a signal does not fail the loop when the script itself exits 0", async ({ expect }) => {
      const cwd = makeProject({
        ".loopx/w/index.sh": `echo run >> ${R}/trace\nsleep 1000 &\nkill -KILL $!\nwait\necho '{"result":"ok"}'\n`,
      });
      const result = await startTagged(runtime, ["run", "-n", "2", "w"], cwd).result;
      expect(result.stderr).not.toContain("loopx:"); // bash itself reports "Killed", loopx nothing
      expect(result.code).toBe(0);
      expect(fileLines(join(cwd, "trace"))).toEqual(["run", "run"]);
    });
  });
});
