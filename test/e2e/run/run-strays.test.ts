/**
 * Guard rails (loopx's own additions): no stray process after an interrupted run, and
 * the time limits. Real process trees that leave the script's process group — a `setsid` child
 * (still holding the script's stdout), a node child spawned `detached`, a double-fork daemon, and
 * (in some cases) a child that ignores SIGTERM and needs the SIGKILL — under node, bun and the
 * standalone binary; the programmatic API under node and bun. Every stray must be gone after
 * SIGINT, SIGTERM, --timeout, --max-time, a failing script, abort, return()/break and
 * RunOptions.timeout; a normal end that leaves a daemon warns and kills nothing; a process that
 * dropped LOOPX_RUN_ID (`env -u LOOPX_RUN_ID`) is never touched (the test kills it at the end).
 *
 * Zombies count as dead (this sandbox's PID 1 may not reap orphans). The full 5 s grace is only
 * paid where a stray ignores SIGTERM.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BIN, CLIS, NODE, ROOT, RUNTIMES, isolatedEnv, makeProject, makeSymlink, processAlive, runCommand, sh, waitFor, type RunResult } from "../../helpers.js";


const RUNNERS = CLIS;

/** Processes the tests deliberately leave running (dropped LOOPX_RUN_ID, daemons of a normal end). */
const leftRunning = new Set<number>();
afterAll(() => {
  for (const pid of leftRunning) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
});

const STRAYS = ["setsid", "detached", "daemon"] as const;

/**
 * A script that starts strays outside its group, writes their pids to <name>.pid in the project
 * root, touches `ready`, then does `then` (sleep, fail, or print output).
 */
function strayScript(options: { trapping?: boolean; then: string }): string {
  const trapping = options.trapping
    ? `setsid bash -c 'trap "" TERM; echo $$ > trapping.pid; exec sleep 1000' </dev/null >/dev/null 2>&1 &\n`
    : "";
  return sh(`cd "$LOOPX_PROJECT_ROOT"
# A new session that keeps the script's stdout open.
setsid bash -c 'echo $$ > setsid.pid; exec sleep 1000' &
# A node child spawned detached.
node -e 'const c = require("child_process").spawn("sleep", ["1000"], { detached: true, stdio: "ignore" }); require("fs").writeFileSync("detached.pid", String(c.pid)); c.unref();'
# A double-fork daemon: the middle process exits at once.
( setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > daemon.pid )
${trapping}# A daemon started on purpose: it drops the run's id.
env -u LOOPX_RUN_ID setsid bash -c 'echo $$ > free.pid; exec sleep 1000' </dev/null >/dev/null 2>&1 &
for f in setsid detached daemon free${options.trapping ? " trapping" : ""}; do
  while [ ! -s $f.pid ]; do sleep 0.02; done
done
: > ready
${options.then}
`);
}

function readPids(cwd: string, names: readonly string[]): Record<string, number> {
  const pids: Record<string, number> = {};
  for (const name of names) {
    const file = join(cwd, `${name}.pid`);
    if (existsSync(file)) pids[name] = Number(readFileSync(file, "utf8").trim());
  }
  return pids;
}

/** Checks the strays are dead and the free daemon alive (then queued for killing). */
function expectStraysGone(cwd: string, trapping: boolean): void {
  const names = trapping ? [...STRAYS, "trapping"] : [...STRAYS];
  const pids = readPids(cwd, [...names, "free"]);
  for (const name of names) {
    expect(pids[name], `${name}.pid`).toBeGreaterThan(0);
    expect(processAlive(pids[name]!), `${name} stray ${pids[name]} survived`).toBe(false);
  }
  expect(pids.free).toBeGreaterThan(0);
  leftRunning.add(pids.free!);
  expect(processAlive(pids.free!), "the process without LOOPX_RUN_ID was killed").toBe(true);
  // It still carries no LOOPX_RUN_ID, and it left the script's group: only the id decided.
  expect(readFileSync(`/proc/${pids.free}/environ`, "latin1")).not.toContain("LOOPX_RUN_ID=");
}

interface Started {
  child: ChildProcess;
  startedAt: number;
  result: Promise<RunResult & { exitedAt: number }>;
}

function start(runner: (typeof RUNNERS)[number], args: string[], cwd: string): Started {
  let child: ChildProcess | undefined;
  const startedAt = Date.now();
  const result = runCommand(runner.exe, [...runner.prefix, ...args], { cwd, env: isolatedEnv(), timeoutMs: 40_000, onSpawn: (c) => (child = c) }).then((r) => ({
    ...r,
    exitedAt: Date.now(),
  }));
  return { child: child!, startedAt, result };
}

