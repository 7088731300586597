/**
 * A long loop must not leak (spec §7.1: loops are meant to run for a long time). 1,000 iterations
 * of a no-op bash script; loopx's resident set size is read from outside through /proc at about
 * iteration 100 and at iteration 1,000, while the script holds the loop still for the sample.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { RUNTIMES, isolatedEnv, linuxOnly, makeProject, procMemoryKb, runLoopx, tempDir, waitFor } from "../../helpers.js";

const ITERATIONS = 1000;
const FIRST_SAMPLE = 100;
const MAX_GROWTH_KB = 20 * 1024;

linuxOnly.each(RUNTIMES)("run: memory over a long loop ($name)", (runtime) => {
  it(`runs ${ITERATIONS} iterations with bounded RSS growth`, { timeout: 150_000 }, async () => {
    const cwd = tempDir();
    const counter = join(cwd, "counter");
    const mark = (n: number) => join(cwd, `at-${n}`);
    const release = (n: number) => join(cwd, `release-${n}`);
    // Counts iterations with bash builtins only; at the two sample points it waits for the test
    // to read loopx's RSS, so the samples are taken at exactly those iterations.
    const pause = (n: number) =>
      `if [ "$n" -eq ${n} ]; then : > '${mark(n)}'; while [ ! -e '${release(n)}' ]; do sleep 0.02; done; fi\n`;
    makeProject(
      {
        ".loopx/w/index.sh": `echo x >> '${counter}'\nmapfile -t lines < '${counter}'\nn=\${#lines[@]}\n${pause(FIRST_SAMPLE)}${pause(ITERATIONS)}`,
      },
      cwd,
    );

    let child: ChildProcess | undefined;
    const startedAt = Date.now();
    const run = runLoopx(runtime, ["run", "-n", String(ITERATIONS), "w"], {
      cwd,
      env: isolatedEnv(),
      timeoutMs: 140_000,
      onSpawn: (c) => (child = c),
    });
    const pid = child!.pid!;

    expect(await waitFor(() => existsSync(mark(FIRST_SAMPLE)), 60_000)).toBe(true);
    const rssAt100 = procMemoryKb(pid, "VmRSS");
    const t100 = Date.now();
    writeFileSync(release(FIRST_SAMPLE), "");

    expect(await waitFor(() => existsSync(mark(ITERATIONS)), 120_000)).toBe(true);
    const t1000 = Date.now();
    const rssAt1000 = procMemoryKb(pid, "VmRSS");
    writeFileSync(release(ITERATIONS), "");

    const result = await run;
    const totalMs = Date.now() - startedAt;
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(readFileSync(counter, "utf8").split("\n").filter(Boolean)).toHaveLength(ITERATIONS);

    const msPerIteration = (t1000 - t100) / (ITERATIONS - FIRST_SAMPLE);
    const growthKb = rssAt1000 - rssAt100;
    console.log(
      `[${runtime.name}] ${ITERATIONS} iterations in ${totalMs} ms; ` +
        `${msPerIteration.toFixed(2)} ms/iteration (iterations ${FIRST_SAMPLE + 1}-${ITERATIONS}); ` +
        `RSS at ${FIRST_SAMPLE}: ${(rssAt100 / 1024).toFixed(1)} MB, at ${ITERATIONS}: ${(rssAt1000 / 1024).toFixed(1)} MB, ` +
        `growth ${(growthKb / 1024).toFixed(1)} MB`,
    );
    expect(growthKb).toBeLessThan(MAX_GROWTH_KB);
  });
});
