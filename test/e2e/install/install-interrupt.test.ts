import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RUNTIMES, makeProject, runLoopx, tempDir, waitFor } from "../../helpers.js";
import { fileUrl, installEnv, listDir, makeBareRepo, snapshot, startServer, type TreeSpec } from "../../fixtures/install/support.js";

/** A server that accepts every request and never answers (the sockets are destroyed on stop). */
async function silentServer() {
  return startServer(() => {
    /* never respond */
  });
}

const STALLS = RUNTIMES.flatMap((runtime) => [
  { runtime, name: runtime.name, stall: "before the response" },
  { runtime, name: runtime.name, stall: "in the middle of the body" },
]);

describe("loopx install: a stalled download times out with a clear error", () => {
  // The only slow tests (the stall timeout is 15 s); they all run concurrently.
  it.concurrent.each(STALLS)("$name: a server that goes silent $stall", async ({ runtime, stall }) => {
    const server =
      stall === "before the response"
        ? await silentServer()
        : await startServer((_req, res) => {
            res.writeHead(200, { "content-length": 100_000 });
            res.write(Buffer.alloc(10_000, 1)); // then nothing, forever
          });
    try {
      const cwd = makeProject({ ".loopx/keep/index.sh": "echo\n" });
      const before = snapshot(join(cwd, ".loopx"));
      const { env, tmp } = installEnv();
      const started = Date.now();
      const result = await runLoopx(runtime, ["install", `${server.origin}/slow.tgz`], { cwd, env, timeoutMs: 40_000 });
      const elapsed = Date.now() - started;
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^loopx: cannot download http:\/\/127\.0\.0\.1:\d+\/slow\.tgz: the server sent no data for 15 s \(timed out\)\n$/);
      expect(elapsed).toBeGreaterThan(14_000);
      expect(elapsed).toBeLessThan(30_000);
      expect(snapshot(join(cwd, ".loopx"))).toEqual(before);
      expect(listDir(tmp)).toEqual([]);
    } finally {
      await server.stop();
    }
  }, 45_000);
});

