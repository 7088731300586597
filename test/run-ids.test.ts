/**
 * "the run's id where you are": three runs of the same target started together in
 * three tmux panes each name a different id of at most 8 characters on their first progress line
 * (and in their summary), and each of those ids is what `loopx runs stop` takes to stop that run.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isolatedEnv, makeProject, sh, sleep, tempDir, waitFor } from "./helpers.js";
import { CHANNELS, loopx } from "./fixtures/channels.js";

const quote = (arg: string) => `'${arg.replace(/'/g, "'\\''")}'`;

describe.each(CHANNELS)("the run's id on its terminal ($name)", (channel) => {
  it("three runs started together show three ids of at most 8 characters, each usable with runs stop", { timeout: 60_000 }, async () => {
    const cwd = makeProject({ ".loopx/w/index.sh": sh("sleep 0.2") });
    const env = isolatedEnv({ TERM: "xterm-256color", NO_COLOR: "1" });
    const socket = join(tempDir("loopx-tmux-"), "sock");
    const tmux = (...args: string[]) => spawnSync("tmux", ["-S", socket, "-f", "/dev/null", ...args], { cwd, env, encoding: "utf8" });
    const command = `${[...channel.argv, "run", "w"].map(quote).join(" ")}; echo "exit=$?"; sleep 600`;
    // One tmux command line starts the three panes: the runs start within the same second.
    const started = tmux("new-session", "-d", "-x", "120", "-y", "20", "bash", "--norc", "--noprofile", "-c", command, ";", "new-window", "bash", "--norc", "--noprofile", "-c", command, ";", "new-window", "bash", "--norc", "--noprofile", "-c", command);
    expect(started.status, started.stderr).toBe(0);
    const screen = (window: number) => tmux("capture-pane", "-p", "-t", `:${window}`).stdout;
    try {
      const firstLine = /^loopx: run ([0-9a-z]+) · iteration 1 · w:index · /m;
      const seen = await waitFor(() => [0, 1, 2].every((w) => firstLine.test(screen(w))), 30_000, 100);
      expect(seen, [0, 1, 2].map(screen).join("\n---\n")).toBe(true);
      const shown = [0, 1, 2].map((w) => firstLine.exec(screen(w))![1]!);
      expect(new Set(shown).size).toBe(3);
      for (const id of shown) expect(id.length).toBeLessThanOrEqual(8);
      // They did start together: their records' run.start times lie within one second.
      const records = join(env.XDG_STATE_HOME!, "loopx", "runs");
      const ids = readdirSync(records).filter((name) => name.endsWith(".jsonl")).map((name) => name.slice(0, -6));
      expect(ids).toHaveLength(3);
      const starts = ids.map((id) => Date.parse((JSON.parse(readFileSync(join(records, `${id}.jsonl`), "utf8").split("\n")[0]!) as { time: string }).time));
      expect(Math.max(...starts) - Math.min(...starts)).toBeLessThan(1000);
      for (const id of shown) {
        const stop = await loopx(channel, ["runs", "stop", id], cwd, env);
        expect(stop.code, stop.stderr).toBe(0);
        expect(stop.stdout).toContain(`run ${id}`);
      }
      const ended = await waitFor(() => [0, 1, 2].every((w) => /exit=0/.test(screen(w))), 30_000, 100);
      expect(ended, [0, 1, 2].map(screen).join("\n---\n")).toBe(true);
      for (const [w, id] of shown.entries()) expect(screen(w)).toMatch(new RegExp(`^loopx: stopped on request · \\d+ iterations? · [\\d.]+m?s · run ${id}$`, "m"));
    } finally {
      tmux("kill-server");
      await sleep(0);
    }
  });
});
