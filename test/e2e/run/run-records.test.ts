/**
 * loopx's own additions around a run, black-box under node, bun and the standalone
 * binary: terminal progress on a real pseudo-terminal (`script` from util-linux) and nothing on a
 * pipe; run records for every way a run ends (SIGKILL of loopx → killed, by the guardian); pruning at 200;
 * LOOPX_RECORD=0; --log; an unwritable state directory; `loopx runs`, `runs show`, `runs tail` on
 * finished and live runs, two runs in parallel.
 */
import type { ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, BINARY, BUN, NODE, ROOT, RUNTIMES, giveToUnprivileged, isolatedEnv, makeProject, processAlive, runCommand, runLoopxUnprivileged, sh, waitFor, type RunResult } from "../../helpers.js";
import { runsDir } from "../../fixtures/records.js";


interface Channel {
  name: string;
  /** The command line that starts loopx, before its arguments. */
  argv: string[];
}
const CHANNELS: Channel[] = [
  { name: "node", argv: [NODE, BIN] },
  { name: "bun", argv: [BUN, BIN] },
  { name: "binary", argv: [BINARY] },
];

const loopx = (channel: Channel, args: string[], cwd: string, env: Record<string, string>, onSpawn?: (child: ChildProcess) => void): Promise<RunResult> =>
  runCommand(channel.argv[0]!, [...channel.argv.slice(1), ...args], { cwd, env, onSpawn, timeoutMs: 60_000 });


/** Every line of a record, parsed; each must be valid JSON ending in a newline. */
function readEvents(path: string): Array<Record<string, any>> {
  const text = readFileSync(path, "utf8");
  expect(text.endsWith("\n")).toBe(true);
  return text
    .slice(0, -1)
    .split("\n")
    .map((line) => JSON.parse(line));
}

function recordIds(env: Record<string, string>): string[] {
  const dir = runsDir(env);
  return existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith(".jsonl")).map((name) => name.slice(0, -6)) : [];
}

/** The record of the one run that is not in `before`, once it holds an `iteration.start`. */
async function waitForNewRun(env: Record<string, string>, before: string[]): Promise<string> {
  let id: string | undefined;
  const found = await waitFor(() => {
    id = recordIds(env).find((candidate) => !before.includes(candidate));
    return id !== undefined && readFileSync(join(runsDir(env), `${id}.jsonl`), "utf8").includes('"iteration.start"');
  }, 20_000);
  expect(found).toBe(true);
  return id!;
}

const WORKFLOWS = {
  ".loopx/s/index.sh": sh('echo "s says hi" >&2\necho \'{"result":"done","stop":true}\''),
  ".loopx/s/loop.sh": sh("echo '{\"result\":\"again\"}'"),
  ".loopx/f/index.sh": sh("echo oops >&2\nexit 3"),
  ".loopx/slow/index.sh": sh('echo $$ > "$LOOPX_PROJECT_ROOT/script.pid"\necho \'{"result":"tick"}\'\nexec sleep 30'),
  // Runs only once the test has created "go" in the project (at most 30 s): still running while looked at.
  ".loopx/tick/index.sh": sh('for i in $(seq 600); do [ -e "$LOOPX_PROJECT_ROOT/go" ] && break; sleep 0.05; done\nsleep 0.3\necho \'{"result":"tick"}\''),
};

/** Runs `command` on a real pseudo-terminal; returns everything the terminal showed. */
function onPty(command: string[], cwd: string, env: Record<string, string>): Promise<RunResult> {
  const quoted = command.map((arg) => `'${arg.replace(/'/g, "'\\''")}'`).join(" ");
  return runCommand("script", ["-qfec", quoted, "/dev/null"], { cwd, env, timeoutMs: 60_000 });
}

