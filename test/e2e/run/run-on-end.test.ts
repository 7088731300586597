/**
 * "know when it ends": `--on-end <command>` (and LOOPX_ON_END from the global env file)
 * runs once for every way a run ends — stop, -n, a failure, a time limit, a budget (--max-cost; the
 * run's receipt totals in the JSON), Ctrl-C (SIGINT), a hangup,
 * `loopx runs stop`, and kill -9 of loopx (then the run's guardian runs it) — with the outcome as
 * JSON on stdin and LOOPX_END_* variables, in the project root, without the per-script variables;
 * a resumed run fires it again; a hook that hangs is ended at its limit and one that fails is one
 * line, neither changing the run's exit code. One project, short scripts, every ending of a
 * channel at once.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { consumer, isolatedEnv, makeProject, processAlive, RUNTIMES, runConsumer, sh, startLoopx, tempDir, waitFor, type Started } from "../../helpers.js";
import { CHANNELS, loopx, onPty, type Channel } from "../../fixtures/channels.js";
import type { EndOutcome } from "../../../src/hooks/outcome.js";

const HOOK = 'cat > "$HOOK_DIR/$CASE.json"; env | grep "^LOOPX_" | sort > "$HOOK_DIR/$CASE.env"; pwd > "$HOOK_DIR/$CASE.cwd"; echo x >> "$HOOK_DIR/$CASE.count"';

const PROJECT = {
  ".loopx/w/index.sh": sh('echo "$LOOPX_RUN_ID" > "$HOOK_DIR/$CASE.started"\n[ -n "$FAST" ] && { echo \'{"stop":true}\'; exit 0; }\nsleep 30'),
  ".loopx/w/stop.sh": sh('echo "$LOOPX_RUN_ID" > "$HOOK_DIR/$CASE.started"\necho \'{"stop":true}\''),
  ".loopx/w/again.sh": sh('echo "$LOOPX_RUN_ID" > "$HOOK_DIR/$CASE.started"'),
  ".loopx/w/spend.sh": sh('echo "$LOOPX_RUN_ID" > "$HOOK_DIR/$CASE.started"\n"$LOOPX_BIN" receipt --cost 0.02 --kind billed --input 100 --output 10'),
  ".loopx/w/fail.sh": sh('echo "$LOOPX_RUN_ID" > "$HOOK_DIR/$CASE.started"\nexit 3'),
};

type Outcome = EndOutcome;

/** One ending: how the run is started, what is done to it once its script runs, and what the hook must be told. */
interface Ending {
  name: string;
  args: string[];
  /** Done once the script has started (the run's id given). */
  act?: (started: Started, id: string, env: Record<string, string>) => Promise<void> | void;
  /** LOOPX_ON_END in the global env file instead of --on-end. */
  fromEnvFile?: boolean;
  state: string;
  /** Either of several when the ending does not decide it. */
  exitCode: number | null | Array<number | null>;
  reason: RegExp;
  /** Undefined: as many as the record says. */
  iterations: number | undefined;
  target: string;
}

function endings(channel: Channel, cwd: string): Ending[] {
  return [
    { name: "stop", args: ["w:stop"], state: "stopped", exitCode: 0, reason: /^stopped by w:stop$/, iterations: 1, target: "w:stop" },
    { name: "limit", args: ["-n", "2", "w:again"], fromEnvFile: true, state: "limit", exitCode: 0, reason: /^reached -n 2$/, iterations: 2, target: "w:again" },
    { name: "budget", args: ["--max-cost", "0.03", "w:spend"], state: "budget", exitCode: 3, reason: /budget|max-cost|\$/, iterations: 2, target: "w:spend" },
    { name: "failure", args: ["w:fail"], state: "failed", exitCode: 1, reason: /^w:fail exited with code 3$/, iterations: 1, target: "w:fail" },
    { name: "time-limit", args: ["--max-time", "1s", "w"], state: "timed-out", exitCode: 124, reason: /time limit|timed out/, iterations: 1, target: "w:index" },
    { name: "ctrl-c", args: ["w"], act: (s) => void s.child.kill("SIGINT"), state: "interrupted", exitCode: 130, reason: /^interrupted by SIGINT$/, iterations: 1, target: "w:index" },
    { name: "hangup", args: ["w"], act: (s) => void s.child.kill("SIGHUP"), state: "hangup", exitCode: 129, reason: /^hung up \(SIGHUP\)$/, iterations: 1, target: "w:index" },
    {
      name: "runs-stop",
      args: ["w"],
      act: async (_s, id, env) => {
        const stop = await loopx(channel, ["runs", "stop", "--now", id], cwd, env);
        expect(stop.code, stop.stderr).toBe(0);
      },
      state: "interrupted",
      exitCode: 130,
      reason: /^interrupted by SIGINT$/,
      iterations: 1,
      target: "w:index",
    },
    // The guardian knows the signal when it caught loopx's wait status (137), else not (null).
    {
      name: "runs-stop-after",
      args: ["w:again"],
      act: async (_s, id, env) => {
        const stop = await loopx(channel, ["runs", "stop", id], cwd, env);
        expect(stop.code, stop.stderr).toBe(0);
      },
      state: "stopped-on-request",
      exitCode: 0,
      reason: /^stopped on request$/,
      iterations: undefined,
      target: "w:again",
    },
    { name: "kill-9", args: ["w"], act: (s) => void s.child.kill("SIGKILL"), state: "killed", exitCode: [137, null], reason: /^killed/, iterations: 1, target: "w:index" },
  ];
}

