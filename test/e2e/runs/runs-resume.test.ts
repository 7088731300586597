/**
 * Resuming a run that ended early or died, black-box under node, bun and the standalone
 * binary, with real processes: after SIGKILL of loopx the script that was running runs again with
 * exactly the bytes it got on stdin, LOOPX_RUN_ID the same, LOOPX_ITERATION and the -n budget
 * going on, a new LOOPX_TMPDIR, one record with a `run.resume`; after a time limit, Ctrl-C or a
 * failing script the same target runs again; refusals are one line each.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { IS_ROOT, expectOneLineError, giveToUnprivileged, isolatedEnv, makeProject, processAlive, runCommand, sh, unprivileged, waitFor, waitForPid } from "../../helpers.js";
import { CHANNELS, events, loopx, recordIds, startLoopx, trace, waitForEvent, type Channel } from "../../fixtures/control/support.js";

const MIB = 1024 * 1024;

const WORKFLOWS = {
  // a: 1 MiB of fresh random text (kept as payload.<n>), handed to b by goto.
  ".loopx/p/index.sh": sh(
    [
      'echo "a $LOOPX_ITERATION $LOOPX_RUN_ID" >> "$LOOPX_PROJECT_ROOT/trace.log"',
      'head -c 786432 /dev/urandom | base64 -w0 > "$LOOPX_PROJECT_ROOT/payload.$LOOPX_ITERATION"',
      'printf \'{"goto":"b","result":"%s"}\' "$(cat "$LOOPX_PROJECT_ROOT/payload.$LOOPX_ITERATION")"',
    ].join("\n"),
  ),
  // b: keeps what it got; waits while <project>/hold exists.
  ".loopx/p/b.sh": sh(
    [
      'cat > "$LOOPX_PROJECT_ROOT/got.$LOOPX_ITERATION.$$"',
      'echo "b $LOOPX_ITERATION $LOOPX_RUN_ID $$ $LOOPX_TMPDIR" >> "$LOOPX_PROJECT_ROOT/trace.log"',
      'echo $$ > "$LOOPX_PROJECT_ROOT/b.pid"',
      'while [ -e "$LOOPX_PROJECT_ROOT/hold" ]; do sleep 0.1; done',
      "echo '{\"result\":\"ok\"}'",
    ].join("\n"),
  ),
  // r: index goes to c; c sleeps while hold exists, fails while fail exists, else stops the run.
  ".loopx/r/index.sh": sh('echo "index $LOOPX_ITERATION" >> "$LOOPX_PROJECT_ROOT/trace.log"\necho \'{"goto":"c","result":"to c"}\''),
  ".loopx/r/c.sh": sh(
    [
      'echo "c $LOOPX_ITERATION $(cat)" >> "$LOOPX_PROJECT_ROOT/trace.log"',
      'while [ -e "$LOOPX_PROJECT_ROOT/hold" ]; do sleep 0.1; done',
      'if [ -e "$LOOPX_PROJECT_ROOT/fail" ]; then exit 3; fi',
      "echo '{\"stop\":true}'",
    ].join("\n"),
  ),
};

const started = (n: number, target?: string) => (event: Record<string, any>) => event.type === "iteration.start" && event.n === n && (target === undefined || event.target === target);

describe.each(CHANNELS)("loopx runs resume ($name)", (channel: Channel) => {
  it("SIGKILL of loopx while b runs with a 1 MiB input from a's goto: b runs again with the same bytes; ITERATION, RUN_ID, -n budget go on; new TMPDIR; one record with run.resume", async () => {
    const cwd = makeProject({ ...WORKFLOWS, hold: "" });
    const env = isolatedEnv();
    const run = startLoopx(channel, ["run", "-n", "5", "p"], cwd, env);
    const id = await waitForEvent(env, started(2, "p:b"));
    const b = await waitForPid(join(cwd, "b.pid"));
    run.child.kill("SIGKILL");
    // Nobody is left to end b (the guardian's job), which holds loopx's stderr: the test ends it.
    await waitFor(() => run.child.exitCode !== null || run.child.signalCode !== null, 5000);
    process.kill(-b, "SIGKILL");
    expect((await run.result).signal).toBe("SIGKILL");
    await waitFor(() => !processAlive(b), 5000);
    rmSync(join(cwd, "hold"));
    const payload = readFileSync(join(cwd, "payload.1"));
    expect(payload.length).toBe(MIB);
    // The run's guardian closes the killed run (run.end `killed`); a resume waits for that, as a
    // user who reads `loopx runs` would.
    await waitForEvent(env, (event) => event.type === "run.end");

    const resumed = await loopx(channel, ["runs", "resume", id.slice(0, 9)], cwd, env);
    expect(resumed).toMatchObject({ code: 0, stdout: "", stderr: "" });
    const lines = trace(cwd).map((line) => line.split(" "));
    expect(lines.map((line) => `${line[0]} ${line[1]}`)).toEqual(["a 1", "b 2", "b 2", "a 3", "b 4", "a 5"]);
    expect(new Set(lines.map((line) => line[2]))).toEqual(new Set([id]));
    const [killed, again] = [lines[1]!, lines[2]!];
    expect(readFileSync(join(cwd, `got.2.${killed[3]}`)).equals(payload)).toBe(true);
    expect(readFileSync(join(cwd, `got.2.${again[3]}`)).equals(payload)).toBe(true);
    expect(again[4]).not.toBe(killed[4]);
    expect(existsSync(again[4]!)).toBe(false);

    expect(recordIds(env)).toEqual([id]);
    const record = events(env, id);
    expect(record.filter((event) => event.type === "run.start")).toHaveLength(1);
    expect(record.filter((event) => event.type === "run.resume")).toEqual([
      expect.objectContaining({ target: "p:b", iterations: 1, maxIterations: 5, stdinBytes: MIB, pid: expect.any(Number) }),
    ]);
    expect(record.at(-1)).toMatchObject({ type: "run.end", reason: "limit", iterations: 5 });
    const list = await loopx(channel, ["runs"], cwd, env);
    expect(list.stdout.trim().split("\n")).toHaveLength(2);
    expect(list.stdout).toMatch(new RegExp(`^${id}  limit  .*  5     p:index`, "m"));
  });

  it("resume after --timeout, after Ctrl-C and after a failing script: the same target runs again (and the recorded options stay)", async () => {
    const cwd = makeProject(WORKFLOWS);
    const env = isolatedEnv();
    writeFileSync(join(cwd, "hold"), "");
    const timedOut = await loopx(channel, ["run", "--timeout", "1s", "r"], cwd, env);
    expect(timedOut.code).toBe(124);
    const first = recordIds(env)[0]!;
    rmSync(join(cwd, "hold"));
    expect(await loopx(channel, ["runs", "resume", first], cwd, env)).toMatchObject({ code: 0, stdout: "", stderr: "" });
    expect(trace(cwd)).toEqual(["index 1", "c 2 to c", "c 2 to c"]);
    expect(events(env, first)[0]).toMatchObject({ type: "run.start", options: { timeout: 1000 } });
    expect(events(env, first).at(-1)).toMatchObject({ type: "run.end", reason: "stopped", target: "r:c", iterations: 2 });

    rmSync(join(cwd, "trace.log"));
    rmSync(join(env.XDG_STATE_HOME!, "loopx"), { recursive: true });
    writeFileSync(join(cwd, "hold"), "");
    const interrupted = startLoopx(channel, ["run", "r"], cwd, env);
    const second = await waitForEvent(env, started(2, "r:c"));
    expect(await waitFor(() => trace(cwd).length === 2, 10_000)).toBe(true);
    interrupted.child.kill("SIGINT");
    expect((await interrupted.result).code).toBe(130);
    rmSync(join(cwd, "hold"));
    expect(await loopx(channel, ["runs", "resume", second], cwd, env)).toMatchObject({ code: 0, stderr: "" });
    expect(trace(cwd)).toEqual(["index 1", "c 2 to c", "c 2 to c"]);

    rmSync(join(cwd, "trace.log"));
    rmSync(join(env.XDG_STATE_HOME!, "loopx"), { recursive: true });
    writeFileSync(join(cwd, "fail"), "");
    expect((await loopx(channel, ["run", "r"], cwd, env)).code).toBe(1);
    const third = recordIds(env)[0]!;
    rmSync(join(cwd, "fail"));
    expect(await loopx(channel, ["runs", "resume", third], cwd, env)).toMatchObject({ code: 0, stderr: "" });
    expect(trace(cwd)).toEqual(["index 1", "c 2 to c", "c 2 to c"]);
    expect(events(env, third).map((event) => event.type)).toEqual([
      "run.start", "iteration.start", "iteration.end", "iteration.start", "iteration.end", "run.end",
      "run.resume", "iteration.start", "iteration.end", "run.end",
    ]);
  });

  it("refused, one line each: a live run, a stopped run, an unknown id, -n used up (a new -n goes on), a target gone, a project moved", async () => {
    const cwd = makeProject({ ...WORKFLOWS, hold: "" });
    const env = isolatedEnv();
    expectOneLineError(await loopx(channel, ["runs", "resume", "zzz"], cwd, env), /^loopx: no run "zzz" in .*\n$/);

    const live = startLoopx(channel, ["run", "r"], cwd, env);
    const id = await waitForEvent(env, started(2));
    expectOneLineError(await loopx(channel, ["runs", "resume", id], cwd, env), new RegExp(`^loopx: run ${id} is still running \\(pid ${live.child.pid}\\): nothing to resume\n$`));
    rmSync(join(cwd, "hold"));
    expect((await live.result).code).toBe(0);
    expectOneLineError(await loopx(channel, ["runs", "resume", id], cwd, env), new RegExp(`^loopx: run ${id} was stopped by r:c: nothing to resume\n$`));

    rmSync(join(env.XDG_STATE_HOME!, "loopx"), { recursive: true });
    expect((await loopx(channel, ["run", "-n", "1", "r"], cwd, env)).code).toBe(0);
    const limited = recordIds(env)[0]!;
    expectOneLineError(await loopx(channel, ["runs", "resume", limited], cwd, env), /reached -n 1: nothing to resume \(give -n <count> for more iterations\)\n$/);
    rmSync(join(cwd, "trace.log"));
    expect(await loopx(channel, ["runs", "resume", "-n", "1", limited], cwd, env)).toMatchObject({ code: 0, stderr: "" });
    expect(trace(cwd)).toEqual(["c 2 to c"]);

    // Killed at c; then c is removed, then the project is moved.
    rmSync(join(env.XDG_STATE_HOME!, "loopx"), { recursive: true });
    writeFileSync(join(cwd, "hold"), "");
    const killed = startLoopx(channel, ["run", "r"], cwd, env);
    const gone = await waitForEvent(env, started(2));
    killed.child.kill("SIGKILL");
    rmSync(join(cwd, "hold")); // c finishes on its own, and lets go of loopx's stderr
    await killed.result;
    const stash = join(cwd, "c.sh.stash");
    renameSync(join(cwd, ".loopx", "r", "c.sh"), stash);
    expectOneLineError(await loopx(channel, ["runs", "resume", gone], cwd, env), /^loopx: cannot resume at r:c: script "c" not found in workflow "r"/);
    renameSync(stash, join(cwd, ".loopx", "r", "c.sh"));
    const moved = `${cwd}-moved`;
    cpSync(cwd, moved, { recursive: true });
    rmSync(cwd, { recursive: true });
    expectOneLineError(await loopx(channel, ["runs", "resume", gone], moved, env), new RegExp(`^loopx: run ${gone} cannot be resumed: its project ${cwd} is gone \\(moved or removed\\)\n$`));
    rmSync(moved, { recursive: true });
  });
});

describe("loopx runs resume: another user's run (node)", () => {
  const node = CHANNELS[0]!;
  it("refused for a run of another (unprivileged) user, and that user cannot resume ours", async () => {
    expect(IS_ROOT, "this case drops privileges with setpriv and needs root").toBe(true);
    const cwd = makeProject({ ...WORKFLOWS, fail: "" });
    const env = isolatedEnv();
    giveToUnprivileged(cwd, env.HOME!);
    chmodSync(cwd, 0o755);
    chmodSync(env.HOME!, 0o755);
    const [exe, argv] = unprivileged(node.argv[0]!, [...node.argv.slice(1), "run", "r"], cwd);
    expect((await runCommand(exe, argv, { cwd, env })).code).toBe(1);
    const theirs = recordIds(env)[0]!;
    rmSync(join(cwd, "fail"));
    expectOneLineError(await loopx(node, ["runs", "resume", theirs], cwd, env), new RegExp(`^loopx: run ${theirs} belongs to another user \\(uid 65534\\): loopx resumes only your own runs\n$`));

    const mine = isolatedEnv();
    writeFileSync(join(cwd, "fail"), "");
    expect((await loopx(node, ["run", "r"], cwd, mine)).code).toBe(1);
    const ours = recordIds(mine)[0]!;
    chmodSync(mine.HOME!, 0o755);
    const [exe2, argv2] = unprivileged(node.argv[0]!, [...node.argv.slice(1), "runs", "resume", ours]);
    expectOneLineError(await runCommand(exe2, argv2, { cwd: "/", env: mine }), /^loopx: cannot read the record of run .*: permission denied \(EACCES\)\n$/);
    expect(spawnSync("true").status).toBe(0);
  });
});