async function waitReady(cwd: string): Promise<void> {
  expect(await waitFor(() => existsSync(join(cwd, "ready")), 20_000), "the script never got ready").toBe(true);
}

describe.concurrent.each(RUNNERS)("strays and time limits: CLI ($name)", (runner) => {
  it.concurrent.for([
    ["SIGINT", 130, true],
    ["SIGTERM", 143, false],
  ] as const)("%s: every stray is gone when loopx exits %i; the one without LOOPX_RUN_ID is untouched", async ([signal, code, trapping], { expect }) => {
    const cwd = makeProject({ ".loopx/w/index.sh": strayScript({ trapping, then: "sleep 60" }) });
    const started = start(runner, ["run", "w"], cwd);
    await waitReady(cwd);
    const sentAt = Date.now();
    started.child.kill(signal);
    const result = await started.result;
    expect(result.code, result.stderr).toBe(code);
    expect(result.stdout).toBe("");
    expect(result.stderr).not.toContain("warning");
    // A stray ignoring SIGTERM is SIGKILLed when the group's 5 s grace ends: still ~5 s in all.
    expect(result.exitedAt - sentAt).toBeLessThan(trapping ? 9000 : 4500);
    expectStraysGone(cwd, trapping);
  });

  it.concurrent("--timeout 2 on a script that sleeps 60 s: exit 124 in 2–12 s, one line naming the script and the limit, strays gone", async ({ expect }) => {
    const trapping = runner.name === "node";
    const cwd = makeProject({ ".loopx/w/index.sh": strayScript({ trapping, then: "sleep 60" }) });
    const started = start(runner, ["run", "--timeout", "2", "w"], cwd);
    const result = await started.result;
    const elapsed = result.exitedAt - started.startedAt;
    expect(result.code, result.stderr).toBe(124);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe("loopx: script w:index timed out after 2s\n");
    expect(elapsed).toBeGreaterThanOrEqual(2000);
    expect(elapsed).toBeLessThan(12_000);
    expectStraysGone(cwd, trapping);
  });

  it.concurrent("--max-time over several scripts: exit 124 naming the running script, strays of every script gone", async ({ expect }) => {
    const cwd = makeProject({
      ".loopx/w/index.sh": sh('echo index >> "$LOOPX_PROJECT_ROOT/trace"\necho \'{"goto": "b"}\''),
      ".loopx/w/b.sh": strayScript({ then: 'echo b >> "$LOOPX_PROJECT_ROOT/trace"\nsleep 60' }),
    });
    // 3 s: room for w:index to end first on a loaded box (w:b sleeps 60 s).
    const started = start(runner, ["run", "--max-time", "3s", "w"], cwd);
    const result = await started.result;
    expect(result.code, result.stderr).toBe(124);
    expect(result.stderr).toBe("loopx: script w:b timed out: the run's time limit of 3s was reached\n");
    expect(result.exitedAt - started.startedAt).toBeLessThan(12_000);
    expectStraysGone(cwd, false);
  });

  it.concurrent("a failing script: exit 1 and its strays are gone", async ({ expect }) => {
    const cwd = makeProject({ ".loopx/w/index.sh": strayScript({ then: "exit 3" }) });
    const result = await start(runner, ["run", "w"], cwd).result;
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("loopx: script w:index exited with code 3\n");
    expectStraysGone(cwd, false);
  });

  it.concurrent("a normal end that leaves a daemon: one warning line with count, pids and commands; nothing is killed", async ({ expect }) => {
    const cwd = makeProject({
      ".loopx/w/index.sh": sh(`cd "$LOOPX_PROJECT_ROOT"
( setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > d1.pid )
node -e 'const c = require("child_process").spawn("sleep", ["1001"], { detached: true, stdio: "ignore" }); require("fs").writeFileSync("d2.pid", String(c.pid)); c.unref();'
env -u LOOPX_RUN_ID setsid sleep 1002 </dev/null >/dev/null 2>&1 &
echo $! > free.pid
$LOOPX_BIN output --stop`),
    });
    const result = await start(runner, ["run", "w"], cwd).result;
    const pids = readPids(cwd, ["d1", "d2", "free"]);
    for (const pid of Object.values(pids)) leftRunning.add(pid);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe(
      `loopx: warning: 2 processes started by this run are still running: ${[
        [pids.d1, "sleep 1000"],
        [pids.d2, "sleep 1001"],
      ]
        .sort((a, b) => Number(a[0]) - Number(b[0]))
        .map(([pid, command]) => `${pid} (${command})`)
        .join(", ")} (start daemons with env -u LOOPX_RUN_ID to silence this)\n`,
    );
    for (const [name, pid] of Object.entries(pids)) expect(processAlive(pid), name).toBe(true);
  });

  it.concurrent("--max-time expiring while a script ignores SIGTERM and then exits 0 with a goto: no further script starts", async ({ expect }) => {
    const cwd = makeProject({
      ".loopx/w/index.sh": sh(`trap 'echo got-TERM >> "$LOOPX_PROJECT_ROOT/trace"' TERM
echo index >> "$LOOPX_PROJECT_ROOT/trace"
sleep 5 & wait $!; wait $!
echo '{"goto": "b"}'`),
      ".loopx/w/b.sh": sh('echo b >> "$LOOPX_PROJECT_ROOT/trace"'),
    });
    // 2 s: room for the script to set its trap first on a loaded box.
    const result = await start(runner, ["run", "--max-time", "2s", "w"], cwd).result;
    expect(result.code, result.stderr).toBe(124);
    expect(result.stderr).toBe("loopx: script w:index timed out: the run's time limit of 2s was reached\n");
    expect(readFileSync(join(cwd, "trace"), "utf8")).toBe("index\ngot-TERM\n");
  });
});

