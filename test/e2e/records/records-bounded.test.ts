/**
 * "reading runs safely": records are bounded (LOOPX_RECORD_MAX_BYTES: the first and the
 * last iterations stay, a gap line counts what was dropped), a failed script's last stderr lines
 * are kept where loopx sees them without changing what the script sees, and everything a record
 * holds is printed with its control characters escaped (`runs show`, `runs tail`, `runs --json`,
 * progress, the error line).
 */
import { spawnSync } from "node:child_process";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isolatedEnv, makeProject, sh, tempDir } from "../../helpers.js";
import { runsDir } from "../../fixtures/records.js";
import { CHANNELS, loopx, onPty } from "../../fixtures/channels.js";

const onlyRecord = (env: Record<string, string>) => {
  const names = readdirSync(runsDir(env));
  expect(names).toHaveLength(1);
  return join(runsDir(env), names[0]!);
};
const events = (path: string) => readFileSync(path, "utf8").trim().split("\n").map((line) => JSON.parse(line) as Record<string, any>);

describe.each(CHANNELS)("records stay bounded ($name)", (channel) => {
  it("past LOOPX_RECORD_MAX_BYTES the first and the last iterations stay whole; a gap line counts the rest", async () => {
    // The result printed as JSON by the script itself: 60 iterations, no helper process each.
    const cwd = makeProject({ ".loopx/big/index.sh": sh('printf \'{"result":"%s-%s"}\' "$(head -c 1500 /dev/zero | tr "\\0" x)" "$LOOPX_ITERATION"') });
    const env = isolatedEnv({ LOOPX_RECORD_MAX_BYTES: "20000" });
    expect((await loopx(channel, ["run", "-n", "60", "big"], cwd, env)).code).toBe(0);
    const path = onlyRecord(env);
    expect(statSync(path).size).toBeLessThanOrEqual(20000);
    const all = events(path);
    expect(all[0]!.type).toBe("run.start");
    expect(all.at(-1)).toMatchObject({ type: "run.end", reason: "limit", iterations: 60 });
    const gaps = all.filter((event) => event.type === "gap");
    expect(gaps).toHaveLength(1);
    const kept = all.filter((event) => event.type === "iteration.start").map((event) => event.n as number);
    // Whole iterations at both ends, and the gap counts exactly the missing ones.
    expect(kept[0]).toBe(1);
    expect(kept.at(-1)).toBe(60);
    expect(gaps[0]!.after).toBe(kept[kept.indexOf(gaps[0]!.after)]);
    expect(kept.length + gaps[0]!.iterations).toBe(60);
    const show = await loopx(channel, ["runs", "show"], cwd, env);
    expect(show.stdout).toMatch(/^run \w+ · reached -n 60 · 60 iterations/);
    expect(show.stdout).toContain(`… ${gaps[0]!.iterations} iterations`);
    expect(show.stdout).toMatch(/^60 +big:index /m);
  });
});

