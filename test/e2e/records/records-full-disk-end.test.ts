/**
 * A disk that stays full, $XDG_STATE_HOME on a 128 KiB tmpfs (root only; skipped
 * with the reason where mounting is impossible), on node, bun and the binary:
 * - full from the middle of the run to its end: the run's end is written into the room its record
 *   kept for it (`<id>.reserve`), after a `gap` counting the events lost, so `loopx runs` shows how
 *   it ended — not `crashed` — and no reserve is left; the same when loopx is killed and its
 *   guardian closes the run, and when the disk was nearly full already at the start (the room kept
 *   is what there was; with none, the record gives up its own last lines for its end);
 * - full while it goes: `loopx runs` shows what the run says of its state and iteration;
 * - full from the start (the record gets not even its run.start): the run is listed by `loopx runs`
 *   (and --json) from its control channel while it goes, and leaves no empty record behind (nor
 *   does its guardian when loopx is killed); a run
 *   not recorded by choice (LOOPX_RECORD=0) is not listed.
 * And a reserve left by a run whose loopx and guardian were both killed is removed by the next run.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CHANNELS, isolatedEnv, makeProject, R, waitFor, waitForLine, warnings } from "../../helpers.js";
import { fill, nearlyFullTmpfs, smallTmpfs, TMPFS_PROBLEM as PROBLEM } from "../../fixtures/full-disk.js";
import { loopx, startLoopx, type Channel, type Env } from "../../fixtures/control/support.js";

/** A script that fills the disk in iteration 2 and prints ~1.5 KB results (the record's last page fills fast). */
function fillingScript(filler: string, then = "", resultBytes = 1500): string {
  return `#!/bin/bash
[ "$LOOPX_ITERATION" = 2 ] && head -c 1M /dev/zero > "${filler}" 2>/dev/null
${then}
printf '{"result":"%s"}' "$(head -c ${resultBytes} /dev/zero | tr '\\0' x)"
`;
}

function recordLines(state: string): Array<Record<string, any>> {
  const runs = join(state, "loopx", "runs");
  const record = readdirSync(runs).find((name) => name.endsWith(".jsonl"))!;
  // A line cut short by the full disk is not an event (loopx takes such writes back).
  return readFileSync(join(runs, record), "utf8")
    .split("\n")
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, any>];
      } catch {
        return [];
      }
    });
}

async function listed(channel: Channel, cwd: string, env: Env): Promise<Array<Record<string, any>>> {
  const result = await loopx(channel, ["runs", "--json"], cwd, env);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, any>);
}

const reserves = (state: string) => readdirSync(join(state, "loopx", "runs")).filter((name) => name.endsWith(".reserve"));

