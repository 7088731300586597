/**
 * Totals and budgets, black-box under node, bun and the standalone binary: --max-cost
 * stops the run after the iteration that crossed it (exit 3, one line naming the budget and the
 * total), `runs resume --max-cost <more>` goes on from the totals; estimates count only with
 * --count-estimates; --max-tokens; budgets with records off; what a SIGKILLed loopx's script had
 * reported is kept and counted on resume; a receipt sent on Ctrl-C within the grace is kept.
 */
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RUNTIMES, consumer, isolatedEnv, makeProject, processAlive, runConsumer, sh, waitFor } from "../../helpers.js";
import { CHANNELS, events, loopx, recordIds, startLoopx, waitForEvent, type Channel } from "../../fixtures/control/support.js";

/** Each iteration: $0.10 billed (1000 input, 100 output tokens), then $1.00 estimated. */
const BILLED = {
  ".loopx/b/index.sh": sh(
    '"$LOOPX_BIN" receipt --cost 0.1 --kind billed --input 1000 --output 100 --model m-billed\n"$LOOPX_BIN" receipt --json \'{"cost":{"usd":1,"kind":"estimate"},"model":"m-sub"}\'',
  ),
};
/** Each iteration: $1.00 estimated, 100 tokens (a subscription). */
const ESTIMATED = { ".loopx/e/index.sh": sh('"$LOOPX_BIN" receipt --cost 1 --kind estimate --input 60 --output 40') };

const totalsOf = (stdout: string) => stdout.trim().split("\n").map((line) => JSON.parse(line)).find((line) => line.type === "totals");
const only = (stderr: string) => stderr.split("\n").filter((line) => line.startsWith("loopx:"));

