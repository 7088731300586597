/**
 * A full disk under the run records: $XDG_STATE_HOME on a small tmpfs (root
 * only; skipped with the reason where mounting is impossible) filled to the last byte. The run
 * goes on (one warning line); the record loses events while the disk is full, and once space is
 * back (a script removes the filler) a `gap` line marks what was lost and the record goes on — its
 * run.end is written, so `loopx runs` shows the run as it ended (limit), not as crashed. The
 * writer is the same code on every channel: node only.
 */
import { mkdirSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CHANNELS, isolatedEnv, makeProject, warnings } from "../../helpers.js";
import { fill, smallTmpfs, TMPFS_PROBLEM as PROBLEM } from "../../fixtures/full-disk.js";
import { loopx } from "../../fixtures/control/support.js";

describe.skipIf(PROBLEM !== undefined)(`run records on a full disk${PROBLEM ? ` — skipped: ${PROBLEM}` : ""}`, () => {
  it("events lost while the disk is full are marked with a gap once space is back; run.end is written", async () => {
    const state = smallTmpfs();
    const filler = join(state, "filler");
    mkdirSync(join(state, "loopx", "runs"), { recursive: true });
    mkdirSync(join(state, "loopx", "control"), { recursive: true, mode: 0o700 });
    const cwd = makeProject({
      ".loopx/main/index.sh": `#!/bin/bash\n[ "$LOOPX_ITERATION" = 4 ] && rm -f "${filler}"\necho '{"result":"ok"}'\n`,
    });
    const env = isolatedEnv({ XDG_STATE_HOME: state });
    // The record is created (run.start fits), then the disk fills up.
    const first = await loopx(CHANNELS[0]!, ["run", "-n", "1", "main"], cwd, env);
    expect(first.code, first.stderr).toBe(0);
    fill(filler);
    const result = await loopx(CHANNELS[0]!, ["run", "-n", "8", "main"], cwd, env);
    expect(result.code, result.stderr).toBe(0);
    expect(warnings(result.stderr)).toHaveLength(1);
    expect(result.stderr).toContain("the events lost are marked in it once it can be written again");
    const runs = join(state, "loopx", "runs");
    const records = readdirSync(runs).filter((name) => name.endsWith(".jsonl")).sort();
    const lines = readFileSync(join(runs, records.at(-1)!), "utf8").trimEnd().split("\n").map((line) => JSON.parse(line));
    const gap = lines.find((event) => event.type === "gap");
    expect(gap).toMatchObject({ reason: "disk" });
    expect(gap.iterations).toBeGreaterThanOrEqual(3);
    expect(lines.at(-1)).toMatchObject({ type: "run.end", reason: "limit", iterations: 8 });
    const listed = await loopx(CHANNELS[0]!, ["runs", "--json"], cwd, env);
    expect(listed.stdout.split("\n").filter(Boolean).map((line) => JSON.parse(line).state)).toEqual(["limit", "limit"]);
    const shown = await loopx(CHANNELS[0]!, ["runs", "show", "latest"], cwd, env);
    expect(shown.stdout, shown.stdout).toMatch(/iterations? \(\d+ bytes of record\) lost here: the record could not be written \(disk full\)/);
  });
});
