/**
 * A script's stdout over loopx's cap: the iteration fails with one line naming
 * the script, the size and the cap (exit 1, the record written with the run's end) — never the
 * runtime's "Cannot create a string longer than ..." — and the pipe is read to its end (the
 * script is not blocked). The default cap is 400 MiB; LOOPX_MAX_STDOUT lowers it, so that the
 * test writes 3 MB, not 500. Memory for 300 MB is measured in `npm run bench` (huge-stdout).
 *
 * A stdout over 1 MiB is kept as bytes and decoded only when its text is needed (runtime/stdout-capture.ts): what the loop, the record and the API make of it stays what the
 * whole text decoded at once gives — a raw result read from its ends, a structured one parsed whole
 * and its result passed on as the next script's stdin, byte for byte.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CHANNELS, RUNTIMES, consumer, expectOneLineError, isolatedEnv, makeProject, runConsumer, warnings } from "../../helpers.js";
import { events, loopx, recordIds } from "../../fixtures/control/support.js";

describe("run: stdout over the cap", () => {
  it.concurrent.each(CHANNELS)("$name: fails the iteration with one line naming the script, the size and the cap; the record is closed", async (channel) => {
    const cwd = makeProject({
      ".loopx/main/index.sh": `#!/bin/bash\nhead -c 3000000 /dev/zero | tr '\\0' a\necho done > "$LOOPX_PROJECT_ROOT/finished"\n`,
    });
    const env = isolatedEnv({ LOOPX_MAX_STDOUT: "1M" });
    const result = await loopx(channel, ["run", "-n", "3", "main"], cwd, env);
    expectOneLineError(result, "script main:index wrote 3000000 bytes to stdout, more than loopx's cap of 1048576 bytes (LOOPX_MAX_STDOUT");
    expect(result.stderr).not.toContain("Cannot create a string");
    const record = events(env, recordIds(env)[0]!);
    expect(record.at(-1)).toMatchObject({ type: "run.end", reason: "failed", exitCode: 1, iterations: 1 });
    expect(record.find((event) => event.type === "iteration.end")).toMatchObject({ exitCode: 0, stdoutBytes: 3000000 });
    // Under the cap all is as before.
    const under = await loopx(channel, ["run", "-n", "1", "main"], cwd, isolatedEnv({ LOOPX_MAX_STDOUT: "4M" }));
    expect(under.code, under.stderr).toBe(0);
  });
});

/** 3 MB of "a" then a line holding a stop, which the spec ignores in a raw result. */
const RAW = `#!/bin/bash\nhead -c 3000000 /dev/zero | tr '\\0' a\necho\necho '{"stop":true}'\n`;

describe("run: a stdout over 1 MiB", () => {
  it.concurrent.each(CHANNELS)("$name: a raw result is recorded from its ends and warned about; a structured one passes its result on whole", async (channel) => {
    const cwd = makeProject({
      ".loopx/main/index.sh": RAW,
      // 3 MB of result with characters of 1 to 4 bytes, which reads cut anywhere; over 1 M
      // characters, it is written to the next script's stdin a slice at a time (stdin-file.ts).
      ".loopx/big/index.sh": `#!/bin/bash\nprintf '{"goto":"check","result":"'\nyes 'aé中😀' | head -n 300000 | tr -d '\\n'\nprintf '"}'\n`,
      ".loopx/big/check.sh": `#!/bin/bash\ncat > "$LOOPX_PROJECT_ROOT/got"\n"$LOOPX_BIN" output --stop\n`,
    });
    const env = isolatedEnv();
    const raw = await loopx(channel, ["run", "-n", "2", "main"], cwd, env);
    expect(raw.code, raw.stderr).toBe(0);
    expect(warnings(raw.stderr)).toEqual([expect.stringMatching(/^loopx: warning: main:index: its stdout is not one JSON object .*"stop" is ignored/)]);
    const ends = events(env, recordIds(env)[0]!).filter((event) => event.type === "iteration.end");
    expect(ends).toHaveLength(2);
    expect(ends[0]).toMatchObject({ exitCode: 0, stdoutBytes: 3_000_015, output: { result: "a".repeat(4096), resultBytes: 3_000_015 } });

    const big = await loopx(channel, ["run", "big"], cwd, isolatedEnv());
    expect(big.code, big.stderr).toBe(0);
    const expected = "aé中😀".repeat(300_000);
    expect(readFileSync(join(cwd, "got"), "utf8") === expected).toBe(true);
  });

  it.concurrent.each(RUNTIMES)("$name: the API hands over a raw result of 3 MB as a plain string, byte for byte", async (runtime) => {
    const source = `
import { runPromise } from "loopx";
const [output] = await runPromise("main", { maxIterations: 1 });
const result = Object.getOwnPropertyDescriptor(output, "result").value;
console.log(JSON.stringify({ length: result.length, head: result.slice(0, 3), tail: result.slice(-16), as: JSON.parse(JSON.stringify(output)).result.length }));
`;
    const dir = consumer(source, { ".loopx/main/index.sh": RAW });
    const result = await runConsumer(runtime, dir, { timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(result.json).toEqual({ length: 3_000_015, head: "aaa", tail: 'a\n{"stop":true}\n', as: 3_000_015 });
  });
});
