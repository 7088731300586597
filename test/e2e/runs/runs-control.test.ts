/**
 * Steering a running loop from another process, black-box under node, bun and the
 * standalone binary, with real processes: `loopx runs stop` lets the running script finish and
 * starts no further one (exit 0, "stopped on request" in the record and the progress summary);
 * `--now` ends the run as Ctrl-C does; `runs pause` / `runs continue` hold the next script (the
 * record, the progress line and `loopx runs` show it); the channel is private to its user.
 */
import { chmodSync, existsSync, lstatSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { IS_ROOT, UNPRIVILEGED_ID, expectOneLineError, isolatedEnv, makeProject, processAlive, runCommand, sh, sleep, unprivileged, waitFor, type RunResult } from "../../helpers.js";
import { CHANNELS, events, loopx, recordIds, runsDir, startLoopx, trace, waitForEvent, type Channel, type Env } from "../../fixtures/control/support.js";

const WORKFLOWS = {
  // Each iteration: trace, its pid and LOOPX_TMPDIR for the test, ${SLEEP:-3} s of work, a result.
  ".loopx/w/index.sh": sh(
    [
      'echo "start $LOOPX_ITERATION" >> "$LOOPX_PROJECT_ROOT/trace.log"',
      'echo $$ > "$LOOPX_PROJECT_ROOT/script.pid"',
      'echo "$LOOPX_TMPDIR" > "$LOOPX_PROJECT_ROOT/tmpdir"',
      'if [ -n "$STRAY" ]; then setsid sleep 60 < /dev/null > /dev/null 2>&1 & echo $! > "$LOOPX_PROJECT_ROOT/stray.pid"; fi',
      "sleep ${SLEEP:-3}",
      'echo "end $LOOPX_ITERATION" >> "$LOOPX_PROJECT_ROOT/trace.log"',
      'echo "{\\"result\\":\\"iteration $LOOPX_ITERATION\\"}"',
    ].join("\n"),
  ),
};

/** `command` on a real pseudo-terminal (util-linux `script`), in the background. */
function onPty(command: string[], cwd: string, env: Env): Promise<RunResult> {
  const quoted = command.map((arg) => `'${arg.replace(/'/g, "'\\''")}'`).join(" ");
  return runCommand("script", ["-qfec", quoted, "/dev/null"], { cwd, env, timeoutMs: 60_000 });
}

const started = (n: number) => (event: Record<string, any>) => event.type === "iteration.start" && event.n === n;
const ended = (n: number) => (event: Record<string, any>) => event.type === "iteration.end" && event.n === n;

describe.each(CHANNELS)("runs stop / pause / continue ($name)", (channel: Channel) => {
  it("runs stop during a 3 s iteration: it completes (its output recorded), the next never starts, exit 0 with the stop reason (record, progress summary, runs)", async () => {
    const cwd = makeProject(WORKFLOWS);
    const env = isolatedEnv({ TERM: "dumb" });
    const run = onPty([...channel.argv, "run", "w"], cwd, env);
    const id = await waitForEvent(env, started(1));
    const socket = join(env.XDG_STATE_HOME!, "loopx", "control", `${id}.sock`);
    expect(lstatSync(socket).isSocket()).toBe(true);
    expect(lstatSync(dirname(socket)).mode & 0o777).toBe(0o700);

    const stop = await loopx(channel, ["runs", "stop", id.slice(0, 10)], cwd, env);
    expect(stop).toMatchObject({ code: 0, stdout: `run ${id} stops after w:index finishes\n`, stderr: "" });
    const result = await run;
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/loopx: stop requested at \d\d:\d\d:\d\d · w:index finishes, no further script starts\r\n/);
    expect(result.stdout).toMatch(/loopx: stopped on request · 1 iteration · [\d.]+s · run [0-9a-z]{8}\r\n$/);
    expect(trace(cwd)).toEqual(["start 1", "end 1"]);

    const record = events(env, id);
    expect(record.filter((event) => event.type === "iteration.start")).toHaveLength(1);
    expect(record.find(ended(1))).toMatchObject({ exitCode: 0, output: { result: "iteration 1" } });
    expect(record.find((event) => event.type === "run.stop")).toMatchObject({ now: false, running: "w:index" });
    expect(record.at(-1)).toMatchObject({ type: "run.end", reason: "stopped-on-request", exitCode: 0, iterations: 1 });
    expect(record.at(-1)).not.toHaveProperty("signal");
    expect(existsSync(socket)).toBe(false);
    const list = await loopx(channel, ["runs"], cwd, env);
    expect(list.stdout).toMatch(new RegExp(`^${id}  stopped-on-request  `, "m"));
  });

  it("runs stop --now: ends the run as Ctrl-C does (exit 130, script and strays ended, LOOPX_TMPDIR removed)", async () => {
    const cwd = makeProject(WORKFLOWS);
    const env = isolatedEnv({ SLEEP: "30", STRAY: "1" });
    const run = startLoopx(channel, ["run", "w"], cwd, env);
    const id = await waitForEvent(env, started(1));
    expect(await waitFor(() => existsSync(join(cwd, "stray.pid")), 10_000)).toBe(true);
    const script = Number(readFileSync(join(cwd, "script.pid"), "utf8"));
    const stray = Number(readFileSync(join(cwd, "stray.pid"), "utf8"));
    const tmpdir = readFileSync(join(cwd, "tmpdir"), "utf8").trim();

    const stop = await loopx(channel, ["runs", "stop", "--now", id], cwd, env);
    expect(stop).toMatchObject({ code: 0, stdout: `run ${id} is interrupted now (w:index gets SIGINT)\n`, stderr: "" });
    const result = await run.result;
    expect(result).toMatchObject({ code: 130, stdout: "", stderr: "" });
    expect(processAlive(script)).toBe(false);
    expect(processAlive(stray)).toBe(false);
    expect(existsSync(tmpdir)).toBe(false);
    expect(trace(cwd)).toEqual(["start 1"]);
    expect(events(env, id).at(-1)).toMatchObject({ type: "run.end", reason: "interrupted", exitCode: 130, message: "interrupted by loopx runs stop --now" });
  });

  it("pause during an iteration, 2 s, continue: the next script starts only after continue; record and progress show both with times; runs shows paused", async () => {
    const cwd = makeProject(WORKFLOWS);
    // The pause must reach the run while its first iteration still works: a loopx start later on a
    // loaded box, which outlasted 1 s of work once in CI (the run had gone on and ended).
    const env = isolatedEnv({ TERM: "dumb", SLEEP: "6" });
    const run = onPty([...channel.argv, "run", "-n", "2", "w"], cwd, env);
    const id = await waitForEvent(env, started(1));
    const pause = await loopx(channel, ["runs", "pause", id.slice(0, 8)], cwd, env);
    expect(pause).toMatchObject({ code: 0, stdout: `run ${id} pauses after w:index finishes (loopx runs continue ${id})\n`, stderr: "" });
    await waitForEvent(env, ended(1));
    const list = await loopx(channel, ["runs"], cwd, env);
    expect(list.stdout).toMatch(new RegExp(`^${id}  paused  `, "m"));
    await sleep(2000);
    expect(trace(cwd)).toEqual(["start 1", "end 1"]);
    expect(events(env, id).some(started(2))).toBe(false);

    const continued = await loopx(channel, ["runs", "continue", id], cwd, env);
    expect(continued).toMatchObject({ code: 0, stdout: `run ${id} continues\n`, stderr: "" });
    const result = await run;
    expect(result.code).toBe(0);
    expect(trace(cwd)).toEqual(["start 1", "end 1", "start 2", "end 2"]);
    const record = events(env, id);
    const paused = record.find((event) => event.type === "run.pause")!;
    const goOn = record.find((event) => event.type === "run.continue")!;
    expect(paused).toMatchObject({ running: "w:index" });
    expect(goOn.pausedMs).toBeGreaterThanOrEqual(2000);
    expect(Date.parse(record.find(started(2))!.time)).toBeGreaterThanOrEqual(Date.parse(goOn.time));
    expect(result.stdout).toMatch(/loopx: paused at \d\d:\d\d:\d\d · w:index finishes, then the run waits \(loopx runs continue \w+\)\r\n/);
    expect(result.stdout).toMatch(/loopx: continued at \d\d:\d\d:\d\d after [\d.]+s paused\r\n/);
    expect(result.stdout).toMatch(/loopx: reached -n 2 · 2 iterations/);
  });
});

