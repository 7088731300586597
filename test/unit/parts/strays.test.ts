/**
 * findStrays / endStrays (src/parts/strays.ts) on real processes: only an exact
 * LOOPX_RUN_ID=<id> entry counts (not a longer id, not another variable ending in it), loopx's own
 * process is never listed, zombies are not listed, and endStrays ends SIGTERM-ignoring processes
 * with SIGKILL once the deadline passes.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { endStrays, findStrays } from "../../../src/parts/strays.js";

const started: ChildProcess[] = [];
afterEach(() => {
  for (const child of started.splice(0)) child.kill("SIGKILL");
});

function start(env: Record<string, string>, command = "exec sleep 60"): ChildProcess {
  const child = spawn("/bin/bash", ["-c", command], { stdio: "ignore", env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env } });
  started.push(child);
  return child;
}

async function settled(children: ChildProcess[]): Promise<void> {
  await Promise.all(children.map((child) => new Promise((resolve) => child.once("spawn", resolve))));
  await new Promise((resolve) => setTimeout(resolve, 150)); // let bash exec sleep
}

describe("findStrays", () => {
  it("lists exactly the live processes whose environment holds LOOPX_RUN_ID=<id>", async () => {
    const id = `unit${process.pid}${Date.now().toString(36)}`;
    const exact = start({ LOOPX_RUN_ID: id });
    const first = start({ A: "1", LOOPX_RUN_ID: id, Z: "2" });
    const longer = start({ LOOPX_RUN_ID: `${id}x` });
    const shorter = start({ LOOPX_RUN_ID: id.slice(0, -1) });
    const other = start({ NOT_LOOPX_RUN_ID: id });
    const inValue = start({ X: `LOOPX_RUN_ID=${id}y` });
    await settled([exact, first, longer, shorter, other, inValue]);
    const found = findStrays(id);
    expect(found.map((stray) => stray.pid).sort()).toEqual([exact.pid!, first.pid!].sort());
    expect(found.every((stray) => stray.command === "sleep 60")).toBe(true);
  });

  it("never lists its own process", () => {
    const id = `self${process.pid}`;
    const saved = process.env.LOOPX_RUN_ID;
    process.env.LOOPX_RUN_ID = id; // /proc/self/environ is fixed at exec; this only guards the skip
    try {
      expect(findStrays(id).map((stray) => stray.pid)).not.toContain(process.pid);
    } finally {
      if (saved === undefined) delete process.env.LOOPX_RUN_ID;
      else process.env.LOOPX_RUN_ID = saved;
    }
  });
});

describe("endStrays", () => {
  it("SIGTERMs, then SIGKILLs what ignores SIGTERM once the deadline passes", async () => {
    const id = `end${process.pid}${Date.now().toString(36)}`;
    const polite = start({ LOOPX_RUN_ID: id });
    const stubborn = start({ LOOPX_RUN_ID: id }, "trap '' TERM; exec sleep 60");
    await settled([polite, stubborn]);
    expect(findStrays(id)).toHaveLength(2);
    const startedAt = Date.now();
    const left = await endStrays(id, Date.now() + 600);
    const elapsed = Date.now() - startedAt;
    expect(left).toEqual([]);
    expect(findStrays(id)).toEqual([]); // zombies (not reaped yet) are not listed
    expect(elapsed).toBeGreaterThanOrEqual(550);
    expect(elapsed).toBeLessThan(5000);
  });

  it("returns at once when nothing carries the id", async () => {
    const startedAt = Date.now();
    expect(await endStrays(`none${process.pid}`, Date.now() + 5000)).toEqual([]);
    expect(Date.now() - startedAt).toBeLessThan(1000);
  });
});
