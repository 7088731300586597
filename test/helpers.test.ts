/**
 * The test harness itself (test/helpers/, re-exported by test/helpers.ts), where a broken helper
 * would let tests pass that should not: the permission cases run as an unprivileged user, never
 * skipped, even as root.
 */
import { spawn } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BUN, NODE, giveToUnprivileged, isolatedEnv, runCommand, sleep, startLoopx, procStatFields, tempDir, unprivileged, waitForPid } from "./helpers.js";

describe("permission cases run unprivileged, never skipped", () => {
  it("the unprivileged runner really drops root: a mode-000 file is unreadable to it", async () => {
    const dir = tempDir("loopx-unpriv-");
    writeFileSync(join(dir, "f"), "x");
    giveToUnprivileged(dir);
    chmodSync(join(dir, "f"), 0o000);
    for (const exe of [NODE, BUN]) {
      const [command, args] = unprivileged(exe, ["-e", `try { require("fs").readFileSync(${JSON.stringify(join(dir, "f"))}); console.log("read") } catch (e) { console.log(e.code) }`], dir);
      const result = await runCommand(command, args, { cwd: dir, env: isolatedEnv() });
      expect(result.stdout).toBe("EACCES\n");
    }
  });
});

describe("a command left running when its test ended", () => {
  it("its timeout rejects for a caller that awaits, and is no unhandled rejection for one that does not", async () => {
    const unhandled: unknown[] = [];
    const listener = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", listener);
    try {
      // As when an assertion fails while loopx runs in the background: nobody awaits it any more.
      void runCommand("sleep", ["5"], { cwd: tempDir(), env: isolatedEnv(), timeoutMs: 100 });
      await expect(runCommand("sleep", ["5"], { cwd: tempDir(), env: isolatedEnv(), timeoutMs: 100 })).rejects.toThrow(/timed out after 100 ms: sleep 5/);
      // startLoopx's result too (seen in a fresh-clone CI: a sandbox test failed while its background
      // `loopx run` went on, and its timeout became the run's one error, with every test passed).
      const sleeper = { name: "binary" as const, exe: "sleep", prefix: [] };
      void startLoopx(sleeper, ["5"], { cwd: tempDir(), env: isolatedEnv(), timeoutMs: 100 });
      await expect(startLoopx(sleeper, ["5"], { cwd: tempDir(), env: isolatedEnv(), timeoutMs: 100 }).result).rejects.toThrow(/timed out after 100 ms: sleep 5/);
      await sleep(300);
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", listener);
    }
  });
});

describe("no test can signal its own process group (test/setup/kill-guard.ts)", () => {
  it("pid 0, -0, 1, -1, NaN and the worker's own group are refused, naming the pid; a real pid is signalled", async () => {
    const ownGroup = Number(procStatFields("self")[2]);
    // Signal 0 only checks: without the guard these calls would succeed (and fail this test) rather than end the run.
    for (const pid of [0, -0, 1, -1, Number.NaN, -ownGroup]) {
      expect(() => process.kill(pid, 0)).toThrow(/^test refused to signal pid -?\w+: not one of its own processes/);
    }
    const pidFile = join(tempDir("loopx-pid-"), "b.pid");
    writeFileSync(pidFile, "");
    const waiting = waitForPid(pidFile, 5000);
    const child = spawn("sleep", ["30"]);
    await sleep(100);
    writeFileSync(pidFile, `${child.pid}\n`);
    expect(await waiting).toBe(child.pid);
    expect(process.kill(child.pid!, "SIGKILL")).toBe(true);
  });
});