describe.each(CHANNELS)("run records and progress ($name)", (channel) => {
  it("progress on a terminal: styled, NO_COLOR, TERM=dumb, LOOPX_PROGRESS=0; a pipe sees byte-for-byte the script's own stderr", async () => {
    const cwd = makeProject(WORKFLOWS);
    const env = isolatedEnv({ TERM: "xterm-256color" });
    const styled = await onPty([...channel.argv, "run", "-n", "2", "s:loop"], cwd, env);
    expect(styled.code).toBe(0);
    expect(styled.stdout).toMatch(/\x1b\[2mloopx: run \x1b\[1m[0-9a-z]{6,8}\x1b\[22m\x1b\[2m[0-9a-z]{0,2} · iteration 1\/2 · s:loop · \d+ms\x1b\[22m\r\n/);
    expect(styled.stdout).toMatch(/loopx: iteration 2\/2 · s:loop · [\d.]+m?s/);
    expect(styled.stdout).toMatch(/\x1b\[32mloopx: reached -n 2 · 2 iterations · [\d.]+m?s · run \x1b\[1m[0-9a-z]{6,8}\x1b\[22m\x1b\[32m[0-9a-z]{0,2}\x1b\[39m\r\n$/);

    const plain = await onPty([...channel.argv, "run", "s"], cwd, { ...env, NO_COLOR: "1" });
    expect(plain.stdout).not.toContain("\x1b");
    // After a script has written to the terminal, loopx's next line starts on a fresh row: spaces
    // to the terminal's width and a carriage return (run-messages.test.ts checks the screen).
    expect(plain.stdout).toMatch(/^loopx: run [0-9a-z]{8} · iteration 1 · s:index · \d+ms\r\ns says hi\r\n(?: +\r)?loopx: stopped by s:index · 1 iteration · \d+ms · run [0-9a-z]{8}\r\n$/);
    const dumb = await onPty([...channel.argv, "run", "f"], cwd, { ...env, TERM: "dumb" });
    expect(dumb.stdout).not.toContain("\x1b");
    expect(dumb.stdout).toContain("loopx: f:index exited with code 3 · 1 iteration · ");
    const off = await onPty([...channel.argv, "run", "s"], cwd, { ...env, LOOPX_PROGRESS: "0" });
    expect(off.stdout).toBe("s says hi\r\n");

    const piped = await loopx(channel, ["run", "-n", "3", "s:loop"], cwd, env);
    expect(piped).toMatchObject({ code: 0, stdout: "", stderr: "" });
    const pipedStop = await loopx(channel, ["run", "s"], cwd, env);
    expect(pipedStop).toMatchObject({ code: 0, stdout: "", stderr: "s says hi\n" });
  });

  it("a record for every way a run ends: stop, -n, failure, SIGINT (last iteration.end kept), SIGKILL of loopx (killed, closed by the run's guardian); runs / runs show", async () => {
    const cwd = makeProject(WORKFLOWS);
    const env = isolatedEnv();
    expect((await loopx(channel, ["run", "s"], cwd, env)).code).toBe(0);
    expect((await loopx(channel, ["run", "-n", "2", "s:loop"], cwd, env)).code).toBe(0);
    expect((await loopx(channel, ["run", "f"], cwd, env)).code).toBe(1);

    let before = recordIds(env);
    const interrupted = loopx(channel, ["run", "slow"], cwd, env, (child) => {
      void waitForNewRun(env, before).then(() => waitFor(() => existsSync(join(cwd, "script.pid")), 10_000)).then(() => child.kill("SIGINT"));
    });
    expect((await interrupted).code).toBe(130);

    before = recordIds(env);
    let killedPid = 0;
    rmSync(join(cwd, "script.pid"));
    const killed = loopx(channel, ["run", "-n", "5", "slow"], cwd, env, (child) => {
      killedPid = child.pid!;
      // The script outlives loopx (nobody is left to forward anything) and holds its pipes: end its group.
      child.on("exit", () => process.kill(-Number(readFileSync(join(cwd, "script.pid"), "utf8")), "SIGKILL"));
      void waitForNewRun(env, before)
        .then(() => waitFor(() => existsSync(join(cwd, "script.pid")), 10_000))
        .then(() => child.kill("SIGKILL"));
    });
    expect((await killed).signal).toBe("SIGKILL");
    await waitFor(() => !processAlive(killedPid), 5000);
    // The run's guardian closes the record of the run loopx could not end (test/e2e/run/run-guardian.test.ts).
    const killedRecord = join(runsDir(env), `${recordIds(env).sort().at(-1)}.jsonl`);
    expect(await waitFor(() => readFileSync(killedRecord, "utf8").includes('"run.end"'), 8000)).toBe(true);

    const ids = recordIds(env).sort();
    expect(ids).toHaveLength(5);
    const records = ids.map((id) => readEvents(join(runsDir(env), `${id}.jsonl`)));
    for (const [i, events] of records.entries()) {
      for (const event of events) expect(event).toMatchObject({ v: 1, run: ids[i], time: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/) });
      expect(events[0]).toMatchObject({ type: "run.start", projectRoot: cwd, version: expect.any(String), runtime: channel.name });
    }
    const [stop, limit, failed, sigint, sigkill] = records as [any[], any[], any[], any[], any[]];
    expect(stop.map((e) => e.type)).toEqual(["run.start", "iteration.start", "iteration.end", "run.end"]);
    expect(stop[0]).toMatchObject({ target: "s:index", argv: ["run", "s"], maxIterations: null });
    expect(stop[2]).toMatchObject({ n: 1, target: "s:index", exitCode: 0, signal: null, stdoutBytes: 30, output: { result: "done", resultBytes: 4, stop: true } });
    expect(stop[3]).toMatchObject({ type: "run.end", reason: "stopped", exitCode: 0, iterations: 1, target: "s:index" });
    expect(limit[0]).toMatchObject({ maxIterations: 2 });
    expect(limit.at(-1)).toMatchObject({ reason: "limit", exitCode: 0, iterations: 2 });
    expect(failed.at(-2)).toMatchObject({ type: "iteration.end", exitCode: 3, error: expect.stringContaining("exited with code 3") });
    expect(failed.at(-1)).toMatchObject({ reason: "failed", exitCode: 1, target: "f:index" });
    expect(sigint.slice(-2)).toMatchObject([
      { type: "iteration.end", n: 1 },
      { type: "run.end", reason: "interrupted", exitCode: 130, signal: "SIGINT", iterations: 1 },
    ]);
    expect(sigkill.at(-1)).toMatchObject({ type: "run.end", reason: "killed", iterations: 1 });

    const list = await loopx(channel, ["runs", "--json"], cwd, env);
    expect(list.code).toBe(0);
    const rows = list.stdout.trim().split("\n").map((line) => JSON.parse(line));
    expect(rows.map((row) => row.state)).toEqual(["killed", "interrupted", "failed", "limit", "stopped"]);
    expect(rows.map((row) => row.id)).toEqual([...ids].reverse());
    expect(rows[3]).toMatchObject({ iterations: 2, target: "s:loop", project: cwd, exitCode: 0 });

    const table = await loopx(channel, ["runs"], cwd, env);
    expect(table.stdout.split("\n")).toHaveLength(7);
    // This project's runs: no PROJECT column (--all has it).
    expect(table.stdout.split("\n")[0]).toMatch(/^ID +STATE +STARTED +DURATION +ITER +TARGET$/);
    expect(table.stdout).toMatch(new RegExp(`${ids[0]}  stopped +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d  \\d+ms +1 +s:index$`, "m"));

    const show = await loopx(channel, ["runs", "show", ids[1]!.slice(0, 12)], cwd, env);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(`run ${ids[1]} · reached -n 2 · 2 iterations`);
    expect(show.stdout).toMatch(/^1 +s:loop +\d+ms +█+·* +0 +again$/m);
    expect(show.stdout).toMatch(/^2 +s:loop /m);
    const showFailed = await loopx(channel, ["runs", "show", ids[2]!], cwd, env);
    expect(showFailed.stdout).toContain("f:index exited with code 3");
    // A finished run's tail prints its events and returns at once.
    const tail = await loopx(channel, ["runs", "tail", ids[0]!], cwd, env);
    expect(tail.stdout.trim().split("\n").at(-1)).toMatch(/^stopped by s:index · 1 iteration · /);
    const tailJson = await loopx(channel, ["runs", "tail", "--json", ids[3]!], cwd, env);
    expect(tailJson.stdout).toBe(readFileSync(join(runsDir(env), `${ids[3]}.jsonl`), "utf8"));
    const showJson = await loopx(channel, ["runs", "show", "--json", ids[3]!], cwd, env);
    expect(showJson.stdout).toBe(tailJson.stdout);
    const tailCrashed = await loopx(channel, ["runs", "tail", ids[4]!], cwd, env);
    expect(tailCrashed.stdout.trim().split("\n").at(-1)).toMatch(/^killed (by SIGKILL|\(signal unknown\)) · 1 iteration · /);
  });
});

describe.each(CHANNELS)("run records: settings and failures ($name)", (channel) => {
  it("LOOPX_RECORD=0 writes nothing; --log appends the same events; a state dir that cannot be written costs one warning", async () => {
    const cwd = makeProject(WORKFLOWS);
    const env = isolatedEnv();
    expect(await loopx(channel, ["run", "-n", "2", "s:loop"], cwd, { ...env, LOOPX_RECORD: "0" })).toMatchObject({ code: 0, stdout: "", stderr: "" });
    expect(existsSync(join(env.XDG_STATE_HOME!, "loopx"))).toBe(false);

    writeFileSync(join(cwd, "events.log"), "earlier\n");
    expect(await loopx(channel, ["run", "--log", "events.log", "-n", "2", "s:loop"], cwd, env)).toMatchObject({ code: 0, stdout: "", stderr: "" });
    const [id] = recordIds(env);
    const logged = readFileSync(join(cwd, "events.log"), "utf8");
    expect(logged).toBe(`earlier\n${readFileSync(join(runsDir(env), `${id}.jsonl`), "utf8")}`);
    const badLog = await loopx(channel, ["run", "--log", "missing-dir/events.log", "s"], cwd, env);
    expect(badLog).toMatchObject({ code: 1, stdout: "", stderr: expect.stringMatching(/^loopx: cannot open the --log file .*missing-dir\/events\.log: the directory .*missing-dir does not exist\n$/) });

    // The state path is a file where a directory should be (root ignores modes, not ENOTDIR).
    const blocked = join(cwd, "state-is-a-file");
    writeFileSync(blocked, "");
    const warned = await loopx(channel, ["run", "-n", "3", "s:loop"], cwd, { ...env, XDG_STATE_HOME: blocked });
    expect(warned.code).toBe(0);
    expect(warned.stdout).toBe("");
    expect(warned.stderr).toMatch(/^loopx: warning: cannot write the run record .*state-is-a-file\/loopx\/runs\/\w+\.jsonl: not a directory \(ENOTDIR\); the run goes on without it\n$/);
  });
});

describe.each(RUNTIMES)("run records: a read-only state directory ($name, unprivileged when root)", (runtime) => {
  it("costs one warning; the loop runs to its end", async () => {
    const cwd = makeProject(WORKFLOWS);
    const env = isolatedEnv();
    mkdirSync(runsDir(env), { recursive: true });
    giveToUnprivileged(cwd, env.HOME!);
    chmodSync(runsDir(env), 0o555);
    const result = await runLoopxUnprivileged(runtime, ["run", "-n", "3", "s:loop"], { cwd, env });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^loopx: warning: cannot write the run record .*\/loopx\/runs\/\w+\.jsonl: permission denied \(EACCES\); the run goes on without it\n$/);
  });
});

describe("run records: pruning, ids, formats (node)", () => {
  const node = CHANNELS[0]!;

  it("lists long records from their ends: run.start, and run.end or the last iteration", async () => {
    const env = isolatedEnv();
    const dir = runsDir(env);
    mkdirSync(dir, { recursive: true });
    const result = "r".repeat(1000);
    const fake = (id: string, iterations: number, ended: boolean) => {
      const event = (type: string, extra: object) => JSON.stringify({ v: 1, type, time: "2020-01-01T00:00:00.000Z", run: id, ...extra });
      const lines = [event("run.start", { pid: 999999999, projectRoot: "/big", target: "w:index", version: "0.0.1", runtime: "bun", maxIterations: null })];
      for (let n = 1; n <= iterations; n++) {
        lines.push(event("iteration.start", { n, target: "w:index" }));
        lines.push(event("iteration.end", { n, target: "w:index", durationMs: 5, exitCode: 0, signal: null, stdoutBytes: 1020, output: { result, resultBytes: 1000 } }));
      }
      if (ended) lines.push(event("run.end", { reason: "stopped", exitCode: 0, iterations, durationMs: 1234, target: "w:index" }));
      writeFileSync(join(dir, `${id}.jsonl`), `${lines.join("\n")}\n`);
    };
    fake("0zzzzzzzzbig001", 300, true);
    fake("0zzzzzzzzbig002", 301, false);
    // Another project's runs: --all (`loopx runs` lists this project's by default).
    const rows = (await loopx(node, ["runs", "--all", "--json"], ROOT, env)).stdout.trim().split("\n").map((line) => JSON.parse(line));
    expect(rows.map((row) => [row.id, row.state, row.iterations, row.project])).toEqual([
      ["0zzzzzzzzbig002", "crashed", 301, "/big"],
      ["0zzzzzzzzbig001", "stopped", 300, "/big"],
    ]);
    const show = await loopx(node, ["runs", "show", "0zzzzzzzzbig002"], ROOT, env);
    expect(show.stdout.match(/^\d+ +w:index +5ms /gm)).toHaveLength(301);
  });

  it("keeps the newest 200 records; unknown ids, ambiguous prefixes and newer formats are one line", async () => {
    const cwd = makeProject(WORKFLOWS);
    const env = isolatedEnv();
    const dir = runsDir(env);
    mkdirSync(dir, { recursive: true });
    const old = (i: number) => `000000${String(i).padStart(3, "0")}aaaaaa`;
    for (let i = 0; i < 200; i++) {
      writeFileSync(join(dir, `${old(i)}.jsonl`), `${JSON.stringify({ v: 1, type: "run.start", time: "2001-01-01T00:00:00.000Z", run: old(i), pid: 999999999, projectRoot: "/nowhere", target: "x:index", version: "0.0.1", runtime: "node", maxIterations: null })}\n`);
    }
    writeFileSync(join(dir, "notes.txt"), "not a record");
    expect((await loopx(node, ["run", "s"], cwd, env)).code).toBe(0);
    const ids = recordIds(env).sort();
    expect(ids).toHaveLength(200);
    expect(ids).not.toContain(old(0));
    expect(ids).toContain(old(1));
    expect(existsSync(join(dir, "notes.txt"))).toBe(true);

    const rows = (await loopx(node, ["runs", "--all", "--limit", "200", "--json"], cwd, env)).stdout.trim().split("\n").map((line) => JSON.parse(line));
    expect(rows).toHaveLength(200);
    expect(rows[0]).toMatchObject({ state: "stopped", project: cwd });
    expect(rows[1]).toMatchObject({ id: old(199), state: "crashed" });

    writeFileSync(join(dir, "zzzzzzzzzzzzzzz.jsonl"), '{"v":2,"type":"run.begin","time":"2100-01-01T00:00:00.000Z","run":"zzzzzzzzzzzzzzz"}\n');
    const table = await loopx(node, ["runs"], cwd, env);
    expect(table.stdout).toContain("zzzzzzzzzzzzzzz  recorded by a newer loopx (record format v2; this loopx reads v1)");
    expect(await loopx(node, ["runs", "show", "zzz"], cwd, env)).toMatchObject({ code: 1, stdout: "", stderr: "loopx: run zzzzzzzzzzzzzzz was recorded by a newer loopx (record format v2; this loopx reads v1)\n" });
    expect(await loopx(node, ["runs", "show", "nope"], cwd, env)).toMatchObject({ code: 1, stdout: "", stderr: `loopx: no run "nope" in ${dir}\n` });
    expect(await loopx(node, ["runs", "show", "000000"], cwd, env)).toMatchObject({ code: 1, stdout: "", stderr: expect.stringMatching(/^loopx: run id "000000" is ambiguous: it starts 199 runs \(.*\)\n$/) });
    // No id: this project's newest run.
    expect(await loopx(node, ["runs", "show"], cwd, env)).toMatchObject({ code: 0, stderr: "", stdout: expect.stringMatching(/^run \w+ · stopped by s:index · /) });
    expect(await loopx(node, ["runs", "--bogus"], cwd, env)).toMatchObject({ code: 1, stdout: "", stderr: expect.stringMatching(/^loopx: unknown option "--bogus" for 'loopx runs'\n$/) });
    const help = await loopx(node, ["runs", "-h"], cwd, env);
    expect(help).toMatchObject({ code: 0, stderr: "", stdout: expect.stringContaining("loopx runs tail [<id>] [--json]") });
    expect(help.stdout).toContain("LOOPX_RECORD=0");
    expect((await loopx(node, ["-h"], cwd, env)).stdout).toMatch(/^ {2}runs \[--json\] \[--all\] \[--limit <c>\] \[--state <s>\] \[--since <d>\]$/m);
    expect((await loopx(node, ["run", "-h"], cwd, env)).stdout).toMatch(/--log <file>[\s\S]*LOOPX_PROGRESS=0[\s\S]*NO_COLOR/);
    const empty = isolatedEnv();
    expect(await loopx(node, ["runs"], cwd, empty)).toMatchObject({ code: 0, stdout: `no runs of ${cwd} recorded in ${runsDir(empty)} (--all: every project's)\n`, stderr: "" });
    expect(await loopx(node, ["runs", "--json"], cwd, empty)).toMatchObject({ code: 0, stdout: "", stderr: "" });
    expect(await loopx(node, ["runs", "tail"], cwd, empty)).toMatchObject({ code: 1, stdout: "", stderr: expect.stringMatching(/^loopx: no runs of .* in .*\n$/) });
  });
});

describe.each(CHANNELS)("loopx runs on live runs ($name)", (channel) => {
  it("two runs in parallel: runs shows both running; runs tail <id> and runs tail (this project's latest) follow each to its end", async () => {
    const a = makeProject(WORKFLOWS);
    const b = makeProject(WORKFLOWS);
    const env = isolatedEnv();
    const runA = loopx(channel, ["run", "-n", "4", "tick"], a, env);
    const idA = await waitForNewRun(env, []);
    const runB = loopx(channel, ["run", "-n", "3", "tick"], b, env);
    const idB = await waitForNewRun(env, [idA]);

    const list = await loopx(channel, ["runs", "--all", "--json"], a, env);
    const rows = list.stdout.trim().split("\n").map((line) => JSON.parse(line));
    expect(rows.map((row) => [row.id, row.state, row.project])).toEqual([
      [idB, "running", b],
      [idA, "running", a],
    ]);
    const show = await loopx(channel, ["runs", "show", idA], a, env);
    expect(show.stdout).toMatch(/^run \w+ · running · /);

    const timed = (result: Promise<RunResult>) => result.then((value) => ({ ...value, at: Date.now() }));
    const tails = Promise.all([timed(loopx(channel, ["runs", "tail", idA], b, env)), timed(loopx(channel, ["runs", "tail"], b, env))]);
    for (const project of [a, b]) writeFileSync(join(project, "go"), "");
    const [tailA, tailB] = await tails;
    const [endA, endB] = await Promise.all([runA, runB]);
    expect(endA.code).toBe(0);
    expect(endB.code).toBe(0);
    expect(tailA.code).toBe(0);
    expect(tailA.stdout).toMatch(new RegExp(`^run ${idA} started .* · tick:index · ${a} · pid \\d+\n`));
    expect(tailA.stdout.match(/^iteration \d\/4 · tick:index · /gm)).toHaveLength(4);
    expect(tailA.stdout.match(/^ {2}tick:index [\d.]+m?s · exit 0 · tick$/gm)).toHaveLength(4);
    expect(tailA.stdout).toMatch(/\nreached -n 4 · 4 iterations · [\d.]+m?s\n$/);
    expect(tailB.stdout).toContain(`run ${idB} started`);
    expect(tailB.stdout).toMatch(/\nreached -n 3 · 3 iterations · [\d.]+m?s\n$/);
    // Followed live: each tail was still running when its run wrote its last event.
    const lastA = readEvents(join(runsDir(env), `${idA}.jsonl`)).at(-1)!;
    const lastB = readEvents(join(runsDir(env), `${idB}.jsonl`)).at(-1)!;
    expect(lastA).toMatchObject({ type: "run.end", reason: "limit" });
    expect(tailA.at).toBeGreaterThanOrEqual(Date.parse(lastA.time));
    expect(tailB.at).toBeGreaterThanOrEqual(Date.parse(lastB.time));
  });
});
