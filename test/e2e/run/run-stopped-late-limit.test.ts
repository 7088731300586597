/**
 * Stopped, then continued: `kill -STOP` of loopx does not stop its script (a
 * session of its own). With --max-time, a script that exits 0 while loopx is stopped, before the
 * deadline, is not called killed when loopx continues after it: its result (goto) is read and
 * recorded, and the run ends there as timed out after it — so `runs resume` goes on at the goto
 * target, not at the script again. Real signals, on node, bun and the binary.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CHANNELS, isolatedEnv, makeProject, sleep, waitFor } from "../../helpers.js";
import { events, recordIds, startLoopx } from "../../fixtures/control/support.js";

describe("run: loopx stopped past --max-time", () => {
  it.concurrent.each(CHANNELS)("$name: a script that finished while loopx was stopped keeps its result; the run ends after it", async (channel) => {
    const cwd = makeProject({
      ".loopx/main/index.sh": `#!/bin/bash\ntouch "$LOOPX_PROJECT_ROOT/started"\nsleep 1\n"$LOOPX_BIN" output --result ok --goto next\ntouch "$LOOPX_PROJECT_ROOT/finished"\n`,
      ".loopx/main/next.sh": `#!/bin/bash\ntouch "$LOOPX_PROJECT_ROOT/next-ran"\n`,
    });
    const env = isolatedEnv();
    const run = startLoopx(channel, ["run", "--max-time", "3s", "main"], cwd, env);
    expect(await waitFor(() => existsSync(join(cwd, "started")), 20_000)).toBe(true);
    run.child.kill("SIGSTOP");
    const stoppedAt = Date.now();
    expect(await waitFor(() => existsSync(join(cwd, "finished")), 20_000)).toBe(true);
    await sleep(Math.max(0, stoppedAt + 4000 - Date.now())); // past the 3 s deadline
    run.child.kill("SIGCONT");
    const result = await run.result;
    expect(result.code, result.stderr).toBe(124);
    expect(result.stderr).not.toContain("killed");
    expect(result.stderr).toContain("the run's time limit of 3s was reached after script main:index");
    const record = events(env, recordIds(env)[0]!);
    const ends = record.filter((event) => event.type === "iteration.end");
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({ n: 1, exitCode: 0, signal: null, output: { result: "ok", goto: "next" } });
    expect(record.at(-1)).toMatchObject({ type: "run.end", reason: "timed-out", exitCode: 124, iterations: 1 });
    expect(existsSync(join(cwd, "next-ran"))).toBe(false);
  });
});