describe("runs stop / pause / continue: refusals, one line each (node)", () => {
  const node = CHANNELS[0]!;

  it("an unknown id, an ended run, a run that is not paused, a pause while stopping, a run without a channel (LOOPX_CONTROL=0)", async () => {
    const cwd = makeProject(WORKFLOWS);
    // Long enough that the iteration is still going when `pause` asks, three loopx starts later on a
    // loaded box: 4 s ran out once with three test files at a time (the run had ended).
    const env = isolatedEnv({ SLEEP: "10" });
    expectOneLineError(await loopx(node, ["runs", "stop", "zzz"], cwd, env), /^loopx: no run "zzz" in .*\n$/);
    const run = startLoopx(node, ["run", "w"], cwd, env);
    const id = await waitForEvent(env, started(1));
    expectOneLineError(await loopx(node, ["runs", "continue", id], cwd, env), new RegExp(`^loopx: run ${id} is not paused\n$`));
    expect((await loopx(node, ["runs", "stop", id], cwd, env)).code).toBe(0);
    expectOneLineError(await loopx(node, ["runs", "pause", id], cwd, env), new RegExp(`^loopx: run ${id} is stopping: nothing to pause\n$`));
    expect((await run.result).code).toBe(0);
    expectOneLineError(await loopx(node, ["runs", "stop", id], cwd, env), new RegExp(`^loopx: run ${id} has ended \\(stopped on request\\)\n$`));

    const quiet: Record<string, string> = { ...isolatedEnv({ SLEEP: "1" }), LOOPX_CONTROL: "0" };
    const uncontrolled = startLoopx(node, ["run", "-n", "2", "w"], cwd, quiet);
    const other = await waitForEvent(quiet, started(1));
    expectOneLineError(await loopx(node, ["runs", "stop", other], cwd, quiet), /has no control channel \(started with LOOPX_CONTROL=0/);
    expect(await uncontrolled.result).toMatchObject({ code: 0, stderr: "" });
    expect(existsSync(join(quiet.XDG_STATE_HOME!, "loopx", "control"))).toBe(false);
  });

  it("control refused to another (unprivileged) user: permission denied, the run goes on untouched", async () => {
    expect(IS_ROOT, "this case drops privileges with setpriv and needs root").toBe(true);
    const cwd = makeProject(WORKFLOWS);
    // 3 s per iteration (the script's default): the run outlives the three refused commands, each
    // a node start that a loaded machine can stretch past a second.
    const env = isolatedEnv();
    const run = startLoopx(node, ["run", "-n", "3", "w"], cwd, env);
    const id = await waitForEvent(env, started(1));
    // Everything up to loopx's own directories is open to others: only the channel's privacy stops them.
    for (let dir = join(env.XDG_STATE_HOME!, "loopx"); dir !== dirname(env.HOME!); dir = dirname(dir)) chmodSync(dir, 0o755);
    expect(lstatSync(join(env.XDG_STATE_HOME!, "loopx", "control")).mode & 0o777).toBe(0o700);
    expect(lstatSync(join(env.XDG_STATE_HOME!, "loopx", "control", `${id}.sock`)).mode & 0o777).toBe(0o600);
    for (const args of [["runs", "stop", "--now", id], ["runs", "pause", id], ["runs", "stop", id]]) {
      // From anywhere (steering needs no project): here "/", which that user can read.
      const [exe, argv] = unprivileged(node.argv[0]!, [...node.argv.slice(1), ...args]);
      const refused = await runCommand(exe, argv, { cwd: "/", env });
      expectOneLineError(refused, new RegExp(`^loopx: cannot reach the control channel of run ${id}: permission denied \\(EACCES\\)\n$`));
    }
    expect(await run.result).toMatchObject({ code: 0, stderr: "" });
    expect(trace(cwd)).toEqual(["start 1", "end 1", "start 2", "end 2", "start 3", "end 3"]);
    expect(events(env, id).filter((event) => ["run.stop", "run.pause"].includes(event.type))).toEqual([]);
    expect(recordIds(env)).toEqual([id]);
    expect(UNPRIVILEGED_ID).toBe(65534);
    expect(runsDir(env)).toContain(env.XDG_STATE_HOME);
  });
});
