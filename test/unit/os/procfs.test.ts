/**
 * The one process reader (src/os/procfs.ts) on real processes: what process groups, strays
 * and run records ask of it. Linux (/proc); the macOS fallbacks are exercised by the strays and
 * records tests there.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { groupHasLiveProcess, hasProcfs, listPids, processCommand, processesWithVariable, processRunning, processUid, readProcess } from "../../../src/os/procfs.js";
import { waitFor } from "../../helpers.js";

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
});

function sleeper(env: Record<string, string> = {}, detached = false): ChildProcess {
  const child = spawn("sleep", ["30"], { env: { PATH: process.env.PATH, ...env }, detached, stdio: "ignore" });
  children.push(child);
  return child;
}

describe.runIf(process.platform === "linux")("procfs (Linux)", () => {
  it("reads this process: pid, group, state, start time, owner, command line", () => {
    expect(hasProcfs()).toBe(true);
    expect(listPids()).toContain(process.pid);
    const self = readProcess(process.pid)!;
    expect(self).toMatchObject({ pid: process.pid, live: true });
    expect(self.pgid).toBeGreaterThan(0);
    expect(self.startedAt).toBeLessThanOrEqual(Date.now());
    expect(self.startedAt).toBeGreaterThan(Date.now() - 24 * 3600_000);
    expect(processUid(process.pid)).toBe(process.getuid!());
    expect(processCommand(process.pid)).toContain(process.execPath.split("/").pop()!);
  });

  it("a gone pid reads as nothing and is not running", async () => {
    const child = sleeper();
    const pid = child.pid!;
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
    expect(await waitFor(() => readProcess(pid) === undefined, 5000)).toBe(true);
    expect(processRunning(pid)).toBe(false);
  });

  it("processRunning: a process started after the given time is a reused pid, not the run's", () => {
    const child = sleeper();
    const started = readProcess(child.pid!)!.startedAt!;
    expect(processRunning(child.pid!)).toBe(true);
    expect(processRunning(child.pid!, started + 1000)).toBe(true);
    expect(processRunning(child.pid!, started - 60_000)).toBe(false);
  });

  it("groupHasLiveProcess: true while a member of the group lives, false once it is gone", async () => {
    const child = sleeper({}, true); // leads its own group
    expect(readProcess(child.pid!)!.pgid).toBe(child.pid);
    expect(groupHasLiveProcess(child.pid!)).toBe(true);
    child.kill("SIGKILL");
    expect(await waitFor(() => groupHasLiveProcess(child.pid!) === false, 5000)).toBe(true);
  });

  it("processesWithVariable: exactly NAME=value, never a longer value or this process", () => {
    const tag = `procfs-${process.pid}-${Date.now()}`;
    const exact = sleeper({ LOOPX_PROCFS_TEST: tag });
    sleeper({ LOOPX_PROCFS_TEST: `${tag}x` });
    sleeper({ OTHER: `x${tag}` });
    const found = processesWithVariable(`LOOPX_PROCFS_TEST=${tag}`);
    expect(found.map((entry) => entry.pid)).toEqual([exact.pid]);
    expect(found[0]!.command).toBe("sleep 30");
  });
});
