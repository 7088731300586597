/**
 * Hardening — process faults (issue "faults, hostile input and long runs", item 2). Extends
 * run-signals / run-loop / api tests with deeper process trees and nastier timings:
 *
 * - SIGINT / SIGTERM while a script runs a three-level process tree (bash → bash → sleep, and
 *   TS → bash → background sleep that ignores SIGINT): every process gone, exit 130 / 143.
 * - a three-level tree that traps and ignores SIGTERM: nothing is killed early, all SIGKILLed at 5 s.
 * - repeated Ctrl-C (and Ctrl-C then SIGTERM) during the grace period: no early exit, no orphans,
 *   and a later signal is still forwarded to the group.
 * - the script's file gone mid-loop in ways run-loop.test.ts does not cover (renamed, dangling
 *   symlink, workflow directory removed, replaced by a directory, deleted from outside the loop).
 * - a script killed by a signal itself (self SIGINT/SIGTERM/SIGSEGV/SIGKILL, or killed from
 *   outside loopx): exit 1, never 128+N.
 * - the programmatic API: break, return() and abort leave no survivors, even for trees that
 *   ignore SIGTERM; the consumer process is free to exit at once.
 *
 * "No survivor" is checked two ways: the pids every level records, and a scan of /proc for any
 * live (non-zombie) process whose environment carries this test's unique HARDENING_TAG — which
 * finds descendants the test never heard about, whatever their process group.
 */
import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  ROOT,
  RUNTIMES,
  isolatedEnv,
  makeProject,
  makeSymlink,
  processAlive,
  runCommand,
  runLoopx,
  sleep,
  taggedSurvivors,
  waitFor,
  type RunResult,
  type Runtime,
} from "./helpers.js";

// ---------------------------------------------------------------------------------------------
// Local helpers
// ---------------------------------------------------------------------------------------------


function describeProcs(pids: number[]): string {
  return pids
    .map((pid) => {
      try {
        return `${pid}:${readFileSync(`/proc/${pid}/cmdline`, "latin1").replace(/\0/g, " ").trim()}`;
      } catch {
        return `${pid}:?`;
      }
    })
    .join(", ");
}

interface Started {
  child: ChildProcess;
  tag: string;
  result: Promise<RunResult>;
  exitedAt: () => number;
}

/** Starts loopx with a fresh tag in its environment and returns at once. */
function startLoopx(runtime: Runtime, args: string[], cwd: string, timeoutMs = 30_000): Started {
  const tag = randomUUID();
  let child: ChildProcess | undefined;
  let exitedAt = 0;
  const result = runLoopx(runtime, args, {
    cwd,
    env: isolatedEnv({ HARDENING_TAG: tag }),
    timeoutMs,
    onSpawn: (c) => (child = c),
  }).then((r) => {
    exitedAt = Date.now();
    return r;
  });
  return { child: child!, tag, result, exitedAt: () => exitedAt };
}

async function waitForFile(file: string, timeoutMs = 15_000): Promise<void> {
  if (!(await waitFor(() => existsSync(file), timeoutMs))) throw new Error(`timed out waiting for ${file}`);
}

/** Reads the pid files l1.pid, l2.pid, l3.pid (one per tree level) from `dir`. */
function readProcComm(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "";
  }
}

async function treePids(dir: string, levels = 3): Promise<number[]> {
  const pids: number[] = [];
  for (let level = 1; level <= levels; level++) {
    const file = join(dir, `l${level}.pid`);
    await waitForFile(file);
    let pid = NaN;
    await waitFor(() => Number.isInteger((pid = Number(readFileSync(file, "utf8").trim()))) && pid > 0, 5000);
    pids.push(pid);
  }
  return pids;
}

