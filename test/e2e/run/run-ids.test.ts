/**
 * "the run's id where you are": three runs of the same target started together in
 * three tmux panes each name a different id of at most 8 characters on their first progress line
 * (and in their summary), and each of those ids is what `loopx runs stop` takes to stop that run.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isolatedEnv, makeProject, sh, sleep, tempDir, waitFor } from "../../helpers.js";
import { CHANNELS, loopx } from "../../fixtures/channels.js";

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
      // They did start together: their records' run.start times lie within a few seconds (a loaded
      // machine spreads the three starts of one tmux command line over a second or more).
      const records = join(env.XDG_STATE_HOME!, "loopx", "runs");
      const ids = readdirSync(records).filter((name) => name.endsWith(".jsonl")).map((name) => name.slice(0, -6));
      expect(ids).toHaveLength(3);
      const starts = ids.map((id) => Date.parse((JSON.parse(readFileSync(join(records, `${id}.jsonl`), "utf8").split("\n")[0]!) as { time: string }).time));
      expect(Math.max(...starts) - Math.min(...starts)).toBeLessThan(3000);
      // Each shows its id's first 8 characters (its start time in ms), which name it alone unless
      // another run started in the same millisecond: then a line shows more (as many as the runs
      // known then tell apart) or 8 characters that name both, and `runs stop` gets the whole id.
      const sameMs = (id: string) => ids.filter((other) => other.slice(0, 8) === id.slice(0, 8)).length > 1;
      const named = (text: string) => ids.filter((id) => id.startsWith(text));
      for (const text of shown) {
        const own = named(text);
        expect(own.length, `${text} among ${ids.join(", ")}`).toBeGreaterThan(0);
        if (sameMs(own[0]!)) expect(text.length).toBeGreaterThanOrEqual(8);
        else expect([text.length, own.length]).toEqual([8, 1]);
      }
      for (const id of ids) {
        const alone = shown.find((text) => named(text).length === 1 && id.startsWith(text));
        expect(alone !== undefined || sameMs(id), `${id} shown as ${shown.join(", ")}`).toBe(true);
        const stop = await loopx(channel, ["runs", "stop", alone ?? id], cwd, env);
        expect(stop.code, stop.stderr).toBe(0);
        expect(stop.stdout).toContain(`run ${id.slice(0, 8)}`);
      }
      const ended = await waitFor(() => [0, 1, 2].every((w) => /exit=0/.test(screen(w))), 30_000, 100);
      expect(ended, [0, 1, 2].map(screen).join("\n---\n")).toBe(true);
      for (const [w, id] of shown.entries()) expect(screen(w)).toMatch(new RegExp(`^loopx: stopped on request · \\d+ iterations? · [\\d.]+m?s · run ${id}[0-9a-z]*$`, "m"));
    } finally {
      tmux("kill-server");
      await sleep(0);
    }
  });
});
