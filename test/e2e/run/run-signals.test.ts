/**
 * Signal handling of `loopx run` (spec §7.3): every script leads its own process group, SIGINT and
 * SIGTERM are forwarded to that group, the group gets a 5 s grace period before SIGKILL, loopx
 * exits 128+N, and no process of the group survives. Real processes, real signals; scripts report
 * their pids and readiness through files.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  RUNTIMES,
  isolatedEnv,
  linuxOnly,
  makeProject,
  processAlive,
  sleep,
  startLoopx,
  taggedSurvivors,
  tempDir,
  waitFor,
  waitForFile,
  type Runtime,
  type Started,
} from "../../helpers.js";
import { BASH_TREE, BASH_TREE_IGNORING, TS_TREE, TS_TREE_IGNORING_TERM, describeProcs, readProcComm, startTagged, treePids } from "../../fixtures/process/support.js";

function readPid(file: string): number {
  const pid = Number(readFileSync(file, "utf8").trim());
  expect(Number.isInteger(pid) && pid > 0, `bad pid in ${file}`).toBe(true);
  return pid;
}

/** Fields of /proc/<pid>/stat after the command name: [state, ppid, pgrp, session, ...]. */
function statFields(pid: number | "self"): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** Paths a background-job script reports through: its ready marker, its background child's pid, its own pid. */
interface ReportFiles {
  ready: string;
  bgPidFile: string;
  pidFile: string;
}

/**
 * Runs `loopx run w` where `w/index.sh` is `script(files)`: a script that starts a background child,
 * writes that child's pid to `bgPidFile` and its own to `pidFile`, then touches `ready`. Returns once
 * `ready` exists, with both pids read.
 */
async function startBackgroundJobScript(
  runtime: Runtime,
  script: (files: ReportFiles) => string,
): Promise<{ started: Started; bgPid: number; scriptPid: number }> {
  const cwd = tempDir();
  const files: ReportFiles = { ready: join(cwd, "ready"), bgPidFile: join(cwd, "bg.pid"), pidFile: join(cwd, "script.pid") };
  makeProject({ ".loopx/w/index.sh": script(files) }, cwd);
  const started = startLoopx(runtime, ["run", "w"], { cwd, env: isolatedEnv(), timeoutMs: 20_000 });
  await waitForFile(files.ready);
  const bgPid = readPid(files.bgPidFile);
  const scriptPid = readPid(files.pidFile);
  return { started, bgPid, scriptPid };
}