/** Exactly one `loopx:` line on stderr containing every needle, no stack trace, exit 1. */
function expectOneLoopxError(result: RunResult, ...needles: string[]): string {
  expect(result.stderr).not.toMatch(/^\s+at /m);
  expect(result.stderr).not.toContain("internal error");
  const lines = result.stderr.split("\n").filter((line) => line.startsWith("loopx:"));
  expect(lines, result.stderr).toHaveLength(1);
  for (const needle of needles) expect(lines[0]).toContain(needle);
  expect(result.code).toBe(1);
  expect(result.stdout).toBe("");
  return lines[0]!;
}

function traceLines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
}

// ---------------------------------------------------------------------------------------------
// Three-level trees. Every level writes its pid to $LOOPX_PROJECT_ROOT/l<N>.pid; `ready` appears
// once the deepest level exists. Helpers live in the workflow's lib/ (not discovered).
// ---------------------------------------------------------------------------------------------

const R = '"$LOOPX_PROJECT_ROOT"';

/** bash → bash → sleep, all in the foreground with default signal dispositions (cooperative). */
const BASH_TREE = {
  ".loopx/w/index.sh": `echo $$ > ${R}/l1.pid\nbash lib/child.sh\necho "l1 continued" >&2\n`,
  ".loopx/w/lib/child.sh": `echo $$ > ${R}/l2.pid\nbash -c 'echo $$ > "$LOOPX_PROJECT_ROOT/l3.pid"; touch "$LOOPX_PROJECT_ROOT/ready"; exec sleep 1000'\n`,
};

/**
 * TS script → bash → `sleep 1000 &`. A non-interactive bash starts background jobs with SIGINT
 * ignored, so on SIGINT the sleep outlives both its parents and only the SIGKILL after the grace
 * period can end it — as an orphan still in the script's process group.
 */
const TS_TREE = {
  ".loopx/w/index.ts":
    'import { spawn } from "node:child_process";\n' +
    'import { writeFileSync } from "node:fs";\n' +
    "const root = process.env.LOOPX_PROJECT_ROOT!;\n" +
    "writeFileSync(`${root}/l1.pid`, String(process.pid));\n" +
    'spawn("bash", ["lib/child.sh"], { stdio: "inherit" });\n',
  ".loopx/w/lib/child.sh": `echo $$ > ${R}/l2.pid\nsleep 1000 &\necho $! > ${R}/l3.pid\ntouch ${R}/ready\nwait\n`,
};

/** TS script ignoring SIGTERM → bash with `trap '' TERM` → sleep (inherits the ignored SIGTERM). */
const TS_TREE_IGNORING_TERM = {
  ".loopx/w/index.ts":
    'import { spawn } from "node:child_process";\n' +
    'import { writeFileSync } from "node:fs";\n' +
    'process.on("SIGTERM", () => process.stderr.write("l1 ignores SIGTERM\\n"));\n' +
    "const root = process.env.LOOPX_PROJECT_ROOT!;\n" +
    "writeFileSync(`${root}/l1.pid`, String(process.pid));\n" +
    'spawn("bash", ["lib/child.sh"], { stdio: "inherit" });\n',
  ".loopx/w/lib/child.sh": `trap '' TERM\necho $$ > ${R}/l2.pid\nsleep 1000 &\necho $! > ${R}/l3.pid\ntouch ${R}/ready\nwait\nwait\n`,
};

/** bash (INT and TERM ignored) → bash → sleep: every level ignores both signals. */
const BASH_TREE_IGNORING = (signals: string) => ({
  ".loopx/w/index.sh": `trap '' ${signals}\necho $$ > ${R}/l1.pid\nbash lib/child.sh\n`,
  ".loopx/w/lib/child.sh": `echo $$ > ${R}/l2.pid\nsleep 1000 &\necho $! > ${R}/l3.pid\ntouch ${R}/ready\nwait\nwait\n`,
});

// ---------------------------------------------------------------------------------------------