const read = (file: string) => readFileSync(file, "utf8");
const vars = (file: string) => Object.fromEntries(read(file).trim().split("\n").map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]));

/** Checks what the hook of `name` was told: the JSON, its variables, its directory, and that it ran once. */
function expectTold(hooks: string, name: string, cwd: string, ending: Omit<Ending, "name" | "args">, id: string): Outcome {
  const told = JSON.parse(read(join(hooks, `${name}.json`))) as Outcome;
  expect(told).toMatchObject({ run: id, project: cwd, target: ending.target, state: ending.state, iterations: ending.iterations ?? told.iterations });
  expect(Array.isArray(ending.exitCode) ? ending.exitCode : [ending.exitCode]).toContain(told.exitCode);
  expect(told.reason).toMatch(ending.reason);
  expect(told.durationMs).toBeGreaterThanOrEqual(0);
  expect(Date.parse(told.endedAt)).toBeGreaterThanOrEqual(Date.parse(told.startedAt));
  expect(told.record).toMatch(new RegExp(`/loopx/runs/${id}\\.jsonl$`));
  const env = vars(join(hooks, `${name}.env`));
  expect(env).toMatchObject({
    LOOPX_END_RUN_ID: id,
    LOOPX_END_PROJECT: cwd,
    LOOPX_END_TARGET: ending.target,
    LOOPX_END_STATE: ending.state,
    LOOPX_END_EXIT_CODE: told.exitCode === null ? "" : String(told.exitCode),
    LOOPX_END_REASON: told.reason,
    LOOPX_END_ITERATIONS: String(told.iterations),
    LOOPX_END_DURATION_MS: String(told.durationMs),
    LOOPX_END_STARTED_AT: told.startedAt,
    LOOPX_END_ENDED_AT: told.endedAt,
    LOOPX_END_RECORD: told.record,
    LOOPX_PROJECT_ROOT: cwd,
  });
  for (const perScript of ["LOOPX_ITERATION", "LOOPX_WORKFLOW", "LOOPX_RUN_ID", "LOOPX_TMPDIR"]) expect(env[perScript]).toBeUndefined();
  expect(read(join(hooks, `${name}.cwd`)).trim()).toBe(cwd);
  expect(read(join(hooks, `${name}.count`))).toBe("x\n");
  return told;
}

/** The record's run.hook events. */
function hookEvents(record: string): Array<{ by: string; exitCode: number | null; timedOut: boolean; output: string }> {
  return read(record)
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { type: string })
    .filter((event) => event.type === "run.hook") as never;
}