describe.skipIf(PROBLEM !== undefined)(`a disk that stays full${PROBLEM ? ` — skipped: ${PROBLEM}` : ""}`, () => {
  describe.each(CHANNELS)("$name", (channel) => {
    it("full to the end: the run's end is written into the room kept for it, after a gap; it lists as it ended, not crashed", async () => {
      const state = smallTmpfs();
      const filler = join(state, "filler");
      const cwd = makeProject({ ".loopx/main/index.sh": fillingScript(filler) });
      const env = isolatedEnv({ XDG_STATE_HOME: state });
      const result = await loopx(channel, ["run", "-n", "12", "main"], cwd, env);
      expect(result.code, result.stderr).toBe(0);
      expect(warnings(result.stderr), result.stderr).toHaveLength(1);
      expect(existsSync(filler)).toBe(true);
      const lines = recordLines(state);
      const gap = lines.find((event) => event.type === "gap");
      expect(gap, JSON.stringify(lines.map((event) => event.type))).toMatchObject({ reason: "disk" });
      expect(gap!.after + gap!.iterations).toBe(12);
      expect(gap!.iterations).toBeGreaterThanOrEqual(3);
      expect(lines.at(-1)).toMatchObject({ type: "run.end", reason: "limit", exitCode: 0, iterations: 12 });
      expect(reserves(state)).toEqual([]);
      const runs = await listed(channel, cwd, env);
      expect(runs.map((run) => [run.state, run.iterations])).toEqual([["limit", 12]]);
      const shown = await loopx(channel, ["runs", "show", "latest"], cwd, env);
      expect(shown.stdout).toMatch(/\d+ iterations \(\d+ bytes of record\) lost here: the record could not be written \(disk full\)/);
    });

    it("nearly full at the start: the record keeps what room there is for its end", async () => {
      // Three pages left: one for the record's first events, two for the room kept for its end.
      const state = nearlyFullTmpfs(3 * 4096);
      const cwd = makeProject({ ".loopx/main/index.sh": fillingScript(join(state, "filler2")) });
      const env = isolatedEnv({ XDG_STATE_HOME: state });
      const result = await loopx(channel, ["run", "-n", "6", "main"], cwd, env);
      expect(result.code, result.stderr).toBe(0);
      const lines = recordLines(state);
      expect(lines[0]).toMatchObject({ type: "run.start" });
      expect(lines.find((event) => event.type === "gap"), JSON.stringify(lines.map((event) => event.type))).toMatchObject({ reason: "disk" });
      expect(lines.at(-1)).toMatchObject({ type: "run.end", reason: "limit", iterations: 6 });
      expect(reserves(state)).toEqual([]);
    });

    it("one block left at the start (no room to keep): the record gives up its last lines for its end, counted in the gap", async () => {
      const state = nearlyFullTmpfs(4096);
      const cwd = makeProject({ ".loopx/main/index.sh": fillingScript(join(state, "filler2")) });
      const env = isolatedEnv({ XDG_STATE_HOME: state });
      const result = await loopx(channel, ["run", "-n", "5", "main"], cwd, env);
      expect(result.code, result.stderr).toBe(0);
      const lines = recordLines(state);
      expect(lines.map((event) => event.type).slice(-2)).toEqual(["gap", "run.end"]);
      expect(lines[0]).toMatchObject({ type: "run.start" });
      const gap = lines.at(-2)!;
      expect(gap.after + gap.iterations).toBe(5);
      expect(lines.at(-1)).toMatchObject({ reason: "limit", iterations: 5 });
      expect((await listed(channel, cwd, env)).map((run) => run.state)).toEqual(["limit"]);
    });

    // Room kept (the disk fills in iteration 2), or none (one block left at the start: the record's own last lines make room).
    it.each([
      ["the room kept for it", () => smallTmpfs(), []],
      ["room its record gives up (one block left at the start)", () => nearlyFullTmpfs(4096), ["gap", "run.end"]],
    ] as const)("full when loopx is killed: its guardian writes the run's end into %s", async (_room, mount, last) => {
      const state = mount();
      const wait = `[ "$LOOPX_ITERATION" = 4 ] && echo $PPID > ${R}/loopx.pid && sleep 60`;
      const cwd = makeProject({ ".loopx/main/index.sh": fillingScript(join(state, "filler"), wait) });
      const env = isolatedEnv({ XDG_STATE_HOME: state });
      const run = startLoopx(channel, ["run", "-n", "5", "main"], cwd, env);
      expect(await waitFor(() => existsSync(join(cwd, "loopx.pid")) && readFileSync(join(cwd, "loopx.pid"), "utf8").endsWith("\n"), 30_000)).toBe(true);
      process.kill(Number(readFileSync(join(cwd, "loopx.pid"), "utf8")), "SIGKILL");
      await run.result;
      // The guardian ends the script (SIGTERM: sleep ends at once), then appends run.end.
      expect(await waitFor(() => recordLines(state).at(-1)?.type === "run.end", 30_000), JSON.stringify(recordLines(state).map((event) => event.type))).toBe(true);
      const lines = recordLines(state);
      if (last.length > 0) expect(lines.slice(-2).map((event) => event.type)).toEqual(last);
      expect(lines[0]).toMatchObject({ type: "run.start" });
      const end = lines.at(-1)!;
      expect(end).toMatchObject({ reason: "killed" });
      expect(end.message).toContain("its record's disk was full: events may be missing from it");
      expect(reserves(state)).toEqual([]);
      expect((await listed(channel, cwd, env)).map((listedRun) => listedRun.state)).toEqual(["killed"]);
    });

    it("full while it goes: `loopx runs` shows the run's own word on its state and iteration (its record lags behind)", async () => {
      const state = smallTmpfs();
      // Results too long for what is left of the record's last block; 50 iterations use up the rest.
      const wait = `[ "$LOOPX_ITERATION" = 50 ] && echo "$LOOPX_RUN_ID" > ${R}/run.id && until [ -e ${R}/go ]; do sleep 0.05; done`;
      const cwd = makeProject({ ".loopx/main/index.sh": fillingScript(join(state, "filler"), wait, 4000) });
      const env = isolatedEnv({ XDG_STATE_HOME: state });
      const run = startLoopx(channel, ["run", "-n", "51", "main"], cwd, env);
      const id = await waitForLine(join(cwd, "run.id"), 30_000);
      try {
        const recorded = Math.max(...recordLines(state).map((event) => event.n ?? 0));
        expect(recorded).toBeLessThan(50);
        expect((await loopx(channel, ["runs", "pause", id], cwd, env)).code).toBe(0);
        expect((await listed(channel, cwd, env)).map((row) => [row.id, row.state, row.iterations])).toEqual([[id, "paused", 50]]);
        expect((await loopx(channel, ["runs", "stop", id], cwd, env)).code).toBe(0);
      } finally {
        writeFileSync(join(cwd, "go"), "");
      }
      expect((await run.result).code).toBe(0);
      expect((await listed(channel, cwd, env)).map((row) => [row.state, row.iterations])).toEqual([["stopped-on-request", 50]]);
    });

    it("full from the start and loopx killed: its guardian leaves no empty record behind", async () => {
      const state = smallTmpfs();
      fill(join(state, "filler"));
      const cwd = makeProject({ ".loopx/main/index.sh": `#!/bin/bash\necho $PPID > ${R}/loopx.pid\nsleep 60\n` });
      const env = isolatedEnv({ XDG_STATE_HOME: state });
      const run = startLoopx(channel, ["run", "-n", "1", "main"], cwd, env);
      expect(await waitFor(() => existsSync(join(cwd, "loopx.pid")) && readFileSync(join(cwd, "loopx.pid"), "utf8").endsWith("\n"), 30_000)).toBe(true);
      const runs = join(state, "loopx", "runs");
      expect(readdirSync(runs).filter((name) => name.endsWith(".jsonl"))).toHaveLength(1);
      process.kill(Number(readFileSync(join(cwd, "loopx.pid"), "utf8")), "SIGKILL");
      await run.result;
      expect(await waitFor(() => readdirSync(runs).length === 0, 30_000), readdirSync(runs).join(", ")).toBe(true);
    });

    it("full from the start: the run, with no record, is listed from its control channel while it goes", async () => {
      const state = smallTmpfs();
      fill(join(state, "filler"));
      const script = `#!/bin/bash
echo "$LOOPX_RUN_ID" > ${R}/run.id
until [ -e ${R}/go ]; do sleep 0.05; done
echo '{"result":"ok"}'
`;
      const cwd = makeProject({ ".loopx/main/index.sh": script, ".loopx/off/index.sh": script.replace("run.id", "off.id") });
      const env = isolatedEnv({ XDG_STATE_HOME: state });
      const run = startLoopx(channel, ["run", "-n", "3", "main"], cwd, env);
      // A run not recorded by choice is not listed: only runs whose record could not be written are.
      const off = startLoopx(channel, ["run", "-n", "1", "off"], cwd, { ...env, LOOPX_RECORD: "0" });
      const started = (name: string) => existsSync(join(cwd, name)) && readFileSync(join(cwd, name), "utf8").endsWith("\n");
      expect(await waitFor(() => started("run.id") && started("off.id"), 30_000)).toBe(true);
      try {
        const id = readFileSync(join(cwd, "run.id"), "utf8").trim();
        const going = await listed(channel, cwd, env);
        expect(going).toHaveLength(1);
        expect(going[0]).toMatchObject({ id, state: "running", iterations: 1, target: "main:index", recorded: false });
        const table = await loopx(channel, ["runs"], cwd, env);
        expect(table.stdout).toMatch(new RegExp(`^${id}\\s+running\\s`, "m"));
        expect(table.stdout).toContain(`not recorded (the record could not be written: a full disk?): ${id}`);
        const shown = await loopx(channel, ["runs", "show", id], cwd, env);
        expect(shown.code).toBe(1);
        expect(shown.stderr).toMatch(/^loopx: run \w+ has no run\.start in .*: nothing could be written to it \(a full disk\?\); while the run goes, loopx runs lists it from its control channel\n$/);
        // Steered as any run; the listing says so.
        expect((await loopx(channel, ["runs", "stop", id], cwd, env)).stdout).toContain(`run ${id} stops after main:index finishes`);
        expect((await listed(channel, cwd, env)).map((listedRun) => listedRun.state)).toEqual(["stopping"]);
        expect((await loopx(channel, ["runs", "--state", "running"], cwd, env)).stdout).not.toContain(id);
      } finally {
        writeFileSync(join(cwd, "go"), "");
      }
      const result = await run.result;
      expect((await off.result).code).toBe(0);
      expect(result.code, result.stderr).toBe(0);
      expect(warnings(result.stderr)).toHaveLength(1);
      // Ended: nothing listed, no empty record and no reserve left behind.
      expect(await listed(channel, cwd, env)).toEqual([]);
      expect(readdirSync(join(state, "loopx", "runs"))).toEqual([]);
    });
  });
});

describe("the room kept for a record's end", () => {
  it("a reserve whose loopx and guardian are both gone is removed by the next run's start; a live one stays", async () => {
    const cwd = makeProject({ ".loopx/main/index.sh": `#!/bin/bash\necho '{"result":"ok"}'\n` });
    const env = isolatedEnv();
    const runs = join(env.XDG_STATE_HOME!, "loopx", "runs");
    mkdirSync(runs, { recursive: true });
    const dead = spawnSync("true").pid!;
    writeFileSync(join(runs, "0000000000dead1.reserve"), `${JSON.stringify({ pid: dead, time: new Date().toISOString() })}\n${"x".repeat(1000)}`);
    writeFileSync(join(runs, "0000000000live1.reserve"), `${JSON.stringify({ pid: process.pid, time: new Date().toISOString() })}\n${"x".repeat(1000)}`);
    const result = await loopx(CHANNELS[0]!, ["run", "-n", "1", "main"], cwd, env);
    expect(result.code, result.stderr).toBe(0);
    expect(readdirSync(runs).filter((name) => !name.endsWith(".jsonl"))).toEqual(["0000000000live1.reserve"]);
  });
});