describe.concurrent.each(CHANNELS)("budgets ($name)", (channel: Channel) => {
  it("--max-cost stops after the iteration that reached it (exit 3, one line); runs resume --max-cost more goes on from the totals, exact to the cent", async () => {
    const cwd = makeProject(BILLED);
    const env = isolatedEnv();
    const first = await loopx(channel, ["run", "-n", "20", "--max-cost", "0.3", "b"], cwd, env);
    expect(first.code, first.stderr).toBe(3);
    expect(only(first.stderr)).toEqual([
      // Said once, on the first estimate: --max-cost does not count it.
      "loopx: warning: --max-cost $0.30 counts billed cost only: the $1.00 this run reported so far as an estimate (a subscription's, say) does not count toward it unless you add --count-estimates",
      "loopx: budget reached: --max-cost $0.30, the run used $0.30 billed (estimates not counted: $3.00)",
    ]);
    const id = (await waitForEvent(env, (event) => event.type === "run.end"))!;
    expect(events(env, id).filter((event) => event.type === "iteration.start")).toHaveLength(3);
    expect(events(env, id).at(-1)).toMatchObject({ type: "run.end", reason: "budget", exitCode: 3, iterations: 3, receipts: { costUsd: { billed: 0.3, estimate: 3 }, receipts: 6 } });

    // Like a reached -n: nothing to resume without more budget (the record is left as it was).
    const again = await loopx(channel, ["runs", "resume", id], cwd, env);
    expect(again.code).toBe(1);
    expect(only(again.stderr)).toEqual([
      `loopx: run ${id} has reached its budget (--max-cost $0.30, the run used $0.30 billed (estimates not counted: $3.00)): nothing to resume (give --max-cost <usd> or --max-tokens <count> for more)`,
    ]);
    expect(events(env, id).filter((event) => event.type === "run.resume")).toHaveLength(0);
    const more = await loopx(channel, ["runs", "resume", id, "--max-cost", "0.5"], cwd, env);
    expect(more.code, more.stderr).toBe(3);
    expect(only(more.stderr)).toEqual([
      "loopx: warning: --max-cost $0.50 counts billed cost only: the $4.00 this run reported so far as an estimate (a subscription's, say) does not count toward it unless you add --count-estimates",
      "loopx: budget reached: --max-cost $0.50, the run used $0.50 billed (estimates not counted: $5.00)",
    ]);
    expect(events(env, id).filter((event) => event.type === "iteration.start").map((event) => event.n)).toEqual([1, 2, 3, 4, 5]);

    const show = await loopx(channel, ["runs", "show", id, "--json"], cwd, env);
    const perIteration = { costUsd: { billed: 0.1, estimate: 1 }, tokens: { input: 1000, output: 100, cacheRead: 0, cacheWrite: 0, reasoning: 0 }, receipts: 2 };
    expect(totalsOf(show.stdout)).toEqual({
      type: "totals",
      run: id,
      costUsd: { billed: 0.5, estimate: 5 },
      tokens: { input: 5000, output: 500, cacheRead: 0, cacheWrite: 0, reasoning: 0 },
      receipts: 10,
      models: {
        "m-billed": { costUsd: { billed: 0.5, estimate: 0 }, tokens: { input: 5000, output: 500, cacheRead: 0, cacheWrite: 0, reasoning: 0 }, receipts: 5 },
        "m-sub": { costUsd: { billed: 0, estimate: 5 }, tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 }, receipts: 5 },
      },
      iterations: { 1: perIteration, 2: perIteration, 3: perIteration, 4: perIteration, 5: perIteration },
    });
    const list = await loopx(channel, ["runs"], cwd, env);
    expect(list.stdout).toMatch(/^ID +STATE +STARTED +DURATION +ITER +COST +TOKENS +TARGET\n/);
    expect(list.stdout).toMatch(new RegExp(`\\n${id} +budget +.* 5 +\\$0\\.50 · \\$5\\.00 est\\. +5\\.50k +b:index\\n`));
  });

  it("estimates count against --max-cost only with --count-estimates; --max-tokens; a budget works with records off", async () => {
    const cwd = makeProject(ESTIMATED);
    const env = isolatedEnv();
    const subscription = await loopx(channel, ["run", "-n", "3", "--max-cost", "0.5", "e"], cwd, env);
    expect(subscription.code, subscription.stderr).toBe(0);
    // Not stopped, and told so once (not once per receipt).
    expect(subscription.stderr).toBe(
      "loopx: warning: --max-cost $0.50 counts billed cost only: the $1.00 this run reported so far as an estimate (a subscription's, say) does not count toward it unless you add --count-estimates\n",
    );
    const counted = await loopx(channel, ["run", "-n", "9", "--max-cost", "1.5", "--count-estimates", "e"], cwd, env);
    expect(counted.code).toBe(3);
    expect(only(counted.stderr)).toEqual(["loopx: budget reached: --max-cost $1.50 --count-estimates, the run used $2.00 billed + estimated"]);
    const tokens = await loopx(channel, ["run", "-n", "9", "--max-tokens", "250", "e"], cwd, env);
    expect(tokens.code).toBe(3);
    expect(only(tokens.stderr)).toEqual(["loopx: budget reached: --max-tokens 250, the run used 300 tokens (input, cache write, output, reasoning)"]);
    const off = isolatedEnv({ LOOPX_RECORD: "0" });
    const unrecorded = await loopx(channel, ["run", "-n", "9", "--max-tokens", "250", "e"], cwd, off);
    expect(unrecorded.code).toBe(3);
    expect(only(unrecorded.stderr)).toEqual(["loopx: budget reached: --max-tokens 250, the run used 300 tokens (input, cache write, output, reasoning)"]);
    expect(existsSync(join(off.XDG_STATE_HOME!, "loopx"))).toBe(false);
    const bad = await loopx(channel, ["run", "--count-estimates", "e"], cwd, env);
    expect(bad.code).toBe(1);
    expect(only(bad.stderr)).toEqual(["loopx: --count-estimates needs --max-cost <usd>"]);
    const worse = await loopx(channel, ["run", "--max-cost", "-1", "e"], cwd, env);
    expect(worse.code).toBe(1);
    expect(only(worse.stderr)[0]).toContain("--max-cost needs an amount of US dollars");
  });

  it("SIGKILL of loopx mid-iteration: what its script reported is in the record, and the resumed run's budget counts it", async () => {
    const cwd = makeProject({
      ".loopx/k/index.sh": sh('"$LOOPX_BIN" receipt --cost 0.25 --kind billed\necho $$ > "$LOOPX_PROJECT_ROOT/k.pid"\nwhile [ -e "$LOOPX_PROJECT_ROOT/hold" ]; do sleep 0.1; done'),
      hold: "",
    });
    const env = isolatedEnv();
    const run = startLoopx(channel, ["run", "--max-cost", "1", "k"], cwd, env);
    const id = await waitForEvent(env, (event) => event.type === "receipt" && event.n === 1);
    expect(await waitFor(() => existsSync(join(cwd, "k.pid")), 10_000)).toBe(true);
    run.child.kill("SIGKILL");
    await run.result;
    // The run's guardian closes the killed run (run.end `killed`, its script's group ended).
    await waitForEvent(env, (event) => event.type === "run.end", 30_000);
    const script = Number(readFileSync(join(cwd, "k.pid"), "utf8"));
    expect(await waitFor(() => !processAlive(script), 10_000)).toBe(true);
    rmSync(join(cwd, "hold"));
    const resumed = await loopx(channel, ["runs", "resume", id], cwd, env);
    expect(resumed.code, resumed.stderr).toBe(3);
    expect(only(resumed.stderr)).toEqual(["loopx: budget reached: --max-cost $1.00, the run used $1.00 billed"]);
    // The killed try of iteration 1 ($0.25) and iterations 1-3 of the resumed sitting.
    expect(events(env, id).filter((event) => event.type === "receipt")).toHaveLength(4);
    expect(events(env, id).at(-1)).toMatchObject({ type: "run.end", reason: "budget", iterations: 3, receipts: { costUsd: { billed: 1, estimate: 0 }, receipts: 4 } });
  });

  it("Ctrl-C mid-iteration: the receipt the script sends on the signal, within the grace, is kept in the totals", async () => {
    const cwd = makeProject({
      ".loopx/t/index.sh": sh(
        'trap \'"$LOOPX_BIN" receipt --cost 0.05 --kind billed --output 7; exit 130\' INT TERM\n"$LOOPX_BIN" receipt --cost 0.01 --kind billed --input 3\n: > "$LOOPX_PROJECT_ROOT/ready"\nsleep 30 & wait',
      ),
    });
    const env = isolatedEnv();
    const run = startLoopx(channel, ["run", "--max-cost", "10", "t"], cwd, env);
    expect(await waitFor(() => existsSync(join(cwd, "ready")), 20_000)).toBe(true);
    run.child.kill("SIGINT");
    const result = await run.result;
    expect(result.code).toBe(130);
    const id = await waitForEvent(env, (event) => event.type === "run.end");
    expect(events(env, id).at(-1)).toMatchObject({
      type: "run.end",
      reason: "interrupted",
      receipts: { costUsd: { billed: 0.06, estimate: 0 }, tokens: { input: 3, output: 7 }, receipts: 2 },
    });
  });
});

