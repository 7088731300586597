/**
 * Journey: a budget raised, then resumed again. A user with the standalone binary on PATH runs a
 * loop with `--max-cost 2`; it stops at its budget. They resume it with `--max-cost 10`; it fails
 * at $3. A plain `loopx runs resume <id>` goes on (the budget raised at the resume is the run's
 * now, kept in the record's run.resume, not only in argv), and so does the dashboard's Resume.
 */
import { readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BINARY, isolatedEnv, makeProject, runCommand, sh, tempDir, waitFor } from "../helpers.js";
import { request, serve } from "../dashboard-helpers.js";

/** Each iteration reports $1 billed; iterations 3 and 4 fail once each (after reporting); iteration 5 stops. */
const WORKFLOW = {
  ".loopx/spend/index.sh": sh(
    [
      '"$LOOPX_BIN" receipt --cost 1 --kind billed --input 10 --output 10',
      'cd "$LOOPX_PROJECT_ROOT"',
      'if [ "$LOOPX_ITERATION" -ge 5 ]; then echo \'{"stop":true}\'; exit 0; fi',
      'if [ "$LOOPX_ITERATION" -ge 3 ] && [ ! -e "failed-$LOOPX_ITERATION" ]; then touch "failed-$LOOPX_ITERATION"; exit 1; fi',
    ].join("\n"),
  ),
};

interface Event {
  type: string;
  options?: { maxCost?: number };
  reason?: string;
}

const recordOf = (env: Record<string, string>, id: string): Event[] =>
  readFileSync(join(env.XDG_STATE_HOME!, "loopx", "runs", `${id}.jsonl`), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Event);

describe("journey: a budget raised at a resume holds for every later resume (the binary)", () => {
  it("run --max-cost 2, runs resume --max-cost 10 (fails at $3), then runs resume and the dashboard's Resume go on", { timeout: 120_000 }, async () => {
    const bin = tempDir("loopx-user-bin-");
    symlinkSync(BINARY, join(bin, "loopx"));
    const env = isolatedEnv();
    env.PATH = `${bin}:${env.PATH}`;
    const cwd = makeProject(WORKFLOW);
    const loopx = (...args: string[]) => runCommand("loopx", args, { cwd, env, timeoutMs: 60_000 });

    const first = await loopx("run", "--max-cost", "2", "spend");
    expect(first.code, first.stderr).toBe(3);
    expect(first.stderr).toContain("loopx: budget reached: --max-cost $2.00, the run used $2.00 billed");
    const id = JSON.parse((await loopx("runs", "--json")).stdout.trim().split("\n")[0]!).id as string;

    const raised = await loopx("runs", "resume", id, "--max-cost", "10");
    expect(raised.code, raised.stderr).toBe(1);
    expect(recordOf(env, id).filter((event) => event.type === "run.resume").map((event) => event.options)).toEqual([{ maxCost: 10 }]);

    // A plain resume: the run's budget is now $10 ($3 used), not the $2 it started with.
    const again = await loopx("runs", "resume", id);
    expect(again.stderr).not.toContain("reached its budget");
    expect(again.code, again.stderr).toBe(1);
    expect(recordOf(env, id).filter((event) => event.type === "run.resume").map((event) => event.options)).toEqual([{ maxCost: 10 }, { maxCost: 10 }]);

    // The dashboard's Resume button (its POST) goes on the same way, to the run's stop at $7.
    const served = await serve({ name: "binary", argv: ["loopx"] }, env);
    try {
      const resumed = await request(`${served.base}/api/runs/${id}/resume?token=${served.token}`, { method: "POST", headers: { Host: new URL(served.base).host, Origin: served.base } });
      expect(resumed.status, resumed.body).toBe(200);
      expect(await waitFor(() => recordOf(env, id).at(-1)?.reason === "stopped", 30_000, 100)).toBe(true);
    } finally {
      await served.stop();
    }
    const shown = await loopx("runs", "show", id);
    expect(shown.stdout).toContain("used $7.00");
    expect(recordOf(env, id).filter((event) => event.type === "run.resume").map((event) => event.options)).toEqual([{ maxCost: 10 }, { maxCost: 10 }, { maxCost: 10 }]);
  });
});