describe.each(CHANNELS)("--on-end ($name)", (channel) => {
  it("runs once for every ending (stop, -n, failure, time limit, budget, Ctrl-C, hangup, runs stop, kill -9: the guardian), with the outcome; a resumed run fires it again", { timeout: 90_000 }, async () => {
    const cwd = makeProject(PROJECT);
    const hooks = tempDir("loopx-hooks-");
    const cases = endings(channel, cwd).map(async (ending) => {
      const env = isolatedEnv({ HOOK_DIR: hooks, CASE: ending.name });
      if (ending.fromEnvFile) {
        mkdirSync(join(env.XDG_CONFIG_HOME!, "loopx"), { recursive: true });
        writeFileSync(join(env.XDG_CONFIG_HOME!, "loopx", "env"), `LOOPX_ON_END='${HOOK}'\n`);
      }
      const args = ["run", ...(ending.fromEnvFile ? [] : ["--on-end", HOOK]), ...ending.args];
      const started = startLoopx({ name: channel.name, exe: channel.argv[0]!, prefix: channel.argv.slice(1) }, args, { cwd, env, timeoutMs: 60_000 });
      const marker = join(hooks, `${ending.name}.started`);
      expect(await waitFor(() => existsSync(marker) && read(marker).trim() !== "", 30_000)).toBe(true);
      const id = read(marker).trim();
      await ending.act?.(started, id, env);
      const result = await started.result;
      if (ending.name !== "kill-9") expect(result.code, result.stderr).toBe(ending.exitCode);
      // The guardian runs it after loopx's death, well within 6 s.
      expect(await waitFor(() => existsSync(join(hooks, `${ending.name}.count`)), ending.name === "kill-9" ? 6_000 : 1_000)).toBe(true);
      await waitFor(() => existsSync(join(hooks, `${ending.name}.cwd`)), 2_000);
      const told = expectTold(hooks, ending.name, cwd, ending, id);
      expect(await waitFor(() => read(told.record!).includes('"run.end"'), 10_000)).toBe(true);
      const end = JSON.parse(read(told.record!).trim().split("\n").at(-1)!) as { reason: string; exitCode: number | null; iterations: number };
      expect(end).toMatchObject({ reason: told.state, exitCode: told.exitCode, iterations: told.iterations });
      expect(hookEvents(told.record!)).toMatchObject([{ by: ending.name === "kill-9" ? "guardian" : "loopx", exitCode: 0, timedOut: false }]);
      expect(result.stderr).not.toContain("on-end");
      if (ending.name === "budget") expect(told.receipts).toMatchObject({ costUsd: { billed: 0.04, estimate: 0 }, tokens: { input: 200, output: 20 }, receipts: 2 });
      else expect(told.receipts).toBeUndefined();
      return { ending, id, env };
    });
    const done = await Promise.all(cases);
    // The interrupted run goes on (`runs resume`) and ends again: the hook runs again.
    const interrupted = done.find((c) => c.ending.name === "ctrl-c")!;
    const resumed = await loopx(channel, ["runs", "resume", interrupted.id], cwd, { ...interrupted.env, CASE: "resumed", FAST: "1" });
    expect(resumed.code, resumed.stderr).toBe(0);
    expectTold(hooks, "resumed", cwd, { state: "stopped", exitCode: 0, reason: /^stopped by w:index$/, iterations: 1, target: "w:index" }, interrupted.id);
    expect(read(join(hooks, "ctrl-c.count"))).toBe("x\n");
  });

  it("a hook that hangs is ended at its limit, one that fails is one line; neither changes the exit code; its output is in the record and on the terminal", { timeout: 60_000 }, async () => {
    // Three projects: three runs of w in one tree would be told about each other (--worktree's warning).
    const [cwdH, cwdF, cwdP] = [makeProject(PROJECT), makeProject(PROJECT), makeProject(PROJECT)];
    const hooks = tempDir("loopx-hooks-");
    const env = isolatedEnv({ HOOK_DIR: hooks, CASE: "h", LOOPX_ON_END_TIMEOUT: "1s" });
    const [hanging, failing, shown] = await Promise.all([
      loopx(channel, ["run", "--on-end", 'echo $$ > "$HOOK_DIR/hook.pid"; exec sleep 60', "w:stop"], cwdH, env),
      loopx(channel, ["run", "--on-end", "echo oops >&2; exit 3", "w:fail"], cwdF, { ...env, CASE: "f" }),
      onPty([...channel.argv, "run", "--on-end", "echo from the hook; exit 2", "-n", "1", "w:again"], cwdP, { ...env, CASE: "p", TERM: "dumb", LOOPX_PROGRESS: "0" }),
    ]);
    expect(hanging.code).toBe(0);
    expect(hanging.stderr).toBe("loopx: warning: the --on-end command was ended at its time limit (1s; LOOPX_ON_END_TIMEOUT)\n");
    expect(processAlive(Number(read(join(hooks, "hook.pid"))))).toBe(false);
    expect(failing.code).toBe(1);
    // The warning ends with the hook's last stderr line.
    expect(failing.stderr).toBe("loopx: warning: the --on-end command exited with code 3: oops\nloopx: script w:fail exited with code 3\n");
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^from the hook\r\n(?: +\r)?loopx: warning: the --on-end command exited with code 2\r\n$/);
    const records = join(env.XDG_STATE_HOME!, "loopx", "runs");
    const events = (run: string) => hookEvents(join(records, `${run}.jsonl`));
    expect(events(read(join(hooks, "h.started")).trim())).toMatchObject([{ by: "loopx", exitCode: null, timedOut: true }]);
    expect(events(read(join(hooks, "f.started")).trim())).toMatchObject([{ by: "loopx", exitCode: 3, output: "oops\n" }]);
  });
});