linuxOnly.each(RUNTIMES)("run: signals ($name)", (runtime) => {
  it.each([
    [".sh", `read -r -a f < <(sed 's/.*) //' /proc/$$/stat)\necho "$$ \${f[1]} \${f[2]} \${f[3]}" > '%TRACE%'\n`],
    [
      ".ts",
      'import { readFileSync, writeFileSync } from "node:fs";\n' +
        'const stat: string = readFileSync("/proc/self/stat", "latin1");\n' +
        'const f: string[] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");\n' +
        "writeFileSync(%TRACE_JSON%, `${process.pid} ${f[1]} ${f[2]} ${f[3]}\\n`);\n",
    ],
  ])("runs each %s script as the leader of its own process group, a direct child of loopx", async (ext, template) => {
    const cwd = tempDir();
    const trace = join(cwd, "pgid.trace");
    makeProject({ [`.loopx/w/index${ext}`]: template.replace("%TRACE%", trace).replace("%TRACE_JSON%", JSON.stringify(trace)) }, cwd);
    const started = startLoopx(runtime, ["run", "-n", "1", "w"], { cwd, env: isolatedEnv(), timeoutMs: 20_000 });
    const result = await started.result;
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const [pid, ppid, pgid, sid] = readFileSync(trace, "utf8").trim().split(" ").map(Number);
    const loopxPid = started.child.pid!;
    const [, , testPgid] = statFields("self").map(Number);
    expect(ppid).toBe(loopxPid);
    expect(pgid).toBe(pid);
    expect(pgid).not.toBe(loopxPid);
    // loopx was spawned into the test runner's group; the script must not share it.
    expect(pgid).not.toBe(testPgid);
    expect(sid).toBeGreaterThan(0);
  });

  it.each([
    ["SIGINT", "INT", 130],
    ["SIGTERM", "TERM", 143],
  ] as const)("%s (trapped as %s) while a bash script runs: the group gets it and loopx exits %i", async (signal, trapName, code) => {
    const cwd = tempDir();
    const trace = join(cwd, "trace");
    const ready = join(cwd, "ready");
    makeProject(
      {
        // A foreground `sleep` is in the group too: it dies of the signal, then the trap runs.
        ".loopx/w/index.sh": `echo start >> '${trace}'\ntrap 'echo got-${trapName} >> "${trace}"; exit 0' ${trapName}\n: > '${ready}'\nsleep 1000\n`,
      },
      cwd,
    );
    // No -n: were loopx to carry on after the script's clean exit, a second "start" would appear.
    const started = startLoopx(runtime, ["run", "w"], { cwd, env: isolatedEnv(), timeoutMs: 20_000 });
    await waitForFile(ready);
    const sentAt = Date.now();
    started.child.kill(signal);
    const result = await started.result;
    const elapsed = started.exitedAt() - sentAt;
    expect(result.signal).toBe(null);
    expect(result.code).toBe(code);
    expect(readFileSync(trace, "utf8")).toBe(`start\ngot-${trapName}\n`);
    expect(elapsed).toBeLessThan(3000);
    expect(result.stdout).toBe("");
  });

  it("SIGTERM while a TS script runs: the script's handler sees it and loopx exits 143", async () => {
    const cwd = tempDir();
    const trace = join(cwd, "trace");
    const ready = join(cwd, "ready");
    makeProject(
      {
        ".loopx/w/index.ts":
          'import { appendFileSync, writeFileSync } from "node:fs";\n' +
          `process.on("SIGTERM", () => { appendFileSync(${JSON.stringify(trace)}, "ts-got-TERM\\n"); process.exit(0); });\n` +
          `writeFileSync(${JSON.stringify(ready)}, "");\n` +
          "setInterval(() => {}, 1000);\n",
      },
      cwd,
    );
    const started = startLoopx(runtime, ["run", "w"], { cwd, env: isolatedEnv(), timeoutMs: 20_000 });
    await waitForFile(ready);
    const sentAt = Date.now();
    started.child.kill("SIGTERM");
    const result = await started.result;
    expect(result.code).toBe(143);
    expect(readFileSync(trace, "utf8")).toBe("ts-got-TERM\n");
    expect(started.exitedAt() - sentAt).toBeLessThan(3000);
  });

  // The grace-period tests below mostly sleep; they run concurrently to keep the file fast.
  it.concurrent.for([
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const)("%s leaves no orphaned grandchild (script runs `sleep 1000 &` and waits)", async ([signal, code], { expect }) => {
    // Bash starts background jobs with SIGINT ignored, so for SIGINT only the SIGKILL after
    // the grace period can end the sleep: loopx must wait for the whole group, not the script.
    const { started, bgPid, scriptPid } = await startBackgroundJobScript(
      runtime,
      ({ ready, bgPidFile, pidFile }) => `sleep 1000 &\necho $! > '${bgPidFile}'\necho $$ > '${pidFile}'\n: > '${ready}'\nwait\n`,
    );
    expect(processAlive(bgPid)).toBe(true);
    const sentAt = Date.now();
    started.child.kill(signal);
    const result = await started.result;
    expect(result.code).toBe(code);
    expect(processAlive(scriptPid)).toBe(false);
    expect(processAlive(bgPid)).toBe(false);
    expect(started.exitedAt() - sentAt).toBeLessThan(9000);
  });

  it.concurrent("a script that ignores SIGTERM (and its background child) is SIGKILLed after the 5 s grace; loopx exits 143", async ({ expect }) => {
    // An ignored signal stays ignored in children: the background sleep ignores SIGTERM too.
    const { started, bgPid, scriptPid } = await startBackgroundJobScript(
      runtime,
      ({ ready, bgPidFile, pidFile }) =>
        `trap '' TERM\nsleep 1000 &\necho $! > '${bgPidFile}'\necho $$ > '${pidFile}'\n: > '${ready}'\nwait\nwait\n`,
    );
    const sentAt = Date.now();
    started.child.kill("SIGTERM");
    // Still running well inside the grace period.
    await sleep(2000);
    expect(processAlive(scriptPid)).toBe(true);
    expect(processAlive(bgPid)).toBe(true);
    const result = await started.result;
    const elapsed = started.exitedAt() - sentAt;
    expect(result.code).toBe(143);
    expect(elapsed).toBeGreaterThanOrEqual(4500);
    expect(elapsed).toBeLessThan(9000);
    expect(processAlive(scriptPid)).toBe(false);
    expect(processAlive(bgPid)).toBe(false);
    console.log(`[${runtime.name}] SIGTERM-ignoring script: loopx exited ${elapsed} ms after SIGTERM`);
  });

  it.concurrent("a grandchild that ignores SIGTERM is SIGKILLed even after the script itself has exited", async ({ expect }) => {
    const cwd = tempDir();
    const ready = join(cwd, "ready");
    const bgPidFile = join(cwd, "bg.pid");
    makeProject(
      {
        // The script dies of SIGTERM at once; its background child ignores SIGTERM and lingers.
        ".loopx/w/index.sh": `(trap '' TERM; exec sleep 1000) &\necho $! > '${bgPidFile}'\n: > '${ready}'\nwait\n`,
      },
      cwd,
    );
    const started = startLoopx(runtime, ["run", "w"], { cwd, env: isolatedEnv(), timeoutMs: 20_000 });
    await waitForFile(ready);
    const bgPid = readPid(bgPidFile);
    await waitFor(() => readFileSync(`/proc/${bgPid}/cmdline`, "latin1").startsWith("sleep"), 5000);
    const sentAt = Date.now();
    started.child.kill("SIGTERM");
    const result = await started.result;
    expect(result.code).toBe(143);
    expect(processAlive(bgPid)).toBe(false);
    expect(started.exitedAt() - sentAt).toBeLessThan(9000);
  });

  it.concurrent("a second SIGINT during the grace period still ends with exit 130 and no orphans", async ({ expect }) => {
    const { started, bgPid, scriptPid } = await startBackgroundJobScript(
      runtime,
      ({ ready, bgPidFile, pidFile }) =>
        `trap '' INT\nsleep 1000 &\necho $! > '${bgPidFile}'\necho $$ > '${pidFile}'\n: > '${ready}'\nwait\nwait\n`,
    );
    const sentAt = Date.now();
    started.child.kill("SIGINT");
    await sleep(1000);
    // Grace period: loopx is still waiting for the group (judgement: it did not exit at once).
    expect(processAlive(started.child.pid!)).toBe(true);
    started.child.kill("SIGINT");
    const result = await started.result;
    expect(result.code).toBe(130);
    expect(started.exitedAt() - sentAt).toBeLessThan(9000);
    expect(processAlive(scriptPid)).toBe(false);
    expect(processAlive(bgPid)).toBe(false);
  });

  it("SIGINT in a loop of very short scripts exits 130 promptly and starts no further iteration", async () => {
    const cwd = tempDir();
    const pids = join(cwd, "pids");
    makeProject({ ".loopx/w/index.sh": `echo $$ >> '${pids}'\n` }, cwd);
    const started = startLoopx(runtime, ["run", "-n", "1000000", "w"], { cwd, env: isolatedEnv(), timeoutMs: 20_000 });
    const lines = () => (existsSync(pids) ? readFileSync(pids, "utf8").split("\n").filter(Boolean) : []);
    expect(await waitFor(() => lines().length >= 30, 10_000)).toBe(true);
    const sentAt = Date.now();
    started.child.kill("SIGINT");
    const result = await started.result;
    expect(result.code).toBe(130);
    expect(started.exitedAt() - sentAt).toBeLessThan(2000);
    const after = lines();
    await sleep(300);
    expect(lines().length).toBe(after.length);
    for (const pid of after.slice(-3).map(Number)) expect(processAlive(pid)).toBe(false);
  });
});

linuxOnly.concurrent.each(RUNTIMES)("run: signals to a three-level process tree ($name)", (runtime) => {
  describe("SIGINT / SIGTERM while a script runs a three-level process tree", () => {
    it.concurrent.for([
      ["SIGINT", 130],
      ["SIGTERM", 143],
    ] as const)("%s, cooperative bash → bash → sleep tree: exit %i at once, every level gone", async ([signal, code], { expect }) => {
      const cwd = makeProject(BASH_TREE);
      const started = startTagged(runtime, ["run", "w"], cwd);
      await waitForFile(join(cwd, "ready"), 15_000);
      const pids = await treePids(cwd);
      for (const pid of pids) expect(processAlive(pid)).toBe(true);
      // "ready" is touched just before `exec sleep`; a signal in that window is taken by bash's
      // own handler and lost across the exec (a bash race, not loopx's), so wait for the exec.
      await waitFor(() => readProcComm(pids[2]!) === "sleep", 5000);
      const sentAt = Date.now();
      started.child.kill(signal);
      const result = await started.result;
      const elapsed = started.exitedAt() - sentAt;
      expect(result.signal).toBe(null);
      expect(result.code).toBe(code);
      // The tree dies of the forwarded signal: no need to wait for the 5 s grace period.
      expect(elapsed).toBeLessThan(4500);
      for (const pid of pids) expect(processAlive(pid), `pid ${pid}`).toBe(false);
      expect(describeProcs(taggedSurvivors(started.tag))).toBe("");
      // l1 must not have carried on after its child died (it died of the signal too).
      expect(result.stderr).not.toContain("l1 continued");
      expect(result.stdout).toBe("");
    });

    it.concurrent("SIGTERM, TS → bash → background sleep: exit 143 at once, every level gone", async ({ expect }) => {
      const cwd = makeProject(TS_TREE);
      const started = startTagged(runtime, ["run", "w"], cwd);
      await waitForFile(join(cwd, "ready"), 15_000);
      const pids = await treePids(cwd);
      const sentAt = Date.now();
      started.child.kill("SIGTERM");
      const result = await started.result;
      expect(result.code).toBe(143);
      expect(started.exitedAt() - sentAt).toBeLessThan(4500);
      for (const pid of pids) expect(processAlive(pid), `pid ${pid}`).toBe(false);
      expect(describeProcs(taggedSurvivors(started.tag))).toBe("");
    });

    it.concurrent("SIGINT, TS → bash → background sleep (SIGINT-immune orphan): SIGKILL at 5 s, exit 130, every level gone", async ({ expect }) => {
      const cwd = makeProject(TS_TREE);
      const started = startTagged(runtime, ["run", "w"], cwd);
      await waitForFile(join(cwd, "ready"), 15_000);
      const [l1, l2, l3] = await treePids(cwd);
      // bash makes a background job immune to SIGINT in the forked child, before its exec: a
      // signal sent before the exec would still kill it, so wait for the exec.
      await waitFor(() => readProcComm(l3!) === "sleep", 5000);
      const sentAt = Date.now();
      started.child.kill("SIGINT");
      // The parents die of SIGINT; the sleep, now an orphan in the script's group, lives on.
      expect(await waitFor(() => !processAlive(l1!) && !processAlive(l2!), 3000)).toBe(true);
      expect(processAlive(l3!)).toBe(true);
      expect(processAlive(started.child.pid!)).toBe(true); // loopx waits for the whole group
      const result = await started.result;
      const elapsed = started.exitedAt() - sentAt;
      expect(result.code).toBe(130);
      expect(elapsed).toBeGreaterThanOrEqual(4500);
      expect(elapsed).toBeLessThan(9000);
      expect(processAlive(l3!)).toBe(false);
      expect(describeProcs(taggedSurvivors(started.tag))).toBe("");
      console.log(`[${runtime.name}] SIGINT with a SIGINT-immune grandchild: loopx exited ${elapsed} ms after the signal`);
    });
  });

  describe("a tree that traps and ignores SIGTERM", () => {
    it.concurrent("nothing is killed before 5 s; then the whole tree is SIGKILLed and loopx exits 143", async ({ expect }) => {
      const cwd = makeProject(TS_TREE_IGNORING_TERM);
      const started = startTagged(runtime, ["run", "w"], cwd);
      await waitForFile(join(cwd, "ready"), 15_000);
      const pids = await treePids(cwd);
      const sentAt = Date.now();
      started.child.kill("SIGTERM");
      await sleep(3500);
      for (const pid of pids) expect(processAlive(pid), `pid ${pid} killed before the grace period ended`).toBe(true);
      expect(processAlive(started.child.pid!)).toBe(true);
      const result = await started.result;
      const elapsed = started.exitedAt() - sentAt;
      expect(result.code).toBe(143);
      expect(elapsed).toBeGreaterThanOrEqual(4500);
      expect(elapsed).toBeLessThan(9000);
      for (const pid of pids) expect(processAlive(pid), `pid ${pid}`).toBe(false);
      expect(describeProcs(taggedSurvivors(started.tag))).toBe("");
      expect(result.stderr).toContain("l1 ignores SIGTERM"); // the handler did see the forwarded signal
      console.log(`[${runtime.name}] SIGTERM-ignoring three-level tree: loopx exited ${elapsed} ms after SIGTERM`);
    });
  });

  describe("more signals during the grace period", () => {
    it.concurrent("a burst of Ctrl-Cs: the second ends the grace at once (SIGKILL to the tree), loopx exits 130, no orphans", async ({ expect }) => {
      const cwd = makeProject(BASH_TREE_IGNORING("INT"));
      const started = startTagged(runtime, ["run", "w"], cwd);
      await waitForFile(join(cwd, "ready"), 15_000);
      const pids = await treePids(cwd);
      started.child.kill("SIGINT");
      await sleep(1000);
      // 1 s after the first Ctrl-C: loopx has not bailed out and left the tree behind.
      expect(processAlive(started.child.pid!)).toBe(true);
      for (const pid of pids) expect(processAlive(pid)).toBe(true);
      const secondAt = Date.now();
      started.child.kill("SIGINT");
      started.child.kill("SIGINT");
      const result = await started.result;
      expect(result.code).toBe(130);
      expect(started.exitedAt() - secondAt).toBeLessThan(2000);
      for (const pid of pids) expect(processAlive(pid), `pid ${pid}`).toBe(false);
      expect(describeProcs(taggedSurvivors(started.tag))).toBe("");
    });

    it.concurrent("Ctrl-C then SIGTERM: the SIGTERM is forwarded too and ends a tree that only ignores SIGINT", async ({ expect }) => {
      const cwd = makeProject(BASH_TREE_IGNORING("INT"));
      const started = startTagged(runtime, ["run", "w"], cwd);
      await waitForFile(join(cwd, "ready"), 15_000);
      const pids = await treePids(cwd);
      const sentAt = Date.now();
      started.child.kill("SIGINT");
      await sleep(1000);
      for (const pid of pids) expect(processAlive(pid)).toBe(true);
      started.child.kill("SIGTERM");
      const result = await started.result;
      const elapsed = started.exitedAt() - sentAt;
      // Ended by the forwarded SIGTERM, well before the 5 s SIGKILL.
      expect(elapsed).toBeLessThan(4500);
      expect([130, 143]).toContain(result.code);
      for (const pid of pids) expect(processAlive(pid), `pid ${pid}`).toBe(false);
      expect(describeProcs(taggedSurvivors(started.tag))).toBe("");
      console.log(`[${runtime.name}] SIGINT then SIGTERM: exit ${result.code} after ${elapsed} ms`);
    });

    it.concurrent("Ctrl-C then SIGTERM on a tree that ignores both: SIGKILL at 5 s, exit 128+N, no orphans", async ({ expect }) => {
      const cwd = makeProject(BASH_TREE_IGNORING("INT TERM"));
      const started = startTagged(runtime, ["run", "w"], cwd);
      await waitForFile(join(cwd, "ready"), 15_000);
      const pids = await treePids(cwd);
      const sentAt = Date.now();
      started.child.kill("SIGINT");
      await sleep(1000);
      started.child.kill("SIGTERM");
      await sleep(2000);
      expect(processAlive(started.child.pid!)).toBe(true);
      const result = await started.result;
      const elapsed = started.exitedAt() - sentAt;
      expect([130, 143]).toContain(result.code);
      expect(elapsed).toBeGreaterThanOrEqual(4500);
      expect(elapsed).toBeLessThan(9000);
      for (const pid of pids) expect(processAlive(pid), `pid ${pid}`).toBe(false);
      expect(describeProcs(taggedSurvivors(started.tag))).toBe("");
    });
  });
});
