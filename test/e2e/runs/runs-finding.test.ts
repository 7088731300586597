/**
 * "finding runs": `loopx runs` lists this project's runs (`--all`, `--limit`, `--state`),
 * ids with their shortest unique prefix (at least 6) in bold on a terminal, `latest` (or no id)
 * for `show`/`tail`, `runs show --last N`, and `runs tail` exits as the run did.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isolatedEnv, makeProject, sh, tempDir } from "../../helpers.js";
import { runsDir } from "../../fixtures/records.js";
import { CHANNELS, loopx, onPty } from "../../fixtures/channels.js";

const node = CHANNELS[0]!;

/** A finished record, written as loopx writes them. */
function fakeRecord(env: Record<string, string>, id: string, options: { project: string; reason?: string; exitCode?: number; iterations?: number; pid?: number; time?: string }): void {
  const time = options.time ?? "2026-01-01T00:00:00.000Z";
  const event = (type: string, extra: object) => JSON.stringify({ v: 1, type, time, run: id, ...extra });
  const lines = [event("run.start", { pid: options.pid ?? 999999999, projectRoot: options.project, target: "w:index", version: "0.0.1", runtime: "node", maxIterations: null })];
  const iterations = options.iterations ?? 1;
  for (let n = 1; n <= iterations; n++) {
    lines.push(event("iteration.start", { n, target: "w:index" }));
    lines.push(event("iteration.end", { n, target: "w:index", durationMs: 5, exitCode: 0, signal: null, stdoutBytes: 3, output: { result: `r${n}`, resultBytes: 2 } }));
  }
  if (options.reason) lines.push(event("run.end", { reason: options.reason, exitCode: options.exitCode ?? 0, iterations, durationMs: 10 }));
  mkdirSync(runsDir(env), { recursive: true });
  writeFileSync(join(runsDir(env), `${id}.jsonl`), `${lines.join("\n")}\n`);
}

const ids = (stdout: string) => stdout.trim().split("\n").map((line) => (JSON.parse(line) as { id: string }).id);

describe("loopx runs: this project, --all, --limit, --state", () => {
  it("lists this project's runs by default, every project's with --all", async () => {
    const here = tempDir();
    const env = isolatedEnv();
    fakeRecord(env, "0aaaaaaaa000001", { project: here, reason: "stopped" });
    fakeRecord(env, "0aaaaaaaa000002", { project: "/elsewhere", reason: "stopped" });
    fakeRecord(env, "0aaaaaaaa000003", { project: here, reason: "failed", exitCode: 1 });
    expect(ids((await loopx(node, ["runs", "--json"], here, env)).stdout)).toEqual(["0aaaaaaaa000003", "0aaaaaaaa000001"]);
    expect(ids((await loopx(node, ["runs", "--all", "--json"], here, env)).stdout)).toEqual(["0aaaaaaaa000003", "0aaaaaaaa000002", "0aaaaaaaa000001"]);
    const table = (await loopx(node, ["runs"], here, env)).stdout;
    expect(table).not.toContain("/elsewhere");
    expect((await loopx(node, ["runs", "--all"], here, env)).stdout).toMatch(/PROJECT[\s\S]*\/elsewhere/);
  });

  it("--limit N keeps the newest N and says how many more there are; the default is 20", async () => {
    const here = tempDir();
    const env = isolatedEnv();
    for (let i = 0; i < 25; i++) fakeRecord(env, `0bbbbbbbb0000${String(i).padStart(2, "0")}`, { project: here, reason: "stopped" });
    expect(ids((await loopx(node, ["runs", "--limit", "3", "--json"], here, env)).stdout)).toEqual(["0bbbbbbbb000024", "0bbbbbbbb000023", "0bbbbbbbb000022"]);
    const table = (await loopx(node, ["runs"], here, env)).stdout.trim().split("\n");
    expect(table).toHaveLength(1 + 20 + 1);
    expect(table.at(-1)).toBe("… 5 more (--limit 25 shows all 25)");
    expect(await loopx(node, ["runs", "--limit", "x"], here, env)).toMatchObject({ code: 1, stdout: "", stderr: 'loopx: --limit needs a non-negative integer, got "x"\n' });
  });

  it("--state S keeps the runs in that state; an unknown state lists the states", async () => {
    const here = tempDir();
    const env = isolatedEnv();
    fakeRecord(env, "0cccccccc000001", { project: here, reason: "stopped" });
    fakeRecord(env, "0cccccccc000002", { project: here, reason: "failed", exitCode: 1 });
    fakeRecord(env, "0cccccccc000003", { project: here }); // no run.end, process gone: crashed
    expect(ids((await loopx(node, ["runs", "--state", "failed", "--json"], here, env)).stdout)).toEqual(["0cccccccc000002"]);
    expect(ids((await loopx(node, ["runs", "--state", "crashed", "--json"], here, env)).stdout)).toEqual(["0cccccccc000003"]);
    const bad = await loopx(node, ["runs", "--state", "broken"], here, env);
    expect(bad).toMatchObject({ code: 1, stdout: "" });
    expect(bad.stderr).toMatch(/^loopx: unknown state "broken" for --state \(states: running, paused, stopping, stopped, .*crashed\)\n$/);
  });
});

