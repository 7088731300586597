/**
 * The library keeps the promise too: while `run()` is going, SIGINT, SIGTERM and SIGHUP
 * to the host end the run's scripts without changing what the host does with the signal (no
 * handler: it still dies by the signal; a handler: it still runs, and the loop rejects with an
 * AbortError); what no handler sees — `process.exit()`, an uncaught exception, a closed terminal —
 * the run's guardian covers. Node and Bun hosts; the script ignores every signal and leaves a
 * `setsid` child and a double-forked daemon. Within 6 s nothing carries the run's id, LOOPX_TMPDIR
 * is gone and the record says how the run ended.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { ROOT, RUNTIMES, STUBBORN_SCRIPT, carriersOf, isolatedEnv, linuxOnly, makeProject, makeSymlink, runCommand, sleep, tempDir, waitFor } from "../../helpers.js";

const HOST = `import { run } from "loopx";
import { existsSync } from "node:fs";
const mode = process.argv[2];
if (mode === "handler") process.on("SIGINT", () => console.log("host handler ran"));
async function main() {
  try {
    for await (const _ of run("w", { record: true })) {}
    console.log("loop ended");
  } catch (error) {
    console.log("loop rejected: " + error.name);
  }
}
main();
// Not awaited at the top level: Bun does not exit on an uncaught exception while a top-level
// await is pending (with loopx or without).
const ready = () => new Promise((resolve) => { const t = setInterval(() => existsSync("run.id") && (clearInterval(t), setTimeout(resolve, 1000)), 20); });
if (mode === "exit") ready().then(() => process.exit(3));
if (mode === "throw") ready().then(() => { throw new Error("boom"); });
`;

function project(): string {
  const cwd = makeProject({
    "host.mjs": HOST,
    ".loopx/w/index.sh": STUBBORN_SCRIPT,
  });
  makeSymlink(ROOT, join(cwd, "node_modules", "loopx"));
  return cwd;
}

function read(cwd: string, name: string): string {
  return readFileSync(join(cwd, name), "utf8").trim();
}

/** Within 6 s of `at`: nothing carries the run's id, LOOPX_TMPDIR is gone, the record is closed; its run.end. */
async function expectRunEnded(cwd: string, env: Record<string, string>, at: number): Promise<Record<string, unknown>> {
  const id = read(cwd, "run.id");
  const left = () => carriersOf("LOOPX_RUN_ID", id);
  expect(await waitFor(() => left().length === 0, 6000 - (Date.now() - at), 50), `left: ${left().join(", ")}`).toBe(true);
  const tmp = read(cwd, "tmpdir.txt");
  expect(await waitFor(() => !existsSync(tmp), 6000 - (Date.now() - at), 50), `${tmp} is left`).toBe(true);
  const record = join(env.XDG_STATE_HOME!, "loopx", "runs", `${id}.jsonl`);
  expect(await waitFor(() => readFileSync(record, "utf8").includes('"run.end"'), 2000)).toBe(true);
  const end = JSON.parse(readFileSync(record, "utf8").trim().split("\n").at(-1)!) as Record<string, unknown>;
  expect(end.durationMs as number).toBeGreaterThanOrEqual(900);
  return end;
}

linuxOnly.concurrent.each(RUNTIMES)("a host of run() ($name)", (runtime) => {
  /** The host's output once its pipes close (the run's scripts share its stderr), and when it exited. */
  function startHost(cwd: string, env: Record<string, string>, mode: string) {
    let exited!: Promise<{ at: number; signal: NodeJS.Signals | null }>;
    const result = runCommand(runtime.exe, ["host.mjs", mode], {
      cwd,
      env,
      timeoutMs: 30_000,
      onSpawn: (child) => (exited = new Promise((resolve) => child.on("exit", (_code, signal) => resolve({ at: Date.now(), signal })))),
    });
    return Object.assign(result, { exited });
  }

  it.concurrent.for([
    ["SIGINT", "interrupted"],
    ["SIGTERM", "interrupted"],
    ["SIGHUP", "hangup"],
  ] as const)("%s with no handler: the host still dies by it; the run's scripts end, the record says %s", async ([signal, reason], { expect }) => {
    const cwd = project();
    const env = isolatedEnv();
    const host = startHost(cwd, env, "plain");
    expect(await waitFor(() => existsSync(join(cwd, "run.id")), 20_000)).toBe(true);
    await sleep(1000);
    process.kill(Number(read(cwd, "parent.pid")), signal);
    const sentAt = Date.now();
    const exit = await host.exited;
    expect(exit.signal).toBe(signal);
    expect(exit.at - sentAt).toBeLessThan(2000); // not held back by the run's grace
    const result = await host;
    expect(result.signal, result.stderr).toBe(signal);
    expect(result.stdout).toBe("");
    expect(await expectRunEnded(cwd, env, sentAt)).toMatchObject({ reason, signal });
  });

  it.concurrent("SIGINT with a handler of the host's own: it runs, the host goes on, the loop rejects with an AbortError, the run's scripts end", async ({ expect }) => {
    const cwd = project();
    const env = isolatedEnv();
    const host = startHost(cwd, env, "handler");
    expect(await waitFor(() => existsSync(join(cwd, "run.id")), 20_000)).toBe(true);
    await sleep(1000);
    process.kill(Number(read(cwd, "parent.pid")), "SIGINT");
    const sentAt = Date.now();
    const result = await host;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe("host handler ran\nloop rejected: AbortError\n");
    expect(await expectRunEnded(cwd, env, sentAt)).toMatchObject({ reason: "interrupted", signal: "SIGINT" });
  });

  it.concurrent.for([
    ["exit", 3],
    ["throw", 1],
  ] as const)("the host %ss (code %i) mid-run: the guardian ends the run's scripts, the record says crashed", async ([mode, code], { expect }) => {
    const cwd = project();
    const env = isolatedEnv();
    const host = startHost(cwd, env, mode);
    const exitedAt = (await host.exited).at;
    const result = await host;
    expect(result.code, result.stderr).toBe(code);
    if (mode === "throw") expect(result.stderr).toContain("boom");
    const end = await expectRunEnded(cwd, env, exitedAt);
    expect(end.reason).toBe("crashed");
    // Bun's "exit" event says 0 after an uncaught exception: the code is right when the guardian
    // read the dead host's wait status in time (Linux), and 0 otherwise.
    if (runtime.name === "bun" && mode === "throw") expect([0, 1]).toContain(end.exitCode);
    else expect(end.exitCode).toBe(code);
  });

  it.concurrent("its terminal is closed (tmux kill-server): the run's scripts end, the record says hangup", async ({ expect }) => {
    const cwd = project();
    const env = isolatedEnv();
    const socket = join(tempDir("loopx-tmux-"), "sock");
    const tmux = (...args: string[]) => spawnSync("tmux", ["-S", socket, "-f", "/dev/null", ...args], { cwd, env, encoding: "utf8" });
    expect(tmux("new-session", "-d", "-x", "120", "-y", "30", "bash --norc --noprofile -i").status).toBe(0);
    try {
      tmux("send-keys", "-l", `'${runtime.exe}' host.mjs plain\n`);
      expect(await waitFor(() => existsSync(join(cwd, "run.id")), 20_000), tmux("capture-pane", "-p").stdout).toBe(true);
      await sleep(1000);
    } finally {
      tmux("kill-server");
    }
    expect(await expectRunEnded(cwd, env, Date.now())).toMatchObject({ reason: "hangup", signal: "SIGHUP" });
  });
});
