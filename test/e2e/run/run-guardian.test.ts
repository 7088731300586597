/**
 * The run's guardian (loopx's own addition): when loopx dies without ending its run —
 * SIGKILL, a fatal signal (SIGSEGV, SIGABRT) — a process started once per run ends what is left
 * of the run (the script's group and every process carrying LOOPX_RUN_ID: SIGTERM, 5 s grace,
 * SIGKILL), removes LOOPX_TMPDIR and closes the record with `run.end`. Real process trees: a
 * script ignoring SIGTERM (and its in-group sleep), a `setsid` child and a double-forked daemon,
 * under node, bun and the standalone binary. Zombies count as dead (this sandbox's PID 1 may not
 * reap orphans).
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readlinkSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { expect, it } from "vitest";
import { BIN, CLIS, NODE, carriersOf, isolatedEnv, linuxOnly, makeProject, processAlive, runCommand, scratchEnv, sh, sleep, waitFor, type Cli } from "../../helpers.js";

/** Iteration 1 jumps to `long`, which starts the tree, says `ready` and waits (ignoring SIGTERM). */
const TREE = {
  ".loopx/w/index.sh": sh(`echo '{"goto": "long"}'`),
  ".loopx/w/long.sh": sh(`cd "$LOOPX_PROJECT_ROOT"
echo "$LOOPX_RUN_ID" > run.id
echo "$LOOPX_TMPDIR" > tmpdir.txt
echo $PPID > loopx.pid
echo $$ > script.pid
trap '' TERM
setsid bash -c 'echo $$ > setsid.pid; exec sleep 1000' &
( setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > daemon.pid )
while [ ! -s setsid.pid ] || [ ! -s daemon.pid ]; do sleep 0.02; done
: > ready
sleep 1000`),
};

function read(cwd: string, name: string): string {
  return readFileSync(join(cwd, name), "utf8").trim();
}

async function waitReady(cwd: string): Promise<void> {
  expect(await waitFor(() => existsSync(join(cwd, "ready")), 30_000), "the script never got ready").toBe(true);
}

/** The run's record, as `loopx runs --json` summarizes it. */
function summary(env: Record<string, string>, cwd: string, id: string): Record<string, unknown> | undefined {
  const listed = spawnSync(NODE, [BIN, "runs", "--json"], { cwd, env, encoding: "utf8" });
  return listed.stdout
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .find((run) => run.id === id);
}

function recordPath(env: Record<string, string>, id: string): string {
  return join(env.XDG_STATE_HOME!, "loopx", "runs", `${id}.jsonl`);
}

/** The guardian of run `id` while it waits: the shell whose command line names the run. */
function guardianOf(id: string): number | undefined {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "latin1");
      if (cmdline.includes("--loopx-guardian") && cmdline.includes(`"run":"${id}"`) && processAlive(Number(entry))) return Number(entry);
    } catch {
      // gone
    }
  }
  return undefined;
}

/** pid, pgid, sid and controlling terminal of a process (fields 1, 5, 6, 7 of /proc/<pid>/stat). */
function ids(pid: number): { pgid: number; sid: number; tty: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { pgid: Number(fields[2]), sid: Number(fields[3]), tty: Number(fields[4]) };
}

function startRun(runner: Cli, cwd: string, env: Record<string, string>) {
  return runCommand(runner.exe, [...runner.prefix, "run", "w"], { cwd, env, timeoutMs: 60_000 });
}

/** What the record may say for each way of killing loopx (the signal, when the guardian learned it). */
const ENDINGS = {
  SIGKILL: ["killed"],
  SIGSEGV: ["crashed", "killed"],
  SIGABRT: ["crashed", "killed"],
} as const;