describe.concurrent.each(RUNTIMES)("strays and time limits: API ($name)", (runtime) => {
  /** A consumer project: consumer.mjs + node_modules/loopx → this package. */
  function consumer(source: string, files: Record<string, string>): string {
    const dir = makeProject({
      "consumer.mjs": `import { run, runPromise } from "loopx";
import { existsSync, readFileSync } from "node:fs";
const alive = (pid) => { try { return !/^State:\\s+[ZX]/m.test(readFileSync("/proc/" + pid + "/status", "utf8")); } catch { return false; } };
const pid = (name) => Number(readFileSync(name + ".pid", "utf8"));
const strays = () => ["setsid", "detached", "daemon"].filter((name) => alive(pid(name)));
const ready = async () => { while (!existsSync("ready")) await new Promise((r) => setTimeout(r, 20)); };
${source}`,
      ...files,
    });
    makeSymlink(ROOT, join(dir, "node_modules", "loopx"));
    return dir;
  }

  async function runConsumer(dir: string): Promise<any> {
    const result = await runCommand(runtime.exe, ["consumer.mjs"], { cwd: dir, env: isolatedEnv(), timeoutMs: 30_000 });
    const last = result.stdout.trim().split("\n").pop() ?? "";
    try {
      return { ...JSON.parse(last), code: result.code, stderr: result.stderr };
    } catch {
      throw new Error(`consumer printed no JSON (code ${result.code}):\n${result.stdout}\n${result.stderr}`);
    }
  }

  const SLEEPER = { ".loopx/w/index.sh": strayScript({ then: "sleep 60" }) };

  it.concurrent("abort: the strays are gone when the loop rejects", async ({ expect }) => {
    const dir = consumer(
      `const controller = new AbortController();
const pending = runPromise("w", { signal: controller.signal }).then(() => "resolved", (e) => e.name);
await ready();
controller.abort();
const outcome = await pending;
console.log(JSON.stringify({ outcome, left: strays() }));`,
      SLEEPER,
    );
    const result = await runConsumer(dir);
    expect(result.outcome).toBe("AbortError");
    expect(result.left).toEqual([]);
    expectStraysGone(dir, false);
  });

  it.concurrent("return() mid-iteration (as break does): the strays are gone when return() resolves", async ({ expect }) => {
    const dir = consumer(
      `const gen = run("w");
const pending = gen.next().then(() => "next settled", (e) => e.name);
await ready();
await gen.return();
const left = strays();
console.log(JSON.stringify({ left, next: await pending }));`,
      SLEEPER,
    );
    const result = await runConsumer(dir);
    expect(result.left).toEqual([]);
    expectStraysGone(dir, false);
  });

  it.concurrent("RunOptions.timeout: rejects with a TimeoutError naming the script and the limit, after the strays are gone", async ({ expect }) => {
    const dir = consumer(
      `const startedAt = Date.now();
const error = await runPromise("w", { timeout: 5000 }).then(() => undefined, (e) => e);
console.log(JSON.stringify({ name: error?.name, message: error?.message, ready: existsSync("ready"), left: strays(), elapsed: Date.now() - startedAt }));`,
      SLEEPER,
    );
    const result = await runConsumer(dir);
    expect(result.name).toBe("TimeoutError");
    expect(result.message).toBe("script w:index timed out after 5s");
    // The limit is 5 s, not less: under a full CI run, starting the four strays (one of them a
    // node process) took longer than 1.5 s, and a limit that fires first proves nothing.
    expect(result.ready).toBe(true);
    expect(result.left).toEqual([]);
    expect(result.elapsed).toBeGreaterThanOrEqual(5000);
    expect(result.elapsed).toBeLessThan(15_000);
    expectStraysGone(dir, false);
  });

  it.concurrent("RunOptions.maxTime expiring between two scripts (the consumer holds the loop at a yield): the next script never starts", async ({ expect }) => {
    const dir = consumer(
      `const gen = run("w", { maxTime: 1500 });
const first = await gen.next();
await new Promise((r) => setTimeout(r, 2500));
const error = await gen.next().then(() => undefined, (e) => e);
console.log(JSON.stringify({ first: first.value, name: error?.name, message: error?.message, trace: readFileSync("trace", "utf8") }));`,
      {
        ".loopx/w/index.sh": sh('echo index >> "$LOOPX_PROJECT_ROOT/trace"\necho \'{"goto": "b"}\''),
        ".loopx/w/b.sh": sh('echo b >> "$LOOPX_PROJECT_ROOT/trace"'),
      },
    );
    const result = await runConsumer(dir);
    expect(result.first).toEqual({ goto: "b" });
    expect(result.name).toBe("TimeoutError");
    expect(result.message).toBe("the run's time limit of 1s500ms was reached after script w:index");
    expect(result.trace).toBe("index\n");
  });

  it.concurrent.for([
    ["timeout", 0],
    ["timeout", -5],
    ["maxTime", "1000"],
    ["maxTime", Number.POSITIVE_INFINITY],
  ] as const)("RunOptions.%s = %s is an error before any script runs", async ([option, value], { expect }) => {
    const dir = consumer(
      `const error = await runPromise("w", { ${option}: ${typeof value === "string" ? JSON.stringify(value) : String(value)} }).then(() => undefined, (e) => e);
console.log(JSON.stringify({ message: error?.message, ran: existsSync("trace") }));`,
      { ".loopx/w/index.sh": sh('echo ran >> "$LOOPX_PROJECT_ROOT/trace"\n$LOOPX_BIN output --stop') },
    );
    const result = await runConsumer(dir);
    expect(result.message).toMatch(new RegExp(`^${option} must be a positive number of milliseconds, got `));
    expect(result.ran).toBe(false);
  });
});

