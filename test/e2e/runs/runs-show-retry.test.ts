/**
 * `kill -9` of loopx and its guardian together (the part `runs show` owns): after
 * `runs resume`, the record holds two tries of iteration 1; `runs show` shows it once, marked as a
 * retry, under a line marking where the resume began (the old main showed two rows numbered 1
 * and nothing between them). Real SIGKILLs by pid; the record view is the same on every channel,
 * so node only.
 */
import { existsSync, readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { CHANNELS, isolatedEnv, makeProject, processAlive, waitFor } from "../../helpers.js";
import { guardianOf, loopx, startLoopx, waitForEvent } from "../../fixtures/control/support.js";

describe.runIf(process.platform === "linux")("runs show after kill -9 of loopx and its guardian, then a resume", () => {
  it("shows the re-run iteration once, as a retry, under a line where the resume began", async () => {
    const channel = CHANNELS[0]!;
    const cwd = makeProject({ ".loopx/main/index.sh": `#!/bin/bash\nsleep 0.5\necho '{"result":"done"}'\n` });
    const env = isolatedEnv();
    const run = startLoopx(channel, ["run", "-n", "2", "main"], cwd, env);
    const id = await waitForEvent(env, (event) => event.type === "iteration.start" && event.n === 1);
    const loopxPid = run.child.pid!;
    let guardian: number | undefined;
    expect(await waitFor(() => (guardian = guardianOf(loopxPid)) !== undefined, 10_000)).toBe(true);
    process.kill(guardian!, "SIGKILL");
    process.kill(loopxPid, "SIGKILL");
    await run.result;
    expect(await waitFor(() => !processAlive(guardian!), 5000)).toBe(true);

    const resumed = await loopx(channel, ["runs", "resume", id], cwd, env);
    expect(resumed.code, resumed.stderr).toBe(0);
    const shown = (await loopx(channel, ["runs", "show", id], cwd, env)).stdout.split("\n");
    const rows = shown.filter((line) => /^\s*\d+\s+main:index/.test(line));
    expect(rows.map((line) => line.trim().split(/\s+/)[0])).toEqual(["1", "2"]);
    expect(rows[0]).toContain("main:index (retry)");
    const marker = shown.findIndex((line) => line.startsWith("── resumed ") && line.includes("at main:index"));
    expect(marker).toBeGreaterThan(0);
    expect(shown[marker + 1]).toBe(rows[0]);
  });

  it("'loopx runs' names the processes still carrying the crashed run's id and one command that ends them and removes its scratch directory", async () => {
    const channel = CHANNELS[0]!;
    const cwd = makeProject({ ".loopx/main/index.sh": `#!/bin/bash\necho "$LOOPX_TMPDIR" > "$LOOPX_PROJECT_ROOT/scratch"\nexec sleep 60\n` });
    const env = isolatedEnv();
    const run = startLoopx(channel, ["run", "main"], cwd, env);
    const id = await waitForEvent(env, (event) => event.type === "iteration.start");
    const loopxPid = run.child.pid!;
    let guardian: number | undefined;
    expect(await waitFor(() => (guardian = guardianOf(loopxPid)) !== undefined && existsSync(`${cwd}/scratch`), 10_000)).toBe(true);
    process.kill(guardian!, "SIGKILL");
    process.kill(loopxPid, "SIGKILL");
    await run.result;
    const scratch = readFileSync(`${cwd}/scratch`, "utf8").trim();
    const listed = await loopx(channel, ["runs"], cwd, env);
    const line = listed.stdout.split("\n").find((text) => text.startsWith(`run ${id} crashed`));
    expect(line, listed.stdout).toMatch(/but 1 of its processes still run: \d+ \(sleep 60\); to end them and remove its scratch directory: kill -TERM \d+ && rm -rf /);
    expect(line).toContain(scratch);
    // The command it offers does what it says.
    execFileSync("/bin/sh", ["-c", line!.slice(line!.indexOf("kill -TERM"))]);
    expect(existsSync(scratch)).toBe(false);
    expect((await loopx(channel, ["runs"], cwd, env)).stdout).not.toContain(`run ${id} crashed (`);
  });
});
