/**
 * How a script's stdout and stderr are captured under `loopx run` (spec §6.6, §7.1), at the sizes
 * and byte patterns a real agent run can throw at loopx: 100 MB on stdout (captured by design: a
 * 100 MB `result` reaches the goto target byte-exact, a 100 MB raw stdout becomes a 100 MB
 * `result` for the API) and 100 MB on stderr (streamed straight through: loopx's peak RSS does not
 * move, the test counts bytes instead of storing them); invalid UTF-8 and NUL bytes on stdout
 * (decoded, never crashing) and on stderr (passed through byte-exact); no trailing newline;
 * stdout closed early, or held open by a grandchild.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "vitest";
import { R, RUNTIMES, consumer, fileLines as lines, linuxOnly, makeProject, procMemoryKb as vm, runConsumer, waitFor } from "../../helpers.js";
import { bigJson, printfBytes, runCounting } from "../../fixtures/stdio/support.js";

linuxOnly.concurrent.each(RUNTIMES)("script output: sizes and bytes ($name)", (runtime) => {
  describe("100 MB on stdout and on stderr", () => {
    const HUNDRED_MB = 100_000_000;

    it("a 100 MB result is captured and piped whole to the goto target; the loop goes on", { timeout: 120_000 }, async ({ expect }) => {
      const cwd = makeProject({
        ".loopx/w/index.sh": bigJson(HUNDRED_MB, "o", "b"),
        // b counts what it got, checks both ends, and reports loopx's peak RSS (its parent).
        ".loopx/w/b.sh":
          `cat > ${R}/b.stdin\nwc -c < ${R}/b.stdin > ${R}/b.count\nhead -c 3 ${R}/b.stdin > ${R}/b.head\ntail -c 3 ${R}/b.stdin > ${R}/b.tail\nrm ${R}/b.stdin\n` +
          `sleep 0.2\ngrep VmHWM /proc/$PPID/status > ${R}/loopx.hwm\n` +
          `echo b >> ${R}/trace\necho '{"goto":"c"}'\n`,
        ".loopx/w/c.sh": `echo c >> ${R}/trace\necho '{"stop":true}'\n`,
      });
      const result = await runCounting(runtime, ["run", "w"], { cwd, timeoutMs: 110_000 });
      expect(result.stderrTail.toString("utf8")).toBe("");
      expect(result.code).toBe(0);
      expect(readFileSync(join(cwd, "b.count"), "utf8").trim()).toBe(String(HUNDRED_MB));
      expect(readFileSync(join(cwd, "b.head"), "utf8")).toBe("ooo");
      expect(readFileSync(join(cwd, "b.tail"), "utf8")).toBe("ooo");
      expect(lines(join(cwd, "trace"))).toEqual(["b", "c"]);
      console.log(`[${runtime.name}] 100 MB result via goto in ${result.ms} ms; loopx ${readFileSync(join(cwd, "loopx.hwm"), "utf8").trim()}`);
    });

    it("a 100 MB raw (non-JSON) stdout becomes a 100 MB result (API) and the loop resets and continues", { timeout: 120_000 }, async ({ expect }) => {
      const dir = consumer(
        `import { runPromise } from "loopx";
         const outputs = await runPromise("w");
         console.log(JSON.stringify(outputs.map((o) => ({ len: o.result.length, head: o.result.slice(0, 4), tail: o.result.slice(-4), goto: o.goto, stop: o.stop }))));`,
        {
          ".loopx/w/index.sh":
            `if [ ! -e ${R}/once ]; then touch ${R}/once; head -c ${HUNDRED_MB - 8} /dev/zero | tr '\\0' 'r'; printf 'tail\\nEND'; ` +
            `else echo '{"result":"small","stop":true}'; fi\n`,
        },
      );
      const result = await runConsumer(runtime, dir, { timeoutMs: 110_000 });
      expect(result.code).toBe(0);
      expect(result.json).toEqual([
        { len: HUNDRED_MB, head: "rrrr", tail: "\nEND" },
        { len: 5, head: "smal", tail: "mall", stop: true },
      ]);
    });

    it("100 MB on stderr streams straight through: byte count exact, loopx's peak RSS unchanged, its own error line last", { timeout: 120_000 }, async ({ expect }) => {
      const cwd = makeProject({
        ".loopx/w/index.sh":
          `touch ${R}/ready0; while [ ! -e ${R}/go0 ]; do sleep 0.02; done\n` +
          `head -c ${HUNDRED_MB} /dev/zero | tr '\\0' 'e' >&2\n` +
          `touch ${R}/ready1; while [ ! -e ${R}/go1 ]; do sleep 0.02; done\n` +
          `exit 3\n`,
      });
      let pid = 0;
      const running = runCounting(runtime, ["run", "w"], { cwd, timeoutMs: 110_000, onSpawn: (c) => (pid = c.pid!) });
      expect(await waitFor(() => existsSync(join(cwd, "ready0")), 20_000)).toBe(true);
      const before = vm(pid, "VmHWM");
      writeFileSync(join(cwd, "go0"), "");
      expect(await waitFor(() => existsSync(join(cwd, "ready1")), 100_000)).toBe(true);
      const after = vm(pid, "VmHWM");
      writeFileSync(join(cwd, "go1"), "");
      const result = await running;
      const errorLine = "loopx: script w:index exited with code 3\n";
      expect(result.code).toBe(1);
      expect(result.stdout.length).toBe(0);
      // The script's stderr ends without a newline: loopx's line starts on a fresh one.
      expect(result.stderrBytes).toBe(HUNDRED_MB + 1 + Buffer.byteLength(errorLine));
      expect(result.stderrHead.subarray(0, 16).toString()).toBe("e".repeat(16));
      expect(result.stderrTail.toString("latin1").endsWith(`eeee\n${errorLine}`)).toBe(true);
      console.log(`[${runtime.name}] 100 MB stderr: loopx VmHWM ${(before / 1024).toFixed(1)} MB before, ${(after / 1024).toFixed(1)} MB after`);
      expect(after - before).toBeLessThan(20 * 1024);
      expect(after).toBeLessThan(100 * 1024);
    });
  });

  describe("invalid UTF-8 and NUL bytes", () => {
    // "\xff", "é" cut after its first byte, "(", a lone continuation byte, a 4-byte emoji cut short.
    const INVALID = [0x61, 0xff, 0x62, 0xc3, 0x28, 0x80, 0x63, 0xf0, 0x9f, 0x98, 0x7a];
    const decoded = new TextDecoder("utf-8").decode(Buffer.from(INVALID));

    it("invalid UTF-8 inside a JSON result: decoded with U+FFFD replacement, piped on, loop continues", async ({ expect }) => {
      const cwd = makeProject({
        ".loopx/w/index.sh": `printf '{"result":"'\n${printfBytes(INVALID)}\nprintf '","goto":"b"}'\n`,
        ".loopx/w/b.sh": `cat > ${R}/b.stdin\necho '{"stop":true}'\n`,
      });
      const result = await runCounting(runtime, ["run", "w"], { cwd });
      expect(result.stderrHead.toString()).toBe("");
      expect(result.code).toBe(0);
      expect(decoded).toContain("\ufffd");
      expect(readFileSync(join(cwd, "b.stdin")).equals(Buffer.from(decoded, "utf8"))).toBe(true);
    });

    it("invalid UTF-8 and NUL bytes as raw stdout: the API result is the decoded text, NULs kept", async ({ expect }) => {
      const dir = consumer(
        `import { runPromise } from "loopx";
         console.log(JSON.stringify(await runPromise("w", { maxIterations: 2 })));`,
        {
          ".loopx/w/index.sh": `echo '{"goto":"bad"}'\n`,
          // Invalid bytes before the JSON make the whole stdout raw: its goto is not followed.
          ".loopx/w/bad.sh": `${printfBytes(INVALID)}\necho '{"goto":"index"}'\n`,
        },
      );
      const result = await runConsumer(runtime, dir);
      expect(result.code).toBe(0);
      expect(result.json).toEqual([{ goto: "bad" }, { result: `${decoded}{"goto":"index"}\n` }]);
      const dir2 = consumer(
        `import { runPromise } from "loopx";
         console.log(JSON.stringify(await runPromise("w", { maxIterations: 1 })));`,
        { ".loopx/w/index.sh": `printf 'a\\0b\\0\\0c\\n'\n` },
      );
      const nul = await runConsumer(runtime, dir2);
      expect(nul.json).toEqual([{ result: "a\0b\0\0c\n" }]);
    });

    it("an escaped NUL in a JSON result reaches the goto target as a real NUL byte", async ({ expect }) => {
      const cwd = makeProject({
        ".loopx/w/index.sh": `printf '%s' '{"result":"x\\u0000y\\u0000","goto":"b"}'\n`,
        ".loopx/w/b.sh": `cat > ${R}/b.stdin\necho '{"stop":true}'\n`,
      });
      const result = await runCounting(runtime, ["run", "w"], { cwd });
      expect(result.code).toBe(0);
      expect([...readFileSync(join(cwd, "b.stdin"))]).toEqual([0x78, 0x00, 0x79, 0x00]);
    });

    it("a raw (unescaped) NUL inside a JSON string makes it raw output, not a crash", async ({ expect }) => {
      const dir = consumer(
        `import { runPromise } from "loopx";
         console.log(JSON.stringify(await runPromise("w", { maxIterations: 1 })));`,
        { ".loopx/w/index.sh": `printf '{"result":"a\\0b","stop":true}'\n` },
      );
      const result = await runConsumer(runtime, dir);
      expect(result.json).toEqual([{ result: '{"result":"a\0b","stop":true}' }]);
    });

    it.for([
      ["invalid UTF-8", `printf '{"goto":"b'\n${printfBytes([0xff, 0xfe])}\nprintf '"}'`],
      ["an escaped NUL", `printf '%s' '{"goto":"b\\u0000"}'`],
    ] as const)("a goto containing %s is an invalid target: exit 1, one readable error line", async ([, emitGoto], { expect }) => {
      const cwd = makeProject({ ".loopx/w/index.sh": `${emitGoto}\n`, ".loopx/w/b.sh": `echo ran >> ${R}/trace\n` });
      const result = await runCounting(runtime, ["run", "w"], { cwd });
      const stderr = result.stderrHead.toString("utf8");
      expect(result.code).toBe(1);
      expect(stderr).toMatch(/^loopx: [^\n]*goto[^\n]*\n$/);
      expect(stderr).not.toContain("\0"); // the NUL is shown escaped, not written raw to the terminal
      expect(existsSync(join(cwd, "trace"))).toBe(false);
    });

    it("invalid UTF-8, NUL and control bytes on stderr pass through byte-exact", async ({ expect }) => {
      const bytes = [...INVALID, 0x00, 0x01, 0x1b, 0x5b, 0x32, 0x4a, 0x0d, 0x00, 0xfe];
      const cwd = makeProject({ ".loopx/w/index.sh": `${printfBytes(bytes)} >&2\necho '{"stop":true}'\n` });
      const result = await runCounting(runtime, ["run", "w"], { cwd });
      expect(result.code).toBe(0);
      expect([...result.stderrHead]).toEqual(bytes);
      expect(result.stdout.length).toBe(0);
    });
  });

  describe("no trailing newline, stdout closed early or held open", () => {
    it("JSON without a trailing newline (bash printf and TS write): goto, result and stop all honoured", async ({ expect }) => {
      const cwd = makeProject({
        ".loopx/w/index.sh": `printf '%s' '{"result":"no newline","goto":"t"}'\n`,
        ".loopx/w/t.ts":
          'import { readFileSync, writeFileSync } from "node:fs";\n' +
          "writeFileSync(`${process.env.LOOPX_PROJECT_ROOT}/t.stdin`, readFileSync(0));\n" +
          'process.stdout.write(\'{"stop":true}\');\n',
      });
      const result = await runCounting(runtime, ["run", "w"], { cwd });
      expect(result.stderrHead.toString()).toBe("");
      expect(result.code).toBe(0);
      expect(readFileSync(join(cwd, "t.stdin"), "utf8")).toBe("no newline");
    });

    it("raw output is kept exactly: no newline added, trailing newlines and spaces not trimmed", async ({ expect }) => {
      const dir = consumer(
        `import { runPromise } from "loopx";
         console.log(JSON.stringify(await runPromise("w", { maxIterations: 3 })));`,
        {
          ".loopx/w/index.sh": `n=$(cat ${R}/n 2>/dev/null || echo 0); echo $((n+1)) > ${R}/n\n` +
            `case $n in 0) printf 'abc';; 1) printf 'abc\\n\\n';; *) printf '  \\t\\n';; esac\n`,
        },
      );
      const result = await runConsumer(runtime, dir);
      expect(result.json).toEqual([{ result: "abc" }, { result: "abc\n\n" }, { result: "  \t\n" }]);
    });

    it.for([
      ["after a partial write (raw result is the partial text)", `printf '{"result":"partial'\nexec >&-`, { result: '{"result":"partial' }],
      ["before writing anything (empty result)", "exec >&-", { result: "" }],
      ["after complete JSON (its goto is honoured)", `printf '{"result":"r","goto":"index"}'\nexec >&-`, { result: "r", goto: "index" }],
    ] as const)("stdout closed early %s; the script keeps running and the loop waits for it", async ([, body, expected], { expect }) => {
      const dir = consumer(
        `import { run } from "loopx";
         import { appendFileSync } from "node:fs";
         const outputs = [];
         for await (const o of run("w", { maxIterations: 2 })) { outputs.push(o); appendFileSync("trace", "yield\\n"); }
         console.log(JSON.stringify(outputs));`,
        {
          ".loopx/w/index.sh":
            `echo start >> ${R}/trace\n${body}\n` +
            // Writing to the closed stdout fails quietly; the script goes on and exits 0.
            `echo "stdout is closed" >&2\n{ echo more; } 2>/dev/null\nsleep 0.3\necho end >> ${R}/trace\nexit 0\n`,
        },
      );
      const result = await runConsumer(runtime, dir);
      expect(result.code).toBe(0);
      expect(result.json).toEqual([expected, expected]);
      expect(lines(join(dir, "trace"))).toEqual(["start", "end", "yield", "start", "end", "yield"]);
    });

    it("a TS script that closes fd 1 after writing JSON, then keeps working: output honoured", async ({ expect }) => {
      const cwd = makeProject({
        ".loopx/w/index.ts":
          'import { closeSync, writeSync, appendFileSync } from "node:fs";\n' +
          'writeSync(1, \'{"result":"closed","goto":"b"}\');\n' +
          "closeSync(1);\n" +
          "await new Promise((r) => setTimeout(r, 300));\n" +
          'appendFileSync(`${process.env.LOOPX_PROJECT_ROOT}/trace`, "index done\\n");\n',
        ".loopx/w/b.sh": `echo "b got $(cat)" >> ${R}/trace\necho '{"stop":true}'\n`,
      });
      const result = await runCounting(runtime, ["run", "w"], { cwd });
      expect(result.stderrHead.toString()).toBe("");
      expect(result.code).toBe(0);
      expect(lines(join(cwd, "trace"))).toEqual(["index done", "b got closed"]);
    });

    it("stdout held open by a grandchild after the script exits: read to EOF, nothing lost", async ({ expect }) => {
      const cwd = makeProject({
        // The script prints half the JSON and exits; a background child prints the rest later.
        ".loopx/w/index.sh": `(sleep 0.5; printf '"goto":"b"}') &\nprintf '{"result":"half",'\nexit 0\n`,
        ".loopx/w/b.sh": `echo "b got $(cat)" >> ${R}/trace\necho '{"stop":true}'\n`,
      });
      const result = await runCounting(runtime, ["run", "w"], { cwd });
      expect(result.stderrHead.toString()).toBe("");
      expect(result.code).toBe(0);
      expect(lines(join(cwd, "trace"))).toEqual(["b got half"]);
    });
  });
});
