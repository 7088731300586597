/**
 * Notes in a run's record (loopx's own addition): a script adds a line to the record of its run
 * with `$LOOPX_BIN note <text>` (bash) or `note(text, data)` from "loopx" (TypeScript); `runs
 * show` prints it under its iteration, `runs tail` as it comes, `--json` as the `note` event.
 * Without a record (LOOPX_RECORD=0, or outside any run) a note is nothing and costs nothing:
 * LOOPX_RUN_RECORD is not even set. Under node, bun and the standalone binary.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LOOPX_STARTS, isolatedEnv, makeProject, sh } from "../../helpers.js";


/** Iteration 1 (bash) notes and goes to the TypeScript script; iteration 2 notes with data and stops. */
const WORKFLOW = {
  ".loopx/w/index.sh": sh('echo "record=${LOOPX_RUN_RECORD:-none}" >&2\n"$LOOPX_BIN" note "waiting for the usage limit:" "resets 19:55"\n"$LOOPX_BIN" output --goto two'),
  ".loopx/w/two.ts": 'import { note, output } from "loopx";\nconst kept = note("second\\nline  spaced", { kind: "limit.wait", until: "2026-11-23T19:55:00.000Z" });\nprocess.stderr.write(`kept=${kept}\\n`);\noutput({ stop: true });\n',
};

describe.concurrent.each(LOOPX_STARTS)("notes in the run's record ($name)", ({ loopx }) => {
  it("a note from bash and from TypeScript: runs show under its iteration, runs tail, --json", async () => {
    const cwd = makeProject(WORKFLOW);
    const env = isolatedEnv();
    const options = { cwd, env, timeoutMs: 60_000 };
    const result = await loopx(["run", "w"], options);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe("");
    const records = join(env.XDG_STATE_HOME!, "loopx", "runs");
    const [file] = readdirSync(records);
    expect(result.stderr).toBe(`record=${join(records, file!)}\nkept=true\n`);
    const id = file!.replace(/\.jsonl$/, "");

    const json = await loopx(["runs", "show", id, "--json"], options);
    const notes = json.stdout.trim().split("\n").map((line) => JSON.parse(line)).filter((event) => event.type === "note");
    expect(notes).toEqual([
      { v: 1, type: "note", time: expect.any(String), run: id, n: 1, workflow: "w", text: "waiting for the usage limit: resets 19:55" },
      { v: 1, type: "note", time: expect.any(String), run: id, n: 2, workflow: "w", text: "second line spaced", data: { kind: "limit.wait", until: "2026-11-23T19:55:00.000Z" } },
    ]);

    const show = await loopx(["runs", "show", id], options);
    expect(show.code, show.stderr).toBe(0);
    const lines = show.stdout.trimEnd().split("\n");
    const row1 = lines.findIndex((line) => /^1 {2}w:index /.test(line));
    const row2 = lines.findIndex((line) => /^2 {2}w:two /.test(line));
    expect(lines[row1 + 1]).toMatch(/^ {2}note \d\d:\d\d:\d\d · waiting for the usage limit: resets 19:55$/);
    expect(row2).toBe(row1 + 2);
    expect(lines[row2 + 1]).toMatch(/^ {2}note \d\d:\d\d:\d\d · second line spaced$/);

    const tail = await loopx(["runs", "tail", id], options);
    expect(tail.code, tail.stderr).toBe(0);
    expect(tail.stdout).toMatch(/\niteration 1 · w:index · .*\n {2}note \d\d:\d\d:\d\d · waiting for the usage limit: resets 19:55\n {2}w:index /);
  });

  it("without a record: no LOOPX_RUN_RECORD, the note is nothing (exit 0, no file); outside a run too", async () => {
    const cwd = makeProject(WORKFLOW);
    const env = isolatedEnv({ LOOPX_RECORD: "0" });
    const result = await loopx(["run", "w"], { cwd, env, timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe("record=none\nkept=false\n");
    expect(existsSync(join(env.XDG_STATE_HOME!, "loopx"))).toBe(false);
    const outside = await loopx(["note", "hello"], { cwd, env: isolatedEnv(), timeoutMs: 30_000 });
    expect(outside).toMatchObject({ code: 0, stdout: "", stderr: "" });
    const bare = await loopx(["note"], { cwd, env: isolatedEnv(), timeoutMs: 30_000 });
    expect(bare.code).toBe(1);
    expect(bare.stderr.split("\n").filter(Boolean)).toHaveLength(1);
  });
});
