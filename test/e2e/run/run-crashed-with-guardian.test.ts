/**
 * `kill -9` of loopx and its guardian together, on node, bun and the binary: a
 * run killed seconds after its last event, while its script runs. `loopx runs` (and --json,
 * `runs show`) give its duration up to its last sign of life, marked as a lower bound (the old main:
 * up to its last event, ~0 s, as if exact); the next `loopx run` in its project says, on stderr,
 * which processes it left and the one command that ends them and removes its scratch directory,
 * then (processes gone) that its scratch directory is left; once nothing is left, nothing is said
 * (the old main: nothing at all). Real processes, real SIGKILLs by pid.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isolatedEnv, makeProject, processAlive, sleep, waitFor } from "../../helpers.js";
import { CHANNELS, events, guardianOf, loopx, runsDir, startLoopx, waitForEvent } from "../../fixtures/control/support.js";

/** How long after its last event the run is killed; the heartbeat is once a second. */
const QUIET_MS = 4000;

describe.runIf(process.platform === "linux").each(CHANNELS)("a run whose loopx and guardian were killed together ($name)", (channel) => {
  it("is listed with its duration up to its last sign of life (a lower bound), and the next loopx run names what it left", async () => {
    const cwd = makeProject({
      ".loopx/main/index.sh": `#!/bin/bash\necho "$LOOPX_TMPDIR" > "$LOOPX_PROJECT_ROOT/scratch"\nexec sleep 60\n`,
      ".loopx/quick/index.sh": `#!/bin/bash\necho '{"result":"ok"}'\n`,
    });
    const env = isolatedEnv();
    const run = startLoopx(channel, ["run", "main"], cwd, env);
    const id = await waitForEvent(env, (event) => event.type === "iteration.start");
    const loopxPid = run.child.pid!;
    let guardian: number | undefined;
    expect(await waitFor(() => (guardian = guardianOf(loopxPid)) !== undefined && existsSync(join(cwd, "scratch")), 20_000)).toBe(true);
    const recorded = events(env, id);
    const startMs = Date.parse(recorded[0]!.time);
    const lastEventMs = Date.parse(recorded.at(-1)!.time);
    await sleep(Math.max(0, lastEventMs + QUIET_MS - Date.now()));
    process.kill(guardian!, "SIGKILL");
    process.kill(loopxPid, "SIGKILL");
    const killedMs = Date.now();
    await run.result;
    expect(await waitFor(() => !processAlive(guardian!), 5000)).toBe(true);
    const scratch = readFileSync(join(cwd, "scratch"), "utf8").trim();

    // Its duration: at least until a heartbeat well after its last event, never past its death.
    const row = JSON.parse((await loopx(channel, ["runs", "--json"], cwd, env)).stdout.trim());
    expect(row.durationMs).toBeGreaterThanOrEqual(lastEventMs - startMs + QUIET_MS - 2500);
    expect(row.durationMs).toBeLessThanOrEqual(killedMs - startMs + 50);
    expect(row).toMatchObject({ id, state: "crashed", durationAtLeast: true });
    const listed = (await loopx(channel, ["runs"], cwd, env)).stdout;
    expect(listed).toMatch(new RegExp(`^${id}\\s+crashed\\s+\\S+ \\S+\\s+≥\\d+\\.\\ds\\s+1\\s`, "m"));
    expect((await loopx(channel, ["runs", "show", id], cwd, env)).stdout.split("\n")[0]).toMatch(/ · 1 iteration · ≥\d+\.\ds$/);

    // The next run in the project: one warning line naming the process and the command.
    const next = await loopx(channel, ["run", "-n", "1", "quick"], cwd, env);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).toBe("");
    const warning = next.stderr.split("\n").find((line) => line.includes(`run ${id} crashed`));
    expect(warning, next.stderr).toMatch(/^loopx: warning: run \S+ crashed \(loopx and its guardian are gone\) but 1 of its processes still run: \d+ \(sleep 60\); to end them and remove its scratch directory: kill -TERM \d+ && rm -rf /);
    expect(warning).toContain(scratch);
    const sleeper = Number(/kill -TERM (\d+)/.exec(warning!)![1]);

    // Its process ended by hand, its scratch directory still there: said too, with its own command.
    process.kill(sleeper, "SIGKILL");
    expect(await waitFor(() => !processAlive(sleeper), 5000)).toBe(true);
    const then = await loopx(channel, ["run", "-n", "1", "quick"], cwd, env);
    const left = then.stderr.split("\n").find((line) => line.includes(`run ${id} crashed`));
    expect(left, then.stderr).toBe(`loopx: warning: run ${id} crashed (loopx and its guardian are gone) and left its scratch directory; to remove it: rm -rf ${scratch}`);
    execFileSync("/bin/sh", ["-c", left!.slice(left!.indexOf("rm -rf"))]);
    expect(existsSync(scratch)).toBe(false);

    // Nothing left: nothing said, and the run is not looked at again (its lifeline file is gone).
    const clean = await loopx(channel, ["run", "-n", "1", "quick"], cwd, env);
    expect(clean.stderr).not.toContain(`run ${id}`);
    expect(existsSync(join(runsDir(env), `${id}.live`))).toBe(false);
    expect(existsSync(join(runsDir(env), `${id}.jsonl`))).toBe(true);
  });
});
