/**
 * Every signal that ends loopx ends the run's processes: SIGHUP (a closed terminal) and
 * SIGQUIT (Ctrl-\) are handled like SIGTERM — forwarded to the script's group, grace, SIGKILL,
 * strays and LOOPX_TMPDIR gone, exit 129 / 131, the record says hangup / quit. On a real terminal
 * (tmux): closing it, Ctrl-Z and `fg`, and Ctrl-C twice. Under node, bun and the standalone binary.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { CLIS, STUBBORN_SCRIPT, carriersOf, isolatedEnv, linuxOnly, makeProject, processAlive, runCommand, sh, sleep, tempDir, waitFor, type Cli } from "../../helpers.js";

const STUBBORN = { ".loopx/w/index.sh": STUBBORN_SCRIPT };

function read(cwd: string, name: string): string {
  return readFileSync(join(cwd, name), "utf8").trim();
}

function lastEvent(env: Record<string, string>, id: string): Record<string, unknown> | undefined {
  const path = join(env.XDG_STATE_HOME!, "loopx", "runs", `${id}.jsonl`);
  if (!existsSync(path)) return undefined;
  const lines = readFileSync(path, "utf8").trim().split("\n");
  return JSON.parse(lines.at(-1)!) as Record<string, unknown>;
}

/** Within 6 s of `at`: nothing carries the run's id, the scratch directory is gone. */
async function expectRunGone(cwd: string, at: number): Promise<void> {
  const id = read(cwd, "run.id");
  expect(await waitFor(() => carriersOf("LOOPX_RUN_ID", id).length === 0, 6000 - (Date.now() - at), 50), `left: ${carriersOf("LOOPX_RUN_ID", id).join(", ")}`).toBe(true);
  const tmp = read(cwd, "tmpdir.txt");
  expect(await waitFor(() => !existsSync(tmp), 6000 - (Date.now() - at), 50), `${tmp} is left`).toBe(true);
}

/** A tmux server of this test's own, running an interactive bash in `cwd`: a real terminal. */
function terminal(cwd: string, env: Record<string, string>) {
  const socket = join(tempDir("loopx-tmux-"), "sock");
  const tmux = (...args: string[]) => spawnSync("tmux", ["-S", socket, "-f", "/dev/null", ...args], { cwd, env, encoding: "utf8" });
  const started = tmux("new-session", "-d", "-x", "160", "-y", "40", "bash --norc --noprofile -i");
  if (started.status !== 0) throw new Error(`tmux: ${started.stderr}`);
  return {
    type: (text: string) => tmux("send-keys", "-l", text),
    keys: (...keys: string[]) => tmux("send-keys", ...keys),
    screen: () => tmux("capture-pane", "-p").stdout,
    close: () => tmux("kill-server"),
  };
}

function commandLine(runner: Cli, args: string[]): string {
  return [runner.exe, ...runner.prefix, ...args].map((arg) => `'${arg}'`).join(" ");
}

