/**
 * Journey: a subscription user with a budget. Claude on a subscription reports estimates only, and
 * most of its tokens are cache reads (the context read again every turn). With the standalone
 * binary on PATH: `--max-cost` does not count estimates, and says so once (a warning on the first
 * such receipt) and in the summary line; `--max-tokens` counts input, cache writes, output and
 * reasoning, not cache reads, as `run -h`, the budget line and the README say; a budget of 0, like
 * `-n 0`, only validates the run (nothing recorded, no hook).
 */
import { existsSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BINARY, isolatedEnv, makeProject, runCommand, sh, tempDir } from "../helpers.js";

/** Each iteration, what Claude Code on a subscription reports: an estimate, and 100k tokens read from the cache. */
const SUBSCRIPTION = {
  ".loopx/claude/index.sh": sh(
    '"$LOOPX_BIN" receipt --json \'{"cost":{"usd":1,"kind":"estimate"},"tokens":{"input":100,"output":50,"cacheRead":100000,"cacheWrite":200},"model":"claude-sonnet-4-5"}\'',
  ),
};

const loopxLines = (stderr: string) => stderr.split("\n").filter((line) => line.startsWith("loopx:"));

describe("journey: a subscription user with --max-cost and --max-tokens (the binary)", () => {
  const bin = tempDir("loopx-user-bin-");
  symlinkSync(BINARY, join(bin, "loopx"));
  const machine = () => {
    const env = isolatedEnv();
    env.PATH = `${bin}:${env.PATH}`;
    return env;
  };

  it("--max-cost says once, and in the summary, that it does not count the estimates; --max-tokens leaves cache reads out", { timeout: 90_000 }, async () => {
    const env = machine();
    const cwd = makeProject(SUBSCRIPTION);
    const loopx = (...args: string[]) => runCommand("loopx", args, { cwd, env, timeoutMs: 60_000 });

    const help = await loopx("run", "-h");
    expect(help.stdout.replace(/\s+/g, " ")).toContain("--max-tokens <count> Budget: no script starts once the run's tokens (input, cache write, output, reasoning; not cache reads) reach <count>");

    const cost = await loopx("run", "--summary", "--max-cost", "1", "-n", "3", "claude");
    expect(cost.code, cost.stderr).toBe(0);
    const lines = loopxLines(cost.stderr);
    expect(lines.filter((line) => line.startsWith("loopx: warning:"))).toEqual([
      "loopx: warning: --max-cost $1.00 counts billed cost only: the $1.00 this run reported so far as an estimate (a subscription's, say) does not count toward it unless you add --count-estimates",
    ]);
    expect(cost.stderr.trim().split("\n").at(-1)).toMatch(/reached -n 3 .*\$3\.00 est\. .* \(estimates not counted by --max-cost \$1\.00: add --count-estimates\) · run [0-9a-z]+$/);

    // Counted, the estimates stop it; no warning then.
    const counted = await loopx("run", "--max-cost", "1", "--count-estimates", "-n", "3", "claude");
    expect(counted.code).toBe(3);
    expect(loopxLines(counted.stderr)).toEqual(["loopx: budget reached: --max-cost $1.00 --count-estimates, the run used $1.00 billed + estimated"]);

    // 350 counted tokens an iteration (100 input, 50 output, 200 cache write); the 100k cache reads are not counted.
    const tokens = await loopx("run", "--max-tokens", "1000", "-n", "9", "claude");
    expect(tokens.code).toBe(3);
    expect(loopxLines(tokens.stderr)).toEqual([
      "loopx: budget reached: --max-tokens 1000, the run used 1050 tokens (input, cache write, output, reasoning; cache reads not counted: 300000)",
    ]);
  });

  it("--max-cost 0 and --max-tokens 0, like -n 0, only validate the run: exit 0, nothing recorded, no hook", { timeout: 60_000 }, async () => {
    const env = machine();
    const cwd = makeProject(SUBSCRIPTION);
    const hookRan = join(cwd, "hook-ran");
    for (const budget of [["-n", "0"], ["--max-cost", "0"], ["--max-tokens", "0"]]) {
      const result = await runCommand("loopx", ["run", ...budget, "--on-end", `touch ${hookRan}`, "claude"], { cwd, env });
      expect([budget, result.code, result.stderr]).toEqual([budget, 0, ""]);
    }
    expect(existsSync(hookRan)).toBe(false);
    expect(existsSync(join(env.XDG_STATE_HOME!, "loopx", "runs"))).toBe(false);
    // Validation still happens: a bad target is refused.
    const bad = await runCommand("loopx", ["run", "--max-cost", "0", "nope"], { cwd, env });
    expect(bad.code).toBe(1);
  });
});