describe.each(CHANNELS)("a failed script's last stderr lines ($name)", (channel) => {
  const WORKFLOWS = {
    ".loopx/fail/index.sh": sh('for i in $(seq 1 30); do echo "log line $i" >&2; done\nif [ -t 2 ]; then echo tty > "$LOOPX_PROJECT_ROOT/stderr-was"; else echo not-a-tty > "$LOOPX_PROJECT_ROOT/stderr-was"; fi\nexit 2'),
  };

  it("when loopx's stderr is a pipe: the last 20 lines are in the record and in runs show", async () => {
    const cwd = makeProject(WORKFLOWS);
    const env = isolatedEnv();
    const result = await loopx(channel, ["run", "fail"], cwd, env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("log line 30\n"); // still passed through
    const end = events(onlyRecord(env)).find((event) => event.type === "iteration.end")!;
    expect(end.stderr).toBe(Array.from({ length: 20 }, (_, i) => `log line ${i + 11}`).join("\n"));
    const show = await loopx(channel, ["runs", "show"], cwd, env);
    expect(show.stdout).toContain("  stderr │ log line 30\n");
    expect(show.stdout).not.toContain("log line 10\n");
  });

  it("when it is a file (2>log): read back from the file", async () => {
    const cwd = makeProject(WORKFLOWS);
    const env = isolatedEnv();
    const log = join(tempDir(), "err.log");
    const command = [...channel.argv, "run", "fail"].map((arg) => `'${arg}'`).join(" ");
    expect(spawnSync("bash", ["-c", `${command} 2>'${log}'`], { cwd, env }).status).toBe(1);
    const end = events(onlyRecord(env)).find((event) => event.type === "iteration.end")!;
    expect(end.stderr).toMatch(/^log line 11\n[\s\S]*\nlog line 30$/);
  });

  it("on a terminal: the script keeps its terminal and nothing of its stderr is recorded", async () => {
    const cwd = makeProject(WORKFLOWS);
    const env = isolatedEnv();
    const pty = await onPty([...channel.argv, "run", "fail"], cwd, env);
    expect(pty.code).toBe(1);
    expect(readFileSync(join(cwd, "stderr-was"), "utf8")).toBe("tty\n");
    const end = events(onlyRecord(env)).find((event) => event.type === "iteration.end")!;
    expect(end.stderr).toBeUndefined();
  });
});

describe.each(CHANNELS)("record text is shown, never obeyed ($name)", (channel) => {
  const WORKFLOWS = {
    // A result that clears the screen and a red line cut before its reset; a note with a bell.
    ".loopx/evil/index.sh": sh(
      '$LOOPX_BIN note "$(printf "ring\\a \\e]0;title\\a")"\n$LOOPX_BIN output --result "$(printf "\\e[2J\\e[31mred test line that is long enough to be cut before the reset \\e[0m")" --stop',
    ),
    ".loopx/jump/index.sh": sh('$LOOPX_BIN output --goto "$(printf "x\\xc2\\x9b2J")"'),
    ".loopx/loud/index.sh": sh('printf "\\e[31mfatal\\n" >&2\nexit 1'),
  };
  const ESC = /[\x07\x1b\x9b]|\u009b/;

  it("runs show, runs tail and runs --json print escapes as text", async () => {
    const cwd = makeProject(WORKFLOWS);
    const env = isolatedEnv();
    expect((await loopx(channel, ["run", "evil"], cwd, env)).code).toBe(0);
    const show = await loopx(channel, ["runs", "show"], cwd, env);
    expect(show.stdout).not.toMatch(ESC);
    expect(show.stdout).toContain("\\e[2J\\e[31mred test line");
    expect(show.stdout).toContain("ring\\x07 \\e]0;title\\x07");
    const tail = await loopx(channel, ["runs", "tail"], cwd, env);
    expect(tail.stdout).not.toMatch(ESC);
    expect(tail.stdout).toContain("\\e[2J");
    const json = await loopx(channel, ["runs", "show", "--json"], cwd, env);
    expect(json.stdout).not.toMatch(ESC);
    const result = json.stdout.trim().split("\n").map((line) => JSON.parse(line)).find((event) => event.type === "iteration.end").output.result;
    expect(result.startsWith("\x1b[2J\x1b[31mred")).toBe(true); // the same value, escaped as JSON
  });

  it("a failed script's recorded stderr, a goto with a C1 control: escaped in runs show and on the terminal", async () => {
    const cwd = makeProject(WORKFLOWS);
    const env = isolatedEnv({ TERM: "dumb" });
    expect((await loopx(channel, ["run", "loud"], cwd, env)).code).toBe(1);
    expect((await loopx(channel, ["runs", "show"], cwd, env)).stdout).toContain("  stderr │ \\e[31mfatal\n");
    const jumped = await loopx(channel, ["run", "jump"], cwd, env);
    expect(jumped.stderr).toMatch(/^loopx: invalid goto from jump:index: .*x\\x9b2J/);
    expect(jumped.stderr).not.toMatch(ESC);
    const pty = await onPty([...channel.argv, "run", "jump"], cwd, env);
    expect(pty.stdout).not.toMatch(ESC);
    expect(pty.stdout).toMatch(/loopx: invalid goto from jump:index: .*x\\x9b2J.* · 1 iteration/);
  });
});