describe.concurrent("time limit options: usage errors (node)", () => {
  it.concurrent.for([
    [["--timeout", "0", "w"], /--timeout: "0" is not a duration: it must be longer than 0/],
    [["--timeout", "-5", "w"], /--timeout: "-5" is not a duration: it is negative/],
    [["--timeout", "", "w"], /--timeout: "" is not a duration: it is empty/],
    [["--max-time", "5x", "w"], /--max-time: "5x" is not a duration/],
    [["--max-time", "30m1h", "w"], /--max-time: "30m1h" is not a duration: units go largest first/],
    [["--timeout", "1", "--timeout", "2", "w"], /--timeout given more than once/],
    [["--max-time=1m", "--max-time", "2m", "w"], /--max-time given more than once/],
    [["w", "--timeout"], /option --timeout needs a value/],
  ] as const)("run %j: exit 1, one line, no script runs", async ([args, pattern], { expect }) => {
    const cwd = makeProject({ ".loopx/w/index.sh": sh('echo ran >> "$LOOPX_PROJECT_ROOT/trace"\n$LOOPX_BIN output --stop') });
    const result = await runCommand(NODE, [BIN, "run", ...args], { cwd, env: isolatedEnv() });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^loopx: [^\n]*\n$/);
    expect(result.stderr).toMatch(pattern);
    expect(existsSync(join(cwd, "trace"))).toBe(false);
  });

  it.concurrent("--timeout and --max-time that do not expire change nothing", async ({ expect }) => {
    const cwd = makeProject({ ".loopx/w/index.sh": sh('echo ran >> "$LOOPX_PROJECT_ROOT/trace"') });
    const result = await runCommand(NODE, [BIN, "run", "--timeout", "1h", "--max-time=1h30m", "-n", "3", "w"], { cwd, env: isolatedEnv() });
    expect(result).toMatchObject({ code: 0, stdout: "", stderr: "" });
    expect(readFileSync(join(cwd, "trace"), "utf8")).toBe("ran\nran\nran\n");
  });
});
