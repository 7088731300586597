/**
 * "messages": loopx's own lines always start on a fresh line (after a script whose
 * stderr ends without a newline: on a terminal, in a pipe, in a file); a terminal shows one line
 * per failure (the summary carries the reason); `--summary` and LOOPX_PROGRESS=1 print the summary
 * off a terminal. Terminal cases run in a real tmux pane and check what the screen shows.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isolatedEnv, makeProject, sh, tempDir } from "../../helpers.js";
import { CHANNELS, loopx, onPty, screenOf } from "../../fixtures/channels.js";

const WORKFLOWS = {
  // stderr ends without a newline, then the script fails
  ".loopx/nonl/index.sh": sh('printf "fatal: could not connect" >&2\nexit 2'),
  // stderr ends without a newline, the script succeeds (the next progress line must not glue)
  ".loopx/partial/index.sh": sh('printf "working..." >&2\necho \'{"result":"x"}\''),
  ".loopx/badgoto/index.sh": sh('printf "about to jump" >&2\necho \'{"goto":"nowhere"}\''),
  ".loopx/ok/index.sh": sh("echo '{\"stop\":true}'"),
};

describe.each(CHANNELS)("loopx's lines start on a fresh line ($name)", (channel) => {
  it("in a pipe: the script's unterminated stderr, then loopx's error on its own line", async () => {
    const cwd = makeProject(WORKFLOWS);
    const result = await loopx(channel, ["run", "nonl"], cwd, isolatedEnv());
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("fatal: could not connect\nloopx: script nonl:index exited with code 2\n");
  });

  it("in a pipe: a script's stderr that ends with a newline gets no extra line, byte for byte", async () => {
    const cwd = makeProject({ ".loopx/f/index.sh": sh('printf "one\\ntwo\\n" >&2\nexit 3') });
    const result = await loopx(channel, ["run", "f"], cwd, isolatedEnv());
    expect(result.stderr).toBe("one\ntwo\nloopx: script f:index exited with code 3\n");
  });

  it("into a file (2>log): the same", async () => {
    const cwd = makeProject(WORKFLOWS);
    const log = join(tempDir(), "err.log");
    const quoted = [...channel.argv, "run", "nonl"].map((a) => `'${a}'`).join(" ");
    const ran = spawnSync("bash", ["-c", `${quoted} 2>'${log}'`], { cwd, env: isolatedEnv() });
    expect(ran.status).toBe(1);
    expect(readFileSync(log, "utf8")).toBe("fatal: could not connect\nloopx: script nonl:index exited with code 2\n");
  });

  it("on a terminal: progress lines and the one failure line each start a row of their own", async () => {
    const cwd = makeProject(WORKFLOWS);
    const env = isolatedEnv({ TERM: "xterm-256color", NO_COLOR: "1" });
    const partial = await screenOf([...channel.argv, "run", "-n", "2", "partial"], cwd, env);
    expect(partial).toEqual([
      expect.stringMatching(/^loopx: run [0-9a-z]{8} · iteration 1\/2 · partial:index · \d+ms$/),
      "working...",
      expect.stringMatching(/^loopx: iteration 2\/2 · partial:index · [\d.]+m?s$/),
      "working...",
      expect.stringMatching(/^loopx: reached -n 2 · 2 iterations · [\d.]+m?s · run [0-9a-z]{8}$/),
    ]);
    const failed = await screenOf([...channel.argv, "run", "nonl"], cwd, env);
    expect(failed).toEqual([
      expect.stringMatching(/^loopx: run [0-9a-z]{8} · iteration 1 · nonl:index · \d+ms$/),
      "fatal: could not connect",
      expect.stringMatching(/^loopx: nonl:index exited with code 2 · 1 iteration · [\d.]+m?s · run [0-9a-z]{8}$/),
    ]);
  });

  it("on a terminal: a bad goto is one line, the summary, saying why", async () => {
    const cwd = makeProject(WORKFLOWS);
    const screen = await screenOf([...channel.argv, "run", "badgoto"], cwd, isolatedEnv({ TERM: "xterm-256color", NO_COLOR: "1" }), 200);
    expect(screen).toEqual([
      expect.stringMatching(/^loopx: run [0-9a-z]{8} · iteration 1 · badgoto:index · \d+ms$/),
      "about to jump",
      expect.stringMatching(/^loopx: invalid goto from badgoto:index: script "nowhere" not found in workflow "badgoto" .* · 1 iteration · [\d.]+m?s · run [0-9a-z]{8}$/),
    ]);
  });

  it("on a terminal: the exit code is unchanged when the summary is the failure line", async () => {
    const cwd = makeProject(WORKFLOWS);
    const pty = await onPty([...channel.argv, "run", "nonl"], cwd, isolatedEnv({ TERM: "dumb" }));
    expect(pty.code).toBe(1);
    expect(pty.stdout.match(/loopx: [^\r\n]*exited with code 2/g)).toHaveLength(1);
  });
});

describe.each(CHANNELS)("the summary line off a terminal ($name)", (channel) => {
  it("--summary prints it after a successful run, and nothing else of loopx's", async () => {
    const cwd = makeProject(WORKFLOWS);
    const result = await loopx(channel, ["run", "--summary", "ok"], cwd, isolatedEnv());
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^loopx: stopped by ok:index · 1 iteration · [\d.]+m?s · run [0-9a-z]{8}\n$/);
  });

  it("--summary with a failure: one line, the summary carrying the reason", async () => {
    const cwd = makeProject(WORKFLOWS);
    const result = await loopx(channel, ["run", "--summary", "nonl"], cwd, isolatedEnv());
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^fatal: could not connect\nloopx: nonl:index exited with code 2 · 1 iteration · [\d.]+m?s · run [0-9a-z]{8}\n$/);
  });

  it("LOOPX_PROGRESS=1 forces progress and the summary, unstyled", async () => {
    const cwd = makeProject(WORKFLOWS);
    const result = await loopx(channel, ["run", "-n", "2", "partial"], cwd, isolatedEnv({ LOOPX_PROGRESS: "1", TERM: "xterm-256color" }));
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^loopx: run [0-9a-z]{8} · iteration 1\/2 · partial:index · \d+ms\nworking\.\.\.\nloopx: iteration 2\/2 · partial:index · [\d.]+m?s\nworking\.\.\.\nloopx: reached -n 2 · 2 iterations · [\d.]+m?s · run [0-9a-z]{8}\n$/);
  });

  it("without either, a successful run off a terminal stays silent (as the spec's CLI is)", async () => {
    const cwd = makeProject(WORKFLOWS);
    const result = await loopx(channel, ["run", "ok"], cwd, isolatedEnv());
    expect(result).toMatchObject({ code: 0, stdout: "", stderr: "" });
  });
});
