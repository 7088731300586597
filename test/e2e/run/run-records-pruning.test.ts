/**
 * Records are never pruned while their run is alive: pruning keeps the newest 200
 * records and, beyond them, every record without run.end whose loopx is still running or whose
 * guardian is closing it. 300 short runs while a long one is going leave the long run's record
 * intact, and `loopx runs tail` follows it to its end.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, NODE, ROOT, isolatedEnv, makeProject, makeSymlink, runCommand, sh, waitForLine } from "../../helpers.js";
import { runsDir } from "../../fixtures/records.js";

function recordIds(env: Record<string, string>): string[] {
  return existsSync(runsDir(env)) ? readdirSync(runsDir(env)).filter((name) => name.endsWith(".jsonl")).map((name) => name.slice(0, -6)) : [];
}

/** The record of a finished run whose loopx is gone: its start and its end. */
function endedRecord(id: string): string {
  const time = new Date().toISOString();
  const head = { v: 1, time, run: id };
  const start = { ...head, type: "run.start", pid: 999999999, projectRoot: "/nowhere", target: "short:index", version: "0.0.1", runtime: "node", maxIterations: null };
  const end = { ...head, type: "run.end", reason: "stopped", iterations: 1, exitCode: 0 };
  return `${JSON.stringify(start)}\n${JSON.stringify(end)}\n`;
}

describe("run records: pruning spares runs that are alive", () => {
  it("300 short runs while a long run goes: the long run's record is intact and `loopx runs tail` follows it to its end", { timeout: 240_000 }, async () => {
    const cwd = makeProject({
      ".loopx/long/index.sh": sh(`cd "$LOOPX_PROJECT_ROOT"
echo "$LOOPX_RUN_ID" > long.id
while [ ! -e finish ]; do sleep 0.05; done
$LOOPX_BIN output --result "long done" --stop`),
      ".loopx/short/index.sh": sh('echo \'{"stop": true}\''),
      "many.mjs": `import { runPromise } from "loopx";
for (let i = 0; i < Number(process.argv[2]); i++) await runPromise("short", { record: true });
`,
    });
    makeSymlink(ROOT, join(cwd, "node_modules", "loopx"));
    const env = isolatedEnv();
    const long = runCommand(NODE, [BIN, "run", "long"], { cwd, env, timeoutMs: 200_000 });
    const id = await waitForLine(join(cwd, "long.id"), 20_000);
    const tail = runCommand(NODE, [BIN, "runs", "tail", id], { cwd, env, timeoutMs: 200_000 });

    // 290 finished runs newer than the long one (their records, as a run leaves them: what pruning
    // reads), then 5 runs of the API (records: true) and 5 of the CLI: the same pruning for both.
    for (let i = 1; i <= 290; i++) {
      const newer = `${(Number.parseInt(id.slice(0, 8), 36) + i).toString(36).padStart(8, "0")}aaaaaaa`;
      writeFileSync(join(runsDir(env), `${newer}.jsonl`), endedRecord(newer));
    }
    const many = await runCommand(NODE, ["many.mjs", "5"], { cwd, env, timeoutMs: 200_000 });
    expect(many.code, many.stderr).toBe(0);
    for (let i = 0; i < 5; i++) expect((await runCommand(NODE, [BIN, "run", "short"], { cwd, env })).code).toBe(0);

    const ids = recordIds(env);
    expect(ids).toContain(id);
    expect(ids).toHaveLength(201); // the newest 200, and the long run's
    writeFileSync(join(cwd, "finish"), "");
    expect((await long).code).toBe(0);
    const followed = await tail;
    expect(followed.code, followed.stderr).toBe(0);
    const lines = followed.stdout.trim().split("\n");
    expect(lines[0]).toMatch(new RegExp(`^run ${id} started `));
    expect(lines.at(-2)).toMatch(/^ {2}long:index .* · exit 0 · stop · long done$/);
    expect(lines.at(-1)).toMatch(/^stopped by long:index · 1 iteration · /);
    // The next run prunes it like any other finished run: it is the oldest.
    expect((await runCommand(NODE, [BIN, "run", "short"], { cwd, env })).code).toBe(0);
    expect(recordIds(env)).not.toContain(id);
    expect(recordIds(env)).toHaveLength(200);
  });

  it("a record whose loopx is gone but whose guardian is closing it (its .closing pid alive) is kept; a crashed one is pruned", async () => {
    const cwd = makeProject({ ".loopx/s/index.sh": sh('echo \'{"stop": true}\'') });
    const env = isolatedEnv();
    const dir = runsDir(env);
    mkdirSync(dir, { recursive: true });
    const start = (id: string, time: string) =>
      `${JSON.stringify({ v: 1, type: "run.start", time, run: id, pid: 999999999, projectRoot: "/nowhere", target: "x:index", version: "0.0.1", runtime: "node", maxIterations: null })}\n`;
    const old = (i: number) => `000000${String(i).padStart(3, "0")}aaaaaa`;
    for (let i = 0; i < 201; i++) writeFileSync(join(dir, `${old(i)}.jsonl`), start(old(i), new Date().toISOString()));
    // old(0) is being closed by a guardian: this test process stands in for it (alive, started before the run).
    writeFileSync(join(dir, `${old(0)}.closing`), String(process.pid));
    // old(1) had a guardian that is gone.
    writeFileSync(join(dir, `${old(1)}.closing`), "999999998");
    expect((await runCommand(NODE, [BIN, "run", "s"], { cwd, env })).code).toBe(0);
    const ids = recordIds(env);
    expect(ids).toContain(old(0));
    expect(ids).not.toContain(old(1));
    expect(existsSync(join(dir, `${old(1)}.closing`))).toBe(false);
    expect(ids).toContain(old(2));
    expect(ids).toHaveLength(201); // the newest 200, and the one being closed
  });
});
