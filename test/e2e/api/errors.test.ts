/**
 * The public error classes: a consumer package imports them from "loopx" and tells a run's endings
 * apart with `instanceof` (not by `error.name`), under node and bun. Each carries its machine fields:
 * `exitCode` (the CLI's exit code for it), and a failed script's `script` facts.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, RUNTIMES, isolatedEnv, makeProject, makeSymlink, runCommand, sh } from "../../helpers.js";

const PROGRAM = `import { runPromise, LoopxError, UsageError, ScriptFailedError, TimeoutError, BudgetError } from "loopx";
const classes = { LoopxError, UsageError, ScriptFailedError, TimeoutError, BudgetError };
async function ending(target, options) {
  try {
    await runPromise(target, options);
    return { resolved: true };
  } catch (error) {
    const is = Object.keys(classes).filter((name) => error instanceof classes[name]);
    return { is, exitCode: error.exitCode, script: error.script };
  }
}
console.log(JSON.stringify({
  failed: await ending("fail"),
  timeout: await ending("slow", { timeout: 300 }),
  budget: await ending("spend", { maxCost: 0.2, maxIterations: 9 }),
  invalid: await ending("fail", { maxIterations: -1 }),
}));
`;

describe.each(RUNTIMES)("errors exported from loopx ($name)", (runtime) => {
  it("each ending is an instance of its exported class, with its exit code", async () => {
    const dir = makeProject({
      "consumer.mjs": PROGRAM,
      ".loopx/fail/index.sh": sh("echo oops >&2\nexit 7"),
      ".loopx/slow/index.sh": sh("sleep 30"),
      ".loopx/spend/index.sh": sh('"$LOOPX_BIN" receipt --cost 0.1 --kind billed\necho \'{"result":"x"}\''),
    });
    makeSymlink(ROOT, join(dir, "node_modules", "loopx"));
    const result = await runCommand(runtime.exe, ["consumer.mjs"], { cwd: dir, env: isolatedEnv(), timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    const seen = JSON.parse(result.stdout);
    expect(seen.failed).toMatchObject({ is: ["LoopxError", "ScriptFailedError"], exitCode: 1, script: { exitCode: 7, signal: null } });
    expect(seen.timeout).toEqual({ is: ["LoopxError", "TimeoutError"], exitCode: 124 });
    expect(seen.budget).toEqual({ is: ["LoopxError", "BudgetError"], exitCode: 3 });
    expect(seen.invalid.is).toEqual(["LoopxError"]);
  });
});