linuxOnly.concurrent.each(CLIS)("the guardian ($name)", (runner) => {
  it.concurrent.for(Object.keys(ENDINGS) as Array<keyof typeof ENDINGS>)(
    "loopx killed by %s: within 6 s no process carries the run's id, LOOPX_TMPDIR is gone, the record says how it ended",
    async (signal, { expect }) => {
      const cwd = makeProject(TREE);
      const env = isolatedEnv();
      const running = startRun(runner, cwd, env);
      await waitReady(cwd);
      const id = read(cwd, "run.id");
      const tmp = read(cwd, "tmpdir.txt");
      const pids = ["script", "setsid", "daemon"].map((name) => Number(read(cwd, `${name}.pid`)));
      expect(carriersOf("LOOPX_RUN_ID", id).length).toBeGreaterThanOrEqual(3);
      await sleep(1500); // a run that ran for seconds must not be recorded as lasting a few ms
      process.kill(Number(read(cwd, "loopx.pid")), signal);
      const killedAt = Date.now();
      const result = await running;
      expect(result.signal).toBe(signal);
      // The script ignores SIGTERM: its group goes at the end of the 5 s grace.
      // A process being killed loses its environment before it is a zombie, so the window ends
      // only when no process carries the id and each known pid is dead too.
      const gone = () => carriersOf("LOOPX_RUN_ID", id).length === 0 && pids.every((pid) => !processAlive(pid));
      expect(await waitFor(gone, 6000 - (Date.now() - killedAt), 50), `left: ${carriersOf("LOOPX_RUN_ID", id).join(", ")}`).toBe(true);
      for (const pid of pids) expect(processAlive(pid), `process ${pid} survived`).toBe(false);
      expect(Date.now() - killedAt).toBeGreaterThanOrEqual(4500); // the grace was given, not skipped
      expect(await waitFor(() => !existsSync(tmp), 1000), `${tmp} is left`).toBe(true);
      expect(await waitFor(() => readFileSync(recordPath(env, id), "utf8").includes('"run.end"'), 2000)).toBe(true);
      const run = summary(env, cwd, id)!;
      expect(ENDINGS[signal] as readonly string[]).toContain(run.state);
      if (run.state === "crashed") expect(run.ending).toBe(`crashed (${signal})`);
      if (run.state === "killed") expect([`killed by ${signal}`, "killed (signal unknown)"]).toContain(run.ending);
      expect(run.iterations).toBe(2);
      expect(run.durationMs as number).toBeGreaterThanOrEqual(1500);
      expect(run.durationMs as number).toBeLessThan(60_000);
      expect(readFileSync(recordPath(env, id), "utf8").match(/"run\.end"/g)).toHaveLength(1);
    },
  );

  it.concurrent("a normal end: the guardian goes at once with no work — a daemon carrying the run's id keeps running, one run.end", async ({ expect }) => {
    const cwd = makeProject({
      ".loopx/w/index.sh": sh(`cd "$LOOPX_PROJECT_ROOT"
echo "$LOOPX_RUN_ID" > run.id
( setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > daemon.pid )
$LOOPX_BIN output --stop`),
    });
    const env = isolatedEnv();
    const result = await startRun(runner, cwd, env);
    const daemon = Number(read(cwd, "daemon.pid"));
    try {
      expect(result.code, result.stderr).toBe(0);
      const id = read(cwd, "run.id");
      expect(await waitFor(() => guardianOf(id) === undefined, 2000)).toBe(true);
      await sleep(1000);
      expect(processAlive(daemon), "the guardian ended a daemon of a run that ended normally").toBe(true);
      expect(readFileSync(recordPath(env, id), "utf8").match(/"run\.end"/g)).toHaveLength(1);
      expect(summary(env, cwd, id)!.state).toBe("stopped");
    } finally {
      process.kill(daemon, "SIGKILL");
    }
  });

  it.concurrent("the guardian: its own session, no terminal, not in loopx's or the script's group, no LOOPX_RUN_ID, nothing of loopx's stdio", async ({ expect }) => {
    const cwd = makeProject(TREE);
    const env = isolatedEnv();
    const running = startRun(runner, cwd, env);
    await waitReady(cwd);
    const id = read(cwd, "run.id");
    const loopx = Number(read(cwd, "loopx.pid"));
    const guardian = guardianOf(id);
    expect(guardian).toBeDefined();
    const own = ids(guardian!);
    expect(own.sid).toBe(guardian);
    expect(own.pgid).toBe(guardian);
    expect(own.tty).toBe(0);
    expect(own.pgid).not.toBe(ids(loopx).pgid);
    expect(own.pgid).not.toBe(ids(Number(read(cwd, "script.pid"))).pgid);
    expect(readFileSync(`/proc/${guardian}/environ`, "latin1")).not.toContain("LOOPX_RUN_ID=");
    expect(readlinkSync(`/proc/${guardian}/fd/1`)).toBe("/dev/null");
    expect(readlinkSync(`/proc/${guardian}/fd/2`)).toBe("/dev/null");
    // Neither loopx's stdout nor its stderr (pipes to this test) is held by the guardian.
    const loopxStdio = [readlinkSync(`/proc/${loopx}/fd/1`), readlinkSync(`/proc/${loopx}/fd/2`)];
    expect(loopxStdio[0]).toMatch(/^(pipe|socket):/);
    for (const fd of readdirSync(`/proc/${guardian}/fd`)) expect(loopxStdio).not.toContain(readlinkSync(`/proc/${guardian}/fd/${fd}`));
    expect(readlinkSync(`/proc/${guardian}/cwd`)).toBe("/");
    process.kill(loopx, "SIGINT");
    const result = await running;
    expect(result.code).toBe(130);
    expect(await waitFor(() => guardianOf(id) === undefined, 2000)).toBe(true);
    expect(summary(env, cwd, id)!.state).toBe("interrupted");
  });

  it.concurrent("under Node the guardian's shell makes the scripts' stdout FIFOs (loopx starts no mkfifo); nothing of them is left; its variable reaches no hook", async ({ expect }) => {
    const cwd = makeProject({
      ".loopx/w/index.sh": sh(`readlink /proc/$$/fd/1 > "$LOOPX_PROJECT_ROOT/stdout.txt"
echo '{"result": "through /dev/stdout", "stop": true}' > /dev/stdout`),
    });
    // A mkfifo first on PATH that notes its arguments: the guardian's shell finds it by name
    // (loopx's own is /usr/bin/mkfifo by its full path). Under Bun, loopx starts its own (vfork).
    const bin = join(cwd, "bin");
    mkdirSync(bin);
    const log = join(cwd, "mkfifo.log");
    writeFileSync(join(bin, "mkfifo"), `#!/bin/sh\necho "$@" >> "${log}"\nexec /usr/bin/mkfifo "$@"\n`, { mode: 0o755 });
    const { env, tmp } = scratchEnv();
    env.PATH = `${bin}:${env.PATH}`;
    const hookEnv = join(cwd, "hook-env.txt");
    const result = await runCommand(runner.exe, [...runner.prefix, "run", "--on-end", `env > '${hookEnv}'`, "w"], { cwd, env, timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe("");
    const fifo = read(cwd, "stdout.txt");
    expect(fifo).toMatch(new RegExp(`^${tmp}/loopx-stdout-\\w+/fifo-[12] \\(deleted\\)$`));
    const made = () => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : []);
    if (runner.name === "node") expect(made()).toEqual([`-m 600 ${dirname(fifo)}/fifo-1 ${dirname(fifo)}/fifo-2`]);
    else expect(made()).toEqual([]);
    expect(readFileSync(hookEnv, "utf8")).toContain("LOOPX_END_RUN_ID=");
    expect(readFileSync(hookEnv, "utf8")).not.toContain("LOOPX_GUARDIAN_FIFOS");
    // A run that starts no script removes the directory it gave its guardian.
    const none = await runCommand(runner.exe, [...runner.prefix, "run", "-n", "0", "w"], { cwd, env, timeoutMs: 60_000 });
    expect(none.code, none.stderr).toBe(0);
    expect(await waitFor(() => readdirSync(tmp).every((name) => !name.startsWith("loopx-stdout-")), 2000), readdirSync(tmp).join(" ")).toBe(true);
  });

  it.concurrent("`loopx run … | cat` ends when loopx is killed: the guardian, still at work, holds no pipe of the pipeline", async ({ expect }) => {
    const cwd = makeProject(TREE);
    const env = isolatedEnv();
    const quoted = [runner.exe, ...runner.prefix].map((arg) => `'${arg}'`).join(" ");
    const pipeline = spawn("bash", ["-c", `${quoted} run w 2>/dev/null | cat`], { cwd, env, stdio: ["ignore", "pipe", "ignore"] });
    const ended = new Promise<number>((resolve) => pipeline.on("close", () => resolve(Date.now())));
    await waitReady(cwd);
    const id = read(cwd, "run.id");
    process.kill(Number(read(cwd, "loopx.pid")), "SIGKILL");
    const killedAt = Date.now();
    const endedAt = await ended;
    expect(endedAt - killedAt).toBeLessThan(2000);
    // The guardian is still giving the TERM-ignoring script its grace when the pipeline has ended.
    expect(carriersOf("LOOPX_RUN_ID", id).length).toBeGreaterThan(0);
    expect(await waitFor(() => carriersOf("LOOPX_RUN_ID", id).length === 0, 6000 - (Date.now() - killedAt), 50)).toBe(true);
  });
});
