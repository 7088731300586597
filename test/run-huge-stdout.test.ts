/**
 * A script's stdout over loopx's cap (issue 35 item 5): the iteration fails with one line naming
 * the script, the size and the cap (exit 1, the record written with the run's end) — never the
 * runtime's "Cannot create a string longer than ..." — and the pipe is read to its end (the
 * script is not blocked). The default cap is 400 MiB; LOOPX_MAX_STDOUT lowers it, so that the
 * test writes 3 MB, not 500. Memory for 300 MB is measured in `npm run bench` (huge-stdout).
 */
import { describe, expect, it } from "vitest";
import { CHANNELS, expectOneLineError, isolatedEnv, makeProject } from "./helpers.js";
import { events, loopx, recordIds } from "./fixtures/control/support.js";

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