describe.each(RUNTIMES)("loopx install interrupted ($name)", (runtime) => {
  it.each([
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const)("%s during a download removes every temp file, leaves no .loopx/, exits %i", async (signal, code) => {
    const server = await silentServer();
    try {
      const cwd = makeProject();
      const { env, tmp } = installEnv();
      const result = await runLoopx(runtime, ["install", `${server.origin}/flow.tgz`], {
        cwd,
        env,
        onSpawn: (child) => {
          void waitFor(() => server.requests.length > 0, 10_000).then(() => child.kill(signal));
        },
      });
      expect(result.code).toBe(code);
      expect(result.stderr).toBe(`loopx: install interrupted by ${signal}; nothing was installed\n`);
      expect(existsSync(join(cwd, ".loopx"))).toBe(false);
      expect(listDir(tmp)).toEqual([]);
    } finally {
      await server.stop();
    }
  });

  it("SIGINT during a git clone kills git and removes the partial clone", async () => {
    const server = await silentServer();
    try {
      const cwd = makeProject({ ".loopx/keep/index.sh": "echo\n" });
      const before = snapshot(join(cwd, ".loopx"));
      const { env, tmp } = installEnv();
      const result = await runLoopx(runtime, ["install", `${server.origin}/org/repo.git`], {
        cwd,
        env,
        onSpawn: (child) => {
          void waitFor(() => server.requests.length > 0, 10_000).then(() => child.kill("SIGINT"));
        },
      });
      expect(result.code).toBe(130);
      expect(result.stderr).toBe("loopx: install interrupted by SIGINT; nothing was installed\n");
      expect(snapshot(join(cwd, ".loopx"))).toEqual(before);
      // git (in its own process group) was killed: its connection to the server goes away.
      expect(await waitFor(() => listDir(tmp).length === 0, 5000)).toBe(true);
    } finally {
      await server.stop();
    }
  });

  it("SIGKILL at any moment never leaves anything in .loopx/ that run rejects or takes for a workflow", async () => {
    const spec: TreeSpec = {};
    const names = ["w1", "w2", "w3", "w4", "w5", "w6"];
    for (const name of names) {
      spec[`${name}/index.sh`] = `#!/bin/bash\necho '{"stop":true}'\n`;
      for (let i = 0; i < 150; i++) spec[`${name}/lib/file-${i}.md`] = `${name} ${i}\n`.repeat(20);
    }
    const bare = makeBareRepo(spec, tempDir(), "big.git");
    const reference = makeProject();
    const { env } = installEnv();
    const started = Date.now();
    const full = await runLoopx(runtime, ["install", fileUrl(bare)], { cwd: reference, env });
    const duration = Date.now() - started;
    expect(full.code).toBe(0);
    const expected = Object.fromEntries(names.map((name) => [name, snapshot(join(reference, ".loopx", name))]));

    const oldW2 = snapshot(join(makeProject({ "w2/index.sh": "echo old\n" }), "w2"));
    // Kill at fixed points of a typical run, and at fixed delays after staging has started
    // (polled), which is where the stage and commit windows are.
    const plans: Array<{ at: number } | { afterStaging: number } | { atCommit: true }> = [
      { at: Math.round(duration * 0.3) },
      { afterStaging: 0 },
      { afterStaging: 40 },
      { afterStaging: 120 },
      { afterStaging: 250 },
      { atCommit: true },
    ];
    const seen = new Set<string>();
    for (const plan of plans) {
      const cwd = makeProject({ ".loopx/w2/index.sh": "echo old\n" });
      const loopx = join(cwd, ".loopx");
      const killed = await runLoopx(runtime, ["install", "-y", fileUrl(bare)], {
        cwd,
        env,
        onSpawn: (child) => {
          if ("at" in plan) {
            setTimeout(() => child.kill("SIGKILL"), plan.at);
            return;
          }
          const poll = (): void => {
            if (child.exitCode !== null || child.signalCode !== null) return;
            const entries = readdirSync(loopx);
            if ("atCommit" in plan) {
              if (entries.includes("w1")) child.kill("SIGKILL");
              else setImmediate(poll);
            } else if (entries.some((entry) => entry.startsWith(".install-"))) {
              setTimeout(() => child.kill("SIGKILL"), plan.afterStaging);
            } else setImmediate(poll);
          };
          poll();
        },
      });
      const entries = readdirSync(loopx);
      seen.add(`${killed.signal ?? killed.code}:${entries.map((e) => (e.startsWith(".install-") ? ".install-*" : e)).join(",")}`);
      for (const entry of entries) {
        if (entry.startsWith(".install-")) continue; // a staging directory: never a workflow (checked below)
        expect(names).toContain(entry);
        const tree = snapshot(join(loopx, entry));
        if (entry === "w2" && JSON.stringify(tree) === JSON.stringify(oldW2)) continue; // not replaced yet
        expect({ plan, entry, tree }).toEqual({ plan, entry, tree: expected[entry] });
      }
      const help = await runLoopx(runtime, ["run", "-h"], { cwd, env });
      expect({ plan, stderr: help.stderr, code: help.code }).toEqual({ plan, stderr: "", code: 0 });
      expect(help.stdout).not.toContain(".install-");
      if (plan === plans[plans.length - 1]) {
        // A later install is not disturbed by what a killed one left behind.
        const again = await runLoopx(runtime, ["install", "-y", fileUrl(bare)], { cwd, env });
        expect(again.code).toBe(0);
        for (const name of names) expect(snapshot(join(loopx, name))).toEqual(expected[name]);
      }
    }
    if (process.env["DEBUG_KILL"]) console.log(runtime.name, duration, [...seen]);
  }, 120_000);
});