describe("run ids", () => {
  it("on a terminal, each id's shortest unique prefix (at least 6 characters) is bold; off a terminal, plain", async () => {
    const here = tempDir();
    const env = isolatedEnv({ TERM: "xterm-256color" });
    fakeRecord(env, "0mwtq7abc123xyz", { project: here, reason: "stopped" });
    fakeRecord(env, "0mwtq7abc999xyz", { project: here, reason: "stopped" }); // shares 9 characters with the first
    fakeRecord(env, "1zzzzzzzzzzzzzz", { project: here, reason: "stopped" }); // unique from its first character
    const pty = await onPty([...node.argv, "runs"], here, env);
    expect(pty.stdout).toContain("\x1b[1m0mwtq7abc1\x1b[22m23xyz");
    expect(pty.stdout).toContain("\x1b[1m0mwtq7abc9\x1b[22m99xyz");
    expect(pty.stdout).toContain("\x1b[1m1zzzzz\x1b[22mzzzzzzzzz");
    const piped = await loopx(node, ["runs"], here, env);
    expect(piped.stdout).not.toContain("\x1b");
    // The prefix shown is enough to name the run.
    expect((await loopx(node, ["runs", "show", "0mwtq7abc9"], here, env)).stdout).toMatch(/^run 0mwtq7abc999xyz /);
  });
});

describe.each(CHANNELS)("latest, --last and tail's exit code ($name)", (channel) => {
  const WORKFLOWS = {
    ".loopx/count/index.sh": sh('$LOOPX_BIN output --result "n$LOOPX_ITERATION"'),
    ".loopx/bad/index.sh": sh("echo nope >&2\nexit 4"),
  };

  it("show with no id or `latest`: this project's newest run; --last N: its last N iterations", async () => {
    const cwd = makeProject(WORKFLOWS);
    const other = makeProject(WORKFLOWS);
    const env = isolatedEnv();
    expect((await loopx(channel, ["run", "-n", "6", "count"], cwd, env)).code).toBe(0);
    expect((await loopx(channel, ["run", "-n", "1", "count"], other, env)).code).toBe(0); // newer, another project
    const bare = await loopx(channel, ["runs", "show"], cwd, env);
    const latest = await loopx(channel, ["runs", "show", "latest"], cwd, env);
    expect(bare.stdout).toMatch(/^run \w+ · reached -n 6 · 6 iterations · /);
    expect(latest.stdout.split("\n")[0]).toBe(bare.stdout.split("\n")[0]);
    const last = await loopx(channel, ["runs", "show", "--last", "2"], cwd, env);
    expect(last.code).toBe(0);
    expect(last.stdout).toContain("… 4 earlier iterations not shown (--last)");
    expect(last.stdout.match(/^\d+ +count:index /gm)).toEqual(["5  count:index ", "6  count:index "]);
    expect(last.stdout).toMatch(/^6 .* n6$/m);
    const json = await loopx(channel, ["runs", "show", "latest", "--last", "1", "--json"], cwd, env);
    const events = json.stdout.trim().split("\n").map((line) => JSON.parse(line) as { type: string; n?: number });
    expect(events.map((event) => [event.type, event.n])).toEqual([["run.start", undefined], ["iteration.start", 6], ["iteration.end", 6], ["run.end", undefined]]);
  });

  it("runs tail exits as the run did: 0 after a stop or -n, 1 after a failure or a crash", async () => {
    const cwd = makeProject(WORKFLOWS);
    const env = isolatedEnv();
    expect((await loopx(channel, ["run", "-n", "1", "count"], cwd, env)).code).toBe(0);
    expect((await loopx(channel, ["runs", "tail", "latest"], cwd, env)).code).toBe(0);
    expect((await loopx(channel, ["run", "bad"], cwd, env)).code).toBe(1);
    const failed = await loopx(channel, ["runs", "tail"], cwd, env);
    expect(failed.stdout).toMatch(/bad:index exited with code 4/);
    expect(failed.code).toBe(1);
    fakeRecord(env, "zzzzzzzzzzzzzzz", { project: cwd, iterations: 2 }); // newest, process gone
    const crashed = await loopx(channel, ["runs", "tail", "latest"], cwd, env);
    expect(crashed.stdout).toMatch(/crashed: process 999999999 is gone without run.end\n$/);
    expect(crashed.code).toBe(1);
  });
});
