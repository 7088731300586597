/**
 * Many runs in one program: 20 concurrent `runPromise()` / `run()` add one set
 * of process listeners, not one per run — no MaxListenersExceededWarning in the host's stderr —
 * and leave none behind. The API is a library: under Node and Bun (the binary has no host program).
 */
import { describe, expect, it } from "vitest";
import { RUNTIMES, consumer, runConsumer } from "../../helpers.js";

const SOURCE = `
import { run, runPromise } from "loopx";
const counts = () => Object.fromEntries(["exit", "SIGINT", "SIGTERM", "SIGHUP"].map((name) => [name, process.listenerCount(name)]));
const before = counts();
let during;
const many = Array.from({ length: 20 }, async (_, i) => {
  if (i % 2 === 0) return runPromise("main", { maxIterations: 2 });
  const outputs = [];
  for await (const output of run("main", { maxIterations: 2 })) outputs.push(output);
  return outputs;
});
await new Promise((resolve) => setTimeout(resolve, 300));
during = counts();
const results = await Promise.all(many);
await new Promise((resolve) => setTimeout(resolve, 100));
console.log(JSON.stringify({ before, during, after: counts(), runs: results.length, outputs: results.map((r) => r.length) }));
`;

describe.each(RUNTIMES)("api: many concurrent runs ($name)", (runtime) => {
  it("20 runs at once: one set of process listeners, no warning, none left", async () => {
    const dir = consumer(SOURCE, { ".loopx/main/index.sh": "#!/bin/bash\nsleep 0.5\necho '{\"result\":\"x\"}'\n" });
    const result = await runConsumer(runtime, dir, { timeoutMs: 90_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toContain("MaxListenersExceededWarning");
    expect(result.stderr).toBe("");
    const { before, during, after, runs, outputs } = result.json;
    expect(runs).toBe(20);
    expect(outputs).toEqual(Array(20).fill(2));
    for (const name of ["exit", "SIGINT", "SIGTERM", "SIGHUP"]) expect(during[name] - before[name], name).toBeLessThanOrEqual(2);
    expect(after).toEqual(before);
  });
});