describe.concurrent.each(RUNTIMES)("hardening: process faults ($name)", (runtime) => {
  describe("SIGINT / SIGTERM while a script runs a three-level process tree", () => {
    it.concurrent.for([
      ["SIGINT", 130],
      ["SIGTERM", 143],
    ] as const)("%s, cooperative bash → bash → sleep tree: exit %i at once, every level gone", async ([signal, code], { expect }) => {
      const cwd = makeProject(BASH_TREE);
      const started = startLoopx(runtime, ["run", "w"], cwd);
      await waitForFile(join(cwd, "ready"));
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
      const started = startLoopx(runtime, ["run", "w"], cwd);
      await waitForFile(join(cwd, "ready"));
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
      const started = startLoopx(runtime, ["run", "w"], cwd);
      await waitForFile(join(cwd, "ready"));
      const [l1, l2, l3] = await treePids(cwd);
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
      const started = startLoopx(runtime, ["run", "w"], cwd);
      await waitForFile(join(cwd, "ready"));
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
    it.concurrent("a burst of three Ctrl-Cs: loopx keeps waiting (no orphans), SIGKILLs at 5 s from the first, exits 130", async ({ expect }) => {
      const cwd = makeProject(BASH_TREE_IGNORING("INT"));
      const started = startLoopx(runtime, ["run", "w"], cwd);
      await waitForFile(join(cwd, "ready"));
      const pids = await treePids(cwd);
      const sentAt = Date.now();
      started.child.kill("SIGINT");
      await sleep(1000);
      started.child.kill("SIGINT");
      await sleep(1000);
      started.child.kill("SIGINT");
      await sleep(1000);
      // 3 s after the first Ctrl-C: loopx has not bailed out and left the tree behind.
      expect(processAlive(started.child.pid!)).toBe(true);
      for (const pid of pids) expect(processAlive(pid)).toBe(true);
      const result = await started.result;
      const elapsed = started.exitedAt() - sentAt;
      expect(result.code).toBe(130);
      expect(elapsed).toBeGreaterThanOrEqual(4500);
      expect(elapsed).toBeLessThan(9000);
      for (const pid of pids) expect(processAlive(pid), `pid ${pid}`).toBe(false);
      expect(describeProcs(taggedSurvivors(started.tag))).toBe("");
    });

    it.concurrent("Ctrl-C then SIGTERM: the SIGTERM is forwarded too and ends a tree that only ignores SIGINT", async ({ expect }) => {
      const cwd = makeProject(BASH_TREE_IGNORING("INT"));
      const started = startLoopx(runtime, ["run", "w"], cwd);
      await waitForFile(join(cwd, "ready"));
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
      const started = startLoopx(runtime, ["run", "w"], cwd);
      await waitForFile(join(cwd, "ready"));
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

  describe("the script's file disappears mid-loop (§5.1: launch error → exit 1)", () => {
    it.concurrent.for([
      ["renamed", "mv b.sh moved.sh"],
      ["replaced by a dangling symlink", "rm b.sh && ln -s does-not-exist.sh b.sh"],
      ["its workflow directory removed", "rm -rf ../other"],
    ] as const)("goto target %s → exit 1, one clear line naming it, nothing else runs", async ([, how], { expect }) => {
      const cwd = makeProject({
        ".loopx/w/index.sh": `echo index >> ${R}/trace\n${how}\necho '{"goto":"${how.includes("other") ? "other:b" : "b"}"}'\n`,
        ".loopx/w/b.sh": `echo b >> ${R}/trace\n`,
        ".loopx/other/b.sh": `echo other-b >> ${R}/trace\n`,
      });
      const started = startLoopx(runtime, ["run", "-n", "5", "w"], cwd);
      const result = await started.result;
      const label = how.includes("other") ? "other:b" : "w:b";
      const line = expectOneLoopxError(result, label);
      expect(line).toMatch(/no longer exists|cannot be started/);
      expect(traceLines(join(cwd, "trace"))).toEqual(["index"]);
      expect(describeProcs(taggedSurvivors(started.tag))).toBe("");
    });

    it.concurrent("goto target replaced by a directory of the same name → exit 1 naming it", async ({ expect }) => {
      const cwd = makeProject({
        ".loopx/w/index.sh": `echo index >> ${R}/trace\nrm b.sh && mkdir b.sh\necho '{"goto":"b"}'\n`,
        ".loopx/w/b.sh": `echo b >> ${R}/trace\n`,
      });
      const result = await startLoopx(runtime, ["run", "-n", "5", "w"], cwd).result;
      expectOneLoopxError(result, "w:b");
      expect(traceLines(join(cwd, "trace"))).toEqual(["index"]);
    });

    it.concurrent("a TS goto target replaced by a dangling symlink → exit 1 naming it", async ({ expect }) => {
      const cwd = makeProject({
        ".loopx/w/index.sh": `echo index >> ${R}/trace\nrm check.ts && ln -s gone.ts check.ts\necho '{"goto":"check"}'\n`,
        ".loopx/w/check.ts": 'import { appendFileSync } from "node:fs";\nappendFileSync(`${process.env.LOOPX_PROJECT_ROOT}/trace`, "check\\n");\n',
      });
      const result = await startLoopx(runtime, ["run", "-n", "5", "w"], cwd).result;
      expectOneLoopxError(result, "w:check");
      expect(traceLines(join(cwd, "trace"))).toEqual(["index"]);
    });

    it.concurrent("the starting script deleted from outside while the loop runs → exit 1 within an iteration, naming it", async ({ expect }) => {
      const cwd = makeProject({ ".loopx/w/index.sh": `echo $$ >> ${R}/trace\nsleep 0.2\n` });
      const started = startLoopx(runtime, ["run", "w"], cwd);
      const trace = join(cwd, "trace");
      expect(await waitFor(() => traceLines(trace).length >= 3, 15_000)).toBe(true);
      rmSync(join(cwd, ".loopx", "w", "index.sh"));
      const deletedAt = Date.now();
      const result = await started.result;
      // The iteration running at deletion time still completes (bash holds the file open).
      expect(started.exitedAt() - deletedAt).toBeLessThan(3000);
      expectOneLoopxError(result, "w:index");
      for (const pid of traceLines(trace).map(Number)) expect(processAlive(pid)).toBe(false);
      expect(describeProcs(taggedSurvivors(started.tag))).toBe("");
    });
  });

  describe("a script killed by a signal itself → exit 1 (never 128+N), stdout not parsed", () => {
    it.concurrent.for([
      ["SIGINT", "INT"],
      ["SIGTERM", "TERM"],
      ["SIGSEGV", "SEGV"],
      ["SIGKILL", "KILL"],
    ] as const)("a bash script that kills itself with %s", async ([signal, name], { expect }) => {
      const cwd = makeProject({
        // Valid stop JSON first: a script that died of a signal must not be parsed as stopping.
        ".loopx/w/index.sh": `echo run >> ${R}/trace\necho '{"stop":true}'\nkill -${name} $$\nsleep 5\n`,
      });
      const result = await startLoopx(runtime, ["run", "-n", "3", "w"], cwd).result;
      expectOneLoopxError(result, "w:index", signal);
      expect(traceLines(join(cwd, "trace"))).toEqual(["run"]);
    });

    it.concurrent("a TS script that SIGKILLs itself after output-like stdout", async ({ expect }) => {
      const cwd = makeProject({
        ".loopx/w/index.ts": 'process.stdout.write(JSON.stringify({ stop: true }));\nprocess.kill(process.pid, "SIGKILL");\nsetTimeout(() => {}, 5000);\n',
      });
      const result = await startLoopx(runtime, ["run", "-n", "3", "w"], cwd).result;
      expectOneLoopxError(result, "w:index", "SIGKILL");
    });

    it.concurrent.for(["SIGTERM", "SIGINT"] as const)(
      "the script killed from outside loopx with %s → exit 1, not 128+N; loopx itself was not signalled",
      async (signal, { expect }) => {
        const cwd = makeProject({ ".loopx/w/index.sh": `echo $$ > ${R}/l1.pid\nsleep 1000\n` });
        const started = startLoopx(runtime, ["run", "w"], cwd);
        const [pid] = await treePids(cwd, 1);
        // Kill the whole script group (as a supervisor or the OOM killer of a cgroup might).
        process.kill(-pid!, signal);
        const result = await started.result;
        expectOneLoopxError(result, "w:index");
        expect(describeProcs(taggedSurvivors(started.tag))).toBe("");
      },
    );

    it.concurrent("a grandchild killed by a signal does not fail the loop when the script itself exits 0", async ({ expect }) => {
      const cwd = makeProject({
        ".loopx/w/index.sh": `echo run >> ${R}/trace\nsleep 1000 &\nkill -KILL $!\nwait\necho '{"result":"ok"}'\n`,
      });
      const result = await startLoopx(runtime, ["run", "-n", "2", "w"], cwd).result;
      expect(result.stderr).not.toContain("loopx:"); // bash itself reports "Killed", loopx nothing
      expect(result.code).toBe(0);
      expect(traceLines(join(cwd, "trace"))).toEqual(["run", "run"]);
    });
  });

  describe("programmatic API: break, return() and abort leave no survivors", () => {
    /** A consumer project: consumer.mjs + node_modules/loopx → this package. */
    function consumer(source: string, files: Record<string, string>): string {
      const dir = makeProject({ "consumer.mjs": source, ...files });
      makeSymlink(ROOT, join(dir, "node_modules", "loopx"));
      return dir;
    }

    /** Runs consumer.mjs; returns its last stdout line as JSON, its exit, and its tag. */
    async function runConsumer(dir: string) {
      const tag = randomUUID();
      const startedAt = Date.now();
      const result = await runCommand(runtime.exe, ["consumer.mjs"], {
        cwd: dir,
        env: isolatedEnv({ HARDENING_TAG: tag }),
        timeoutMs: 30_000,
      });
      const exitedAt = Date.now();
      const last = result.stdout.trim().split("\n").pop() ?? "";
      let json: any;
      try {
        json = JSON.parse(last);
      } catch {
        throw new Error(`consumer printed no JSON (code ${result.code}):\n${result.stdout}\n${result.stderr}`);
      }
      return { ...result, json, tag, startedAt, exitedAt };
    }

    /** Consumer-side helpers: liveness through /proc (zombies are dead) and the tree's pids. */
    const PRELUDE = `
      import { run, runPromise } from "loopx";
      import { existsSync, readFileSync } from "node:fs";
      const alive = (pid) => { try { const s = readFileSync("/proc/" + pid + "/status", "utf8"); const st = s.match(/^State:\\s+(\\S)/m)[1]; return st !== "Z" && st !== "X"; } catch { return false; } };
      const until = async (f) => { while (!f()) await new Promise((r) => setTimeout(r, 20)); };
      const pids = () => [1, 2, 3].map((n) => Number(readFileSync("l" + n + ".pid", "utf8")));
      const unhandled = [];
      process.on("unhandledRejection", (e) => unhandled.push(String(e)));
    `;

    it.concurrent("break after a yield: no further script starts, every recorded process is gone, the consumer exits at once", async ({ expect }) => {
      const dir = consumer(
        `${PRELUDE}
         const seen = [];
         for await (const output of run("w")) { seen.push(output); if (seen.length === 3) break; }
         const breakAt = Date.now();
         await new Promise((r) => setTimeout(r, 500));
         const ran = readFileSync("ran", "utf8").split("\\n").filter(Boolean).map(Number);
         console.log(JSON.stringify({ seen, ran, anyAlive: ran.some(alive), unhandled, breakAt }));`,
        {
          ".loopx/w/index.sh": 'echo $$ >> "$LOOPX_PROJECT_ROOT/ran"\n(sleep 0.05) \necho \'{"result":"a","goto":"b"}\'\n',
          ".loopx/w/b.sh": 'echo $$ >> "$LOOPX_PROJECT_ROOT/ran"\necho \'{"result":"b"}\'\n',
        },
      );
      const result = await runConsumer(dir);
      expect(result.code).toBe(0);
      expect(result.json.seen).toEqual([{ result: "a", goto: "b" }, { result: "b" }, { result: "a", goto: "b" }]);
      expect(result.json.ran).toHaveLength(3);
      expect(result.json.anyAlive).toBe(false);
      expect(result.json.unhandled).toEqual([]);
      // Nothing loopx left behind (timer, child, handle) keeps the consumer alive after the loop.
      expect(result.exitedAt - result.json.breakAt).toBeLessThan(500 + 2000);
      expect(describeProcs(taggedSurvivors(result.tag))).toBe("");
    });

    it.concurrent("return() while a three-level tree runs: the whole tree is gone when return() resolves", async ({ expect }) => {
      const dir = consumer(
        `${PRELUDE}
         const gen = run("w");
         const pending = gen.next();
         await until(() => existsSync("ready"));
         const tree = pids();
         const before = tree.map(alive);
         const t0 = Date.now();
         const r = await gen.return();
         const ms = Date.now() - t0;
         const after = tree.map(alive);
         const p = await pending.then((v) => "resolved:" + JSON.stringify(v), (e) => "rejected:" + e.name);
         console.log(JSON.stringify({ r, p, before, after, ms, unhandled }));`,
        BASH_TREE,
      );
      const result = await runConsumer(dir);
      expect(result.code).toBe(0);
      expect(result.json.before).toEqual([true, true, true]);
      expect(result.json.after).toEqual([false, false, false]);
      expect(result.json.r).toEqual({ done: true });
      expect(result.json.p).toBe('resolved:{"done":true}');
      expect(result.json.ms).toBeLessThan(4500);
      expect(result.json.unhandled).toEqual([]);
      expect(describeProcs(taggedSurvivors(result.tag))).toBe("");
    });

    it.concurrent("return() on a tree that ignores SIGTERM: SIGKILL after 5 s, nothing survives return()", async ({ expect }) => {
      const dir = consumer(
        `${PRELUDE}
         const gen = run("w");
         const pending = gen.next();
         await until(() => existsSync("ready"));
         const tree = pids();
         const t0 = Date.now();
         let at3s;
         setTimeout(() => (at3s = tree.map(alive)), 3000);
         const r = await gen.return();
         const ms = Date.now() - t0;
         const after = tree.map(alive);
         await pending.catch(() => {});
         console.log(JSON.stringify({ r, at3s, after, ms, unhandled }));`,
        TS_TREE_IGNORING_TERM,
      );
      const result = await runConsumer(dir);
      expect(result.code).toBe(0);
      expect(result.json.at3s).toEqual([true, true, true]);
      expect(result.json.after).toEqual([false, false, false]);
      expect(result.json.ms).toBeGreaterThanOrEqual(4500);
      expect(result.json.ms).toBeLessThan(9000);
      expect(result.json.unhandled).toEqual([]);
      expect(describeProcs(taggedSurvivors(result.tag))).toBe("");
    });

    it.concurrent("abort while a three-level tree runs: AbortError only once every level is gone", async ({ expect }) => {
      const dir = consumer(
        `${PRELUDE}
         const ac = new AbortController();
         const gen = run("w", { signal: ac.signal });
         const pending = gen.next();
         await until(() => existsSync("ready"));
         const tree = pids();
         const t0 = Date.now();
         ac.abort();
         let outcome, atRejection;
         try { await pending; outcome = "no-error"; } catch (e) { outcome = e.name; atRejection = tree.map(alive); }
         const ms = Date.now() - t0;
         const next = await gen.next().then((v) => JSON.stringify(v), (e) => "threw:" + e.name);
         console.log(JSON.stringify({ outcome, atRejection, ms, next, unhandled }));`,
        TS_TREE,
      );
      const result = await runConsumer(dir);
      expect(result.code).toBe(0);
      expect(result.json.outcome).toBe("AbortError");
      expect(result.json.atRejection).toEqual([false, false, false]);
      expect(result.json.ms).toBeLessThan(4500); // SIGTERM ends this tree; no grace period needed
      expect(result.json.next).toBe('{"done":true}');
      expect(result.json.unhandled).toEqual([]);
      expect(describeProcs(taggedSurvivors(result.tag))).toBe("");
    });

    it.concurrent("abort on a tree that ignores SIGTERM: AbortError after the 5 s SIGKILL, every level gone by then", async ({ expect }) => {
      const dir = consumer(
        `${PRELUDE}
         const ac = new AbortController();
         const gen = run("w", { signal: ac.signal });
         const pending = gen.next();
         await until(() => existsSync("ready"));
         const tree = pids();
         const t0 = Date.now();
         ac.abort();
         let outcome, atRejection;
         try { await pending; outcome = "no-error"; } catch (e) { outcome = e.name; atRejection = tree.map(alive); }
         console.log(JSON.stringify({ outcome, atRejection, ms: Date.now() - t0, unhandled }));`,
        TS_TREE_IGNORING_TERM,
      );
      const result = await runConsumer(dir);
      expect(result.code).toBe(0);
      expect(result.json.outcome).toBe("AbortError");
      expect(result.json.atRejection).toEqual([false, false, false]);
      expect(result.json.ms).toBeGreaterThanOrEqual(4500);
      expect(result.json.ms).toBeLessThan(9000);
      expect(result.json.unhandled).toEqual([]);
      expect(describeProcs(taggedSurvivors(result.tag))).toBe("");
    });

    it.concurrent("runPromise aborted mid-run rejects with AbortError after the tree is gone", async ({ expect }) => {
      const dir = consumer(
        `${PRELUDE}
         const ac = new AbortController();
         const p = runPromise("w", { signal: ac.signal });
         await until(() => existsSync("ready"));
         const tree = pids();
         ac.abort();
         let outcome, atRejection;
         try { await p; outcome = "resolved"; } catch (e) { outcome = e.name; atRejection = tree.map(alive); }
         console.log(JSON.stringify({ outcome, atRejection, unhandled }));`,
        BASH_TREE,
      );
      const result = await runConsumer(dir);
      expect(result.code).toBe(0);
      expect(result.json.outcome).toBe("AbortError");
      expect(result.json.atRejection).toEqual([false, false, false]);
      expect(result.json.unhandled).toEqual([]);
      expect(describeProcs(taggedSurvivors(result.tag))).toBe("");
    });

    it.concurrent("abort and return() racing each other: no unhandled rejection, no survivor", async ({ expect }) => {
      const dir = consumer(
        `${PRELUDE}
         const ac = new AbortController();
         const gen = run("w", { signal: ac.signal });
         const pending = gen.next().then((v) => "resolved:" + JSON.stringify(v), (e) => "rejected:" + e.name);
         await until(() => existsSync("ready"));
         const tree = pids();
         ac.abort();
         const r = await gen.return();
         const after = tree.map(alive);
         const p = await pending;
         await new Promise((r) => setTimeout(r, 100));
         console.log(JSON.stringify({ r, p, after, unhandled }));`,
        BASH_TREE,
      );
      const result = await runConsumer(dir);
      expect(result.code).toBe(0);
      expect(result.json.r).toEqual({ done: true });
      expect(["rejected:AbortError", 'resolved:{"done":true}']).toContain(result.json.p);
      expect(result.json.after).toEqual([false, false, false]);
      expect(result.json.unhandled).toEqual([]);
      expect(describeProcs(taggedSurvivors(result.tag))).toBe("");
    });
  });
});
