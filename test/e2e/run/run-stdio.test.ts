/**
 * How a script's stdin looks (spec §6.6, §6.7): the piped `result` reaches the goto target
 * byte-exact, whatever its size, and can be read any way a script likes — `cat`, `read`, input(),
 * or by opening /dev/stdin; stdin is empty, never a hang, otherwise (the first iteration, a goto
 * without result, a reset, even when loopx's own stdin is a pipe nobody closes); a goto target
 * that never reads its 10 MB `result` (exits at once, closes stdin, reads 10 bytes, or stalls
 * while writing megabytes of its own) causes no deadlock and no EPIPE crash.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { R, RUNTIMES, expectClean, fileLines as lines, isolatedEnv, linuxOnly, makeProject, readTrace, runIsolated as run, runLoopx, sh } from "../../helpers.js";
import { emit, traced } from "../../fixtures/loop/support.js";
import { bigJson, runCounting } from "../../fixtures/stdio/support.js";

describe.each(RUNTIMES)("script stdin ($name)", (runtime) => {
  it("a piped result can be read through /dev/stdin, and stdin is empty again after a reset", async () => {
    const cwd = makeProject({
      ".loopx/w/index.sh": 'echo "index:[$(cat /dev/stdin)]" >> "$LOOPX_PROJECT_ROOT/trace"\n$LOOPX_BIN output --result "line one\nline two" --goto b\n',
      ".loopx/w/b.sh": 'echo "b:[$(cat /dev/stdin)]" >> "$LOOPX_PROJECT_ROOT/trace"\n',
    });
    const result = await runLoopx(runtime, ["run", "-n", "3", "w"], { cwd, env: isolatedEnv() });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(readFileSync(join(cwd, "trace"), "utf8")).toBe("index:[]\nb:[line one\nline two]\nindex:[]\n");
  });

  describe("stdin piping", () => {
    it.concurrent("result is piped to the goto target; a reset gives the start empty stdin even though result was set", async () => {
      const cwd = makeProject({
        ".loopx/ralph/index.sh": traced("index", emit({ result: "payload", goto: "b" })),
        ".loopx/ralph/b.sh": traced("b", emit({ result: "leftover" })),
      });
      const result = await run(runtime, cwd, ["run", "-n", "4", "ralph"]);
      expectClean(result);
      expect(readTrace(cwd)).toEqual([
        "ralph:index stdin=",
        "ralph:b stdin=payload",
        "ralph:index stdin=",
        "ralph:b stdin=payload",
      ]);
    });

    it.concurrent("result is delivered byte-exact (no added newline) via `$LOOPX_BIN output`", async () => {
      const cwd = makeProject({
        ".loopx/ralph/index.sh": sh('$LOOPX_BIN output --result "two words  and\n a newline" --goto b'),
        ".loopx/ralph/b.sh": sh('cat > "$LOOPX_PROJECT_ROOT/b.stdin"\n$LOOPX_BIN output --stop'),
      });
      const result = await run(runtime, cwd, ["run", "ralph"]);
      expectClean(result);
      expect(readFileSync(join(cwd, "b.stdin"), "utf8")).toBe("two words  and\n a newline");
    });

    it.concurrent("goto without result gives the target empty stdin", async () => {
      const cwd = makeProject({
        ".loopx/ralph/index.sh": traced("index", emit({ goto: "b" })),
        ".loopx/ralph/b.sh": sh('cat > "$LOOPX_PROJECT_ROOT/b.stdin"\n' + emit({ stop: true })),
      });
      const result = await run(runtime, cwd, ["run", "ralph"]);
      expectClean(result);
      expect(readTrace(cwd)).toEqual(["ralph:index stdin="]);
      expect(readFileSync(join(cwd, "b.stdin"), "utf8")).toBe("");
    });

    it.concurrent("the first iteration and every reset get empty stdin, even when loopx's own stdin has data", async () => {
      const cwd = makeProject({ ".loopx/ralph/index.sh": traced("index", emit({ result: "r" })) });
      const result = await run(runtime, cwd, ["run", "-n", "2", "ralph"], "data on loopx's stdin\nmore\n");
      expectClean(result);
      expect(readTrace(cwd)).toEqual(["ralph:index stdin=", "ralph:index stdin="]);
    });

    it.concurrent("a ~1 MB multi-line, non-ASCII result piped via goto arrives intact", async () => {
      const lines = 28_000;
      const cwd = makeProject({
        ".loopx/ralph/index.sh": sh(
          [
            "printf '{\"result\":\"'",
            `yes 'abcdefghijklmnopqrstuvwxyz0123456789 \u00e9\u4e2d\\n' | head -n ${lines} | tr -d '\\n'`,
            "printf '\",\"goto\":\"b\"}'",
          ].join("\n"),
        ),
        ".loopx/ralph/b.sh": sh('cat > "$LOOPX_PROJECT_ROOT/b.stdin"\n' + emit({ stop: true })),
      });
      const result = await run(runtime, cwd, ["run", "ralph"]);
      expectClean(result);
      const expected = "abcdefghijklmnopqrstuvwxyz0123456789 \u00e9\u4e2d\n".repeat(lines);
      expect(Buffer.byteLength(expected)).toBeGreaterThan(1_000_000);
      const received = readFileSync(join(cwd, "b.stdin"), "utf8");
      expect(received.length).toBe(expected.length);
      expect(received === expected).toBe(true);
    });

    it.concurrent("a goto target that never reads its (large) piped stdin does not break the loop", async () => {
      const cwd = makeProject({
        ".loopx/ralph/index.sh": sh(
          [
            'echo "index" >> "$LOOPX_PROJECT_ROOT/trace.log"',
            "printf '{\"result\":\"'",
            "head -c 1000000 /dev/zero | tr '\\0' 'x'",
            "printf '\",\"goto\":\"b\"}'",
          ].join("\n"),
        ),
        ".loopx/ralph/b.sh": sh('echo "b" >> "$LOOPX_PROJECT_ROOT/trace.log"'),
      });
      const result = await run(runtime, cwd, ["run", "-n", "6", "ralph"]);
      expectClean(result);
      expect(readTrace(cwd)).toEqual(["index", "b", "index", "b", "index", "b"]);
    });
  });
});

linuxOnly.concurrent.each(RUNTIMES)("script stdin: none, or never read ($name)", (runtime) => {
  describe("a script that reads stdin when there is none", () => {
    const READERS = {
      // First iteration: reads everything with cat, then with read (fails at EOF), then goes on.
      ".loopx/w/index.sh":
        `n=$(cat ${R}/n 2>/dev/null || echo 0); echo $((n+1)) > ${R}/n\n` +
        `all=$(cat); read -r line; rc=$?\necho "index n=$n cat=[\${all}] read_rc=$rc" >> ${R}/trace\n` +
        `if [ $n -eq 0 ]; then echo '{"goto":"ts"}'; elif [ $n -eq 1 ]; then echo '{"result":"reset-me"}'; else echo '{"stop":true}'; fi\n`,
      // A goto without result: the TS target reads stdin twice through input() and once raw.
      ".loopx/w/ts.ts":
        'import { input, output } from "loopx";\n' +
        'import { appendFileSync } from "node:fs";\n' +
        "const a = await input();\nconst b = await input();\n" +
        "appendFileSync(`${process.env.LOOPX_PROJECT_ROOT}/trace`, `ts input=[${a}][${b}]\\n`);\n" +
        'output({ result: "ignored-by-reset" });\n',
    };
    const EXPECTED = ["index n=0 cat=[] read_rc=1", "ts input=[][]", "index n=1 cat=[] read_rc=1", "index n=2 cat=[] read_rc=1"];

    it("stdin is empty at the first iteration, after a goto without result and after a reset", async ({ expect }) => {
      const cwd = makeProject(READERS);
      const result = await runCounting(runtime, ["run", "w"], { cwd, timeoutMs: 30_000 });
      expect(result.stderrHead.toString()).toBe("");
      expect(result.code).toBe(0);
      expect(lines(join(cwd, "trace"))).toEqual(EXPECTED);
    });

    it("…even when loopx's own stdin is a pipe that is never written to nor closed (no hang)", async ({ expect }) => {
      const cwd = makeProject(READERS);
      const result = await runCounting(runtime, ["run", "w"], { cwd, openStdin: true, timeoutMs: 30_000 });
      expect(result.stderrHead.toString()).toBe("");
      expect(result.code).toBe(0);
      expect(lines(join(cwd, "trace"))).toEqual(EXPECTED);
      expect(result.ms).toBeLessThan(20_000);
    });
  });

  describe("a goto target that never reads its 10 MB piped result", () => {
    const TEN_MB = 10_000_000;
    it.for([
      ["exits at once (bash)", `echo b >> ${R}/trace\n`],
      ["exits at once (TS, process.exit)", null],
      ["closes its stdin first, then answers", `exec <&-\necho b >> ${R}/trace\necho '{"result":"x"}'\n`],
      ["reads only 10 bytes", `head -c 10 > ${R}/b.head\necho b >> ${R}/trace\n`],
      ["stalls for a second while writing 2 MB of its own stdout", `sleep 1\nhead -c 2000000 /dev/zero | tr '\\0' 'z'\necho b >> ${R}/trace\n`],
    ] as const)("target %s: no deadlock, no EPIPE crash, the loop goes on", { timeout: 60_000 }, async ([name, body], { expect }) => {
      const files: Record<string, string> = { ".loopx/w/index.sh": `echo index >> ${R}/trace\n${bigJson(TEN_MB, "p", "b")}` };
      if (body === null) {
        files[".loopx/w/b.ts"] = 'import { appendFileSync } from "node:fs";\nappendFileSync(`${process.env.LOOPX_PROJECT_ROOT}/trace`, "b\\n");\nprocess.exit(0);\n';
      } else {
        files[".loopx/w/b.sh"] = body;
      }
      const cwd = makeProject(files);
      const result = await runCounting(runtime, ["run", "-n", "6", "w"], { cwd, timeoutMs: 50_000 });
      const stderr = result.stderrHead.toString();
      expect(stderr).not.toMatch(/EPIPE|internal error|^\s+at /m);
      expect(stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.signal).toBe(null);
      expect(lines(join(cwd, "trace"))).toEqual(["index", "b", "index", "b", "index", "b"]);
      if (name === "reads only 10 bytes") expect(readFileSync(join(cwd, "b.head"), "utf8")).toBe("p".repeat(10));
    });
  });
});