describe.each(RUNTIMES)("budgets from the API ($name)", (runtime) => {
  it("run() with maxCost (records off): no script after the budget, rejects with the budget line; bad budget options are one error naming them", async () => {
    const dir = consumer(
      `import { run, runPromise } from "loopx";
const seen = [];
let error;
try {
  for await (const output of run("b", { maxCost: 0.2, maxIterations: 9 })) seen.push(output);
} catch (e) {
  error = e.message;
}
const bad = [];
for (const options of [{ maxCost: -1 }, { maxCost: "5" }, { maxTokens: 1.5 }, { countEstimates: true }]) {
  try {
    await runPromise("b", options);
  } catch (e) {
    bad.push(e.message);
  }
}
console.log(JSON.stringify({ seen: seen.length, error, bad }));
`,
      { ".loopx/b/index.sh": sh('"$LOOPX_BIN" receipt --cost 0.1 --kind billed\necho \'{"result":"x"}\'') },
    );
    const result = await runConsumer(runtime, dir);
    expect(result.json).toEqual({
      seen: 2,
      error: "budget reached: --max-cost $0.20, the run used $0.20 billed",
      bad: [
        "maxCost must be a non-negative number of US dollars, got -1",
        'maxCost must be a non-negative number of US dollars, got "5"',
        "maxTokens must be a non-negative integer, got 1.5",
        "countEstimates needs maxCost (--count-estimates needs --max-cost)",
      ],
    });
  });
});

describe("totals of a capped record", () => {
  it("a record cut back by LOOPX_RECORD_MAX_BYTES keeps the dropped receipts' totals in its gap: runs show --json and run.end still add up to every receipt", async () => {
    const node = CHANNELS.find((channel) => channel.name === "node")!;
    const cwd = makeProject({
      ".loopx/g/index.sh": sh('"$LOOPX_BIN" receipt --cost 0.01 --kind billed --input 10 --model m\nprintf \'{"result":"%s"}\' "$(head -c 3000 /dev/zero | tr "\\\\0" x)"'),
    });
    const env = isolatedEnv({ LOOPX_RECORD_MAX_BYTES: "16384" });
    const result = await loopx(node, ["run", "-n", "40", "g"], cwd, env);
    expect(result.code, result.stderr).toBe(0);
    const [id] = recordIds(env);
    const record = events(env, id!);
    expect(record.some((event) => event.type === "gap" && event.receipts?.receipts > 0)).toBe(true);
    expect(record.filter((event) => event.type === "receipt").length).toBeLessThan(40);
    const totals = { costUsd: { billed: 0.4, estimate: 0 }, tokens: { input: 400, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 }, receipts: 40 };
    expect(record.at(-1)).toMatchObject({ type: "run.end", receipts: { ...totals, models: { m: totals } } });
    const show = await loopx(node, ["runs", "show", id!, "--json"], cwd, env);
    expect(totalsOf(show.stdout)).toMatchObject({ ...totals, models: { m: totals } });
  });
});