describe.each(RUNTIMES)("RunOptions.onEnd ($name)", (runtime) => {
  it("runs the hook once when an API run ends; LOOPX_ON_END of the host's environment is not read", { timeout: 60_000 }, async () => {
    const hooks = tempDir("loopx-hooks-");
    const dir = consumer(
      `import { runPromise } from "loopx";
const outputs = await runPromise("w:stop", { onEnd: ${JSON.stringify(HOOK)} });
const ignored = await runPromise("w:stop", { env: { CASE: "ignored" } });
console.log(JSON.stringify({ outputs: outputs.length, ignored: ignored.length }));`,
      PROJECT,
    );
    const env = isolatedEnv({ HOOK_DIR: hooks, CASE: "api", LOOPX_ON_END: 'echo x >> "$HOOK_DIR/from-env.count"' });
    const result = await runConsumer(runtime, dir, { env });
    expect(result.json, result.stderr).toEqual({ outputs: 1, ignored: 1 });
    const told = JSON.parse(read(join(hooks, "api.json"))) as Outcome;
    expect(told).toMatchObject({ project: dir, target: "w:stop", state: "stopped", exitCode: 0, iterations: 1, record: null });
    expect(read(join(hooks, "api.count"))).toBe("x\n");
    expect(existsSync(join(hooks, "from-env.count"))).toBe(false);
  });
});

describe.each(CHANNELS)("--on-end on a real terminal ($name)", (channel) => {
  it("Ctrl-C typed in the terminal and the terminal closed: the hook runs once each, its output on the terminal", { timeout: 60_000 }, async () => {
    const cwd = makeProject(PROJECT);
    const hooks = tempDir("loopx-hooks-");
    const env = isolatedEnv({ HOOK_DIR: hooks, TERM: "xterm-256color", NO_COLOR: "1" });
    const socket = join(tempDir("loopx-tmux-"), "sock");
    const tmux = (...args: string[]) => spawnSync("tmux", ["-S", socket, "-f", "/dev/null", ...args], { cwd, env, encoding: "utf8" });
    const command = (name: string) => `CASE=${name} ${[...channel.argv, "run", "--on-end", `${HOOK}; echo hook said bye`, "w"].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ")}; echo "exit=$?"; sleep 600`;
    expect(tmux("new-session", "-d", "-x", "150", "-y", "20", "bash", "--norc", "--noprofile", "-c", command("typed"), ";", "new-window", "bash", "--norc", "--noprofile", "-c", command("closed")).status).toBe(0);
    try {
      expect(await waitFor(() => existsSync(join(hooks, "typed.started")) && existsSync(join(hooks, "closed.started")), 30_000)).toBe(true);
      tmux("send-keys", "-t", ":0", "C-c");
      tmux("kill-window", "-t", ":1");
      expect(await waitFor(() => existsSync(join(hooks, "typed.cwd")) && existsSync(join(hooks, "closed.cwd")), 15_000)).toBe(true);
      expect(await waitFor(() => /exit=130/.test(tmux("capture-pane", "-p", "-t", ":0").stdout), 10_000)).toBe(true);
      const screen = tmux("capture-pane", "-p", "-t", ":0").stdout;
      expect(screen).toMatch(/hook said bye\n(?:.*\n)*loopx: interrupted by SIGINT · 1 iteration/);
      const typed = read(join(hooks, "typed.started")).trim();
      const closed = read(join(hooks, "closed.started")).trim();
      expectTold(hooks, "typed", cwd, { state: "interrupted", exitCode: 130, reason: /^interrupted by SIGINT$/, iterations: 1, target: "w:index" }, typed);
      expectTold(hooks, "closed", cwd, { state: "hangup", exitCode: 129, reason: /^hung up \(SIGHUP\)$/, iterations: 1, target: "w:index" }, closed);
    } finally {
      tmux("kill-server");
    }
  });
});
