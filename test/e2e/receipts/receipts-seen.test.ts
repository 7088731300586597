/**
 * Receipts seen where the user looks: the progress line's running total, `loopx runs`
 * COST / TOKENS columns (only once a listed run has receipts), `runs show` totals per run and
 * model and per iteration, `runs tail` receipt lines, `runs --since` totals per project and model.
 * Model names come from scripts: shown escaped. Output does not differ between node, bun and the
 * binary (the same report code; the channels are covered by receipts-budget), so node only.
 */
import { describe, expect, it } from "vitest";
import { isolatedEnv, makeProject, sh } from "../../helpers.js";
import { CHANNELS, loopx, recordIds } from "../../fixtures/control/support.js";
import { CHANNELS as TERMINAL_CHANNELS, screenOf } from "../../fixtures/channels.js";

const node = CHANNELS.find((channel) => channel.name === "node")!;
const WORKFLOW = {
  ".loopx/b/index.sh": sh(
    '"$LOOPX_BIN" receipt --cost 0.1 --kind billed --input 1000 --output 100 --cache-read 50 --model "$(printf \'evil\\033[2J\')"\n' +
      '"$LOOPX_BIN" receipt --json \'{"cost":{"usd":1,"kind":"estimate"},"model":"m-sub","agent":"claude-code","agentVersion":"2.1.197","window":{"type":"five_hour","status":"allowed_warning","utilization":0.42}}\'',
  ),
  ".loopx/q/index.sh": sh("true"),
};

describe("receipts seen where the user looks", () => {
  it("progress running total; runs columns; runs show totals and per-iteration; runs tail; runs --since per project and model", async () => {
    const cwd = makeProject(WORKFLOW);
    const env = isolatedEnv({ LOOPX_PROGRESS: "1" });
    const run = await loopx(node, ["run", "-n", "2", "b"], cwd, env);
    expect(run.code, run.stderr).toBe(0);
    const progress = run.stderr.split("\n");
    expect(progress[0]).toMatch(/^loopx: (?:run \w+ · )?iteration 1\/2 · b:index · \S+$/);
    expect(progress[1]).toMatch(/^loopx: iteration 2\/2 · b:index · \S+ · \$0\.10 · \$1\.00 est\. · 1\.15k tokens$/);
    expect(progress[2]).toMatch(/^loopx: reached -n 2 · 2 iterations · \S+ · \$0\.20 · \$2\.00 est\. · 2\.30k tokens(?: · run \w+)?$/);
    const [id] = recordIds(env);

    const show = await loopx(node, ["runs", "show", id!], cwd, env);
    const lines = show.stdout.split("\n");
    expect(lines[2]).toBe("used $0.20 · $2.00 est. · 2300 tokens (input 2000 · output 200 · cache read 100) · 4 receipts");
    expect(lines.slice(3, 5).sort()).toEqual(["  evil\\e[2J: $0.20 · 2.30k tokens", "  m-sub: $2.00 est."]);
    expect(lines[5]).toMatch(/^N +TARGET +DURATION +EXIT +NEXT +COST +TOKENS +RESULT$/);
    expect(lines[6]).toMatch(/^1 +b:index .* 0 +\$0\.10 · \$1\.00 est\. +1\.15k$/);

    const tail = await loopx(node, ["runs", "tail", id!], cwd, env);
    expect(tail.stdout).toMatch(/\n {2}receipt \d\d:\d\d:\d\d · \$0\.10 · 1150 tokens · evil\\e\[2J\n/);
    expect(tail.stdout).toMatch(/\n {2}receipt \d\d:\d\d:\d\d · \$1\.00 est\. · m-sub · claude-code 2\.1\.197 · five_hour allowed_warning 42%\n/);

    const other = makeProject(WORKFLOW);
    expect((await loopx(node, ["run", "-n", "1", "b"], other, env)).code).toBe(0);
    const since = await loopx(node, ["runs", "--all", "--since", "1h"], cwd, env);
    const period = since.stdout.split("\n");
    expect(period.filter((line) => /^total since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d: \$0\.30 · \$3\.00 est\. · 3\.45k tokens$/.test(line))).toHaveLength(1);
    expect(period).toContain(`  ${cwd}: $0.20 · $2.00 est. · 2.30k tokens`);
    expect(period).toContain(`  ${other}: $0.10 · $1.00 est. · 1.15k tokens`);
    expect(period).toContain("    m-sub: $1.00 est.");
    const json = (await loopx(node, ["runs", "--all", "--since", "1h", "--json"], cwd, env)).stdout.trim().split("\n").map((line) => JSON.parse(line));
    expect(json.at(-1)).toMatchObject({ type: "totals", runs: 2, totals: { costUsd: { billed: 0.3, estimate: 3 }, receipts: 6 } });
    expect(json[0]).toMatchObject({ id: expect.any(String), totals: { costUsd: { billed: 0.1, estimate: 1 } } });
  });

  it("runs without receipts: the table as before (no COST / TOKENS columns), no totals line in runs show --json", async () => {
    const cwd = makeProject(WORKFLOW);
    const env = isolatedEnv();
    expect((await loopx(node, ["run", "-n", "1", "q"], cwd, env)).code).toBe(0);
    const list = await loopx(node, ["runs"], cwd, env);
    expect(list.stdout).toMatch(/^ID +STATE +STARTED +DURATION +ITER +TARGET\n/);
    const [id] = recordIds(env);
    const json = await loopx(node, ["runs", "show", id!, "--json"], cwd, env);
    expect(json.stdout).not.toContain('"totals"');
  });
});

describe.each(TERMINAL_CHANNELS)("the running total on a terminal ($name)", (channel) => {
  it("in a real tmux pane: each progress line and the summary show the run's total so far (nothing before the first receipt); the budget stop is the summary line", async () => {
    const cwd = makeProject({ ".loopx/b/index.sh": sh('"$LOOPX_BIN" receipt --cost 0.0123 --kind billed --input 900 --output 100') });
    const env = isolatedEnv({ TERM: "xterm-256color", NO_COLOR: "1" });
    const screen = await screenOf([...channel.argv, "run", "-n", "5", "--max-cost", "0.03", "b"], cwd, env, 200);
    expect(screen).toEqual([
      expect.stringMatching(/^loopx: run [0-9a-z]{8} · iteration 1\/5 · b:index · \d+ms$/),
      expect.stringMatching(/^loopx: iteration 2\/5 · b:index · [\d.]+m?s · \$0\.0123 · 1\.00k tokens$/),
      expect.stringMatching(/^loopx: iteration 3\/5 · b:index · [\d.]+m?s · \$0\.0246 · 2\.00k tokens$/),
      expect.stringMatching(/^loopx: budget reached: --max-cost \$0\.03, the run used \$0\.0369 billed · 3 iterations · [\d.]+m?s · \$0\.0369 · 3\.00k tokens · run [0-9a-z]{8}$/),
    ]);
  });
});