linuxOnly.concurrent.each(CLIS)("signals that end loopx ($name)", (runner) => {
  it.concurrent.for([
    ["SIGHUP", 129, "hangup"],
    ["SIGQUIT", 131, "quit"],
  ] as const)("%s: exit %i after the grace, the script's group got it, nothing left, the record says %s", async ([signal, code, reason], { expect }) => {
    const cwd = makeProject(STUBBORN);
    const env = isolatedEnv();
    const running = runCommand(runner.exe, [...runner.prefix, "run", "w"], { cwd, env, timeoutMs: 30_000 });
    expect(await waitFor(() => existsSync(join(cwd, "run.id")), 20_000)).toBe(true);
    await sleep(1000);
    process.kill(Number(read(cwd, "parent.pid")), signal);
    const sentAt = Date.now();
    const result = await running;
    expect(result.code, result.stderr).toBe(code);
    expect(result.stdout).toBe("");
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(4500); // the script ignored it: the grace ran out
    if (signal === "SIGHUP") expect(read(cwd, "trace")).toBe("got");
    await expectRunGone(cwd, sentAt);
    expect(lastEvent(env, read(cwd, "run.id"))).toMatchObject({ type: "run.end", reason, exitCode: code, signal });
  });

  it.concurrent("the terminal is closed (tmux kill-server): nothing carries the run's id 6 s later, LOOPX_TMPDIR is gone, the record says hangup", async ({ expect }) => {
    const cwd = makeProject(STUBBORN);
    const env = isolatedEnv();
    const tty = terminal(cwd, env);
    try {
      tty.type(`${commandLine(runner, ["run", "w"])}\n`);
      expect(await waitFor(() => existsSync(join(cwd, "run.id")), 20_000), tty.screen()).toBe(true);
      await sleep(1500);
    } finally {
      tty.close();
    }
    const closedAt = Date.now();
    await expectRunGone(cwd, closedAt);
    const id = read(cwd, "run.id");
    expect(await waitFor(() => lastEvent(env, id)?.type === "run.end", 2000)).toBe(true);
    const end = lastEvent(env, id)!;
    expect(end).toMatchObject({ reason: "hangup", signal: "SIGHUP", iterations: 1 });
    expect(end.durationMs as number).toBeGreaterThanOrEqual(1500);
  });

  it.concurrent("Ctrl-Z stops the script with loopx (its output stops); `fg` continues both and the loop completes", async ({ expect }) => {
    const cwd = makeProject({
      ".loopx/w/index.sh": sh(`cd "$LOOPX_PROJECT_ROOT"
echo "$LOOPX_RUN_ID" > run.id
echo $$ > script.pid
for i in $(seq 1 20); do echo "tick $i" >> ticks; echo "tick $i" >&2; sleep 0.1; done
$LOOPX_BIN output --stop`),
    });
    const env = isolatedEnv();
    const tty = terminal(cwd, env);
    try {
      tty.type(`${commandLine(runner, ["run", "w"])}\n`);
      const ticks = () => (existsSync(join(cwd, "ticks")) ? read(cwd, "ticks").split("\n").length : 0);
      expect(await waitFor(() => ticks() >= 3, 20_000), tty.screen()).toBe(true);
      tty.keys("C-z");
      expect(await waitFor(() => tty.screen().includes("Stopped"), 5000), tty.screen()).toBe(true);
      const state = (pid: number) => readFileSync(`/proc/${pid}/stat`, "latin1").split(") ")[1]![0];
      // SIGSTOP takes effect when the script is next scheduled: on a loaded machine, a moment later.
      expect(await waitFor(() => state(Number(read(cwd, "script.pid"))) === "T", 2000)).toBe(true);
      const stoppedAt = ticks();
      await sleep(1500);
      expect(ticks()).toBe(stoppedAt);
      expect(stoppedAt).toBeLessThan(20);
      tty.type("fg\n");
      const id = read(cwd, "run.id");
      expect(await waitFor(() => lastEvent(env, id)?.type === "run.end", 15_000), tty.screen()).toBe(true);
      expect(lastEvent(env, id)).toMatchObject({ reason: "stopped", exitCode: 0, iterations: 1 });
      expect(ticks()).toBe(20);
    } finally {
      tty.close();
    }
  });

  it.concurrent("Ctrl-C while a script ignores it: one line saying what loopx waits for; a second Ctrl-C ends it at once (130, well before the 5 s grace), nothing left", async ({ expect }) => {
    const cwd = makeProject(STUBBORN);
    const env = isolatedEnv();
    const tty = terminal(cwd, env);
    try {
      tty.type(`${commandLine(runner, ["run", "w"])}; echo "exit=$?"\n`);
      expect(await waitFor(() => existsSync(join(cwd, "run.id")), 20_000), tty.screen()).toBe(true);
      const loopx = Number(read(cwd, "parent.pid"));
      tty.keys("C-c");
      const line = "loopx: waiting up to 5s for w:index to exit; press Ctrl-C again to end it now";
      expect(await waitFor(() => tty.screen().includes(line), 3000), tty.screen()).toBe(true);
      expect(tty.screen().split(line)).toHaveLength(2); // once
      await sleep(300);
      expect(processAlive(loopx)).toBe(true);
      tty.keys("C-c");
      const secondAt = Date.now();
      expect(await waitFor(() => !processAlive(loopx), 2000, 10)).toBe(true);
      expect(Date.now() - secondAt).toBeLessThan(2500); // the grace would take 5 s; 2.5 s is slack for a loaded 2-core box
      expect(await waitFor(() => tty.screen().includes("exit=130"), 2000), tty.screen()).toBe(true);
      expect(carriersOf("LOOPX_RUN_ID", read(cwd, "run.id"))).toEqual([]);
      expect(existsSync(read(cwd, "tmpdir.txt"))).toBe(false);
      expect(lastEvent(env, read(cwd, "run.id"))).toMatchObject({ reason: "interrupted", exitCode: 130, signal: "SIGINT" });
    } finally {
      tty.close();
    }
  });
});
