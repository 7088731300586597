/**
 * The bold part of a run's id on its terminal is what `loopx runs stop` takes: three runs started
 * together (three tmux windows from one command line) each highlight a part that names that run
 * alone, and their summary lines highlight the same part. Seen before: the bold "shortest unique
 * prefix" was computed before the other runs were known, so all three showed the same 6
 * characters and `runs stop <them>` was ambiguous.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isolatedEnv, makeProject, sh, sleep, tempDir, waitFor } from "../../helpers.js";
import { CHANNELS, loopx } from "../../fixtures/channels.js";

const quote = (arg: string) => `'${arg.replace(/'/g, "'\\''")}'`;
const node = CHANNELS[0]!;

/** The ids the records hold, and whether each run has ended. */
function records(env: Record<string, string>): Map<string, boolean> {
  const dir = join(env.XDG_STATE_HOME!, "loopx", "runs");
  const listed = spawnSync("ls", [dir], { encoding: "utf8" }).stdout.split("\n").filter((name) => name.endsWith(".jsonl"));
  return new Map(listed.map((name) => [name.slice(0, -6), readFileSync(join(dir, name), "utf8").includes('"type":"run.end"')]));
}

/** A project, its own state directories and a tmux server whose windows each run it once. */
function session(): { cwd: string; env: Record<string, string>; tmux: (...args: string[]) => ReturnType<typeof spawnSync>; screen: (w: number) => string; window: (delay: string) => string[] } {
  const cwd = makeProject({ ".loopx/w/index.sh": sh("sleep 1") });
  const env = isolatedEnv({ TERM: "xterm-256color" });
  delete env.NO_COLOR;
  const socket = join(tempDir("loopx-tmux-"), "sock");
  const tmux = (...args: string[]) => spawnSync("tmux", ["-S", socket, "-f", "/dev/null", ...args], { cwd, env, encoding: "utf8" });
  // -e: with the terminal's attributes, so the bold part can be read.
  const screen = (w: number) => String(tmux("capture-pane", "-e", "-p", "-S", "-", "-t", `:${w}`).stdout);
  const window = (delay: string) => ["bash", "--norc", "--noprofile", "-c", `sleep ${delay}; ${[...node.argv, "run", "w"].map(quote).join(" ")}; echo "exit=$?"; sleep 600`];
  return { cwd, env, tmux, screen, window };
}

// tmux redraws the end of bold in its own way (\x1b[0;2m, \x1b[0m): the part ends at the next escape.
const BOLD = /loopx: run \x1b\[1m([0-9a-z]+)\x1b\[/;

describe("the bold part of a run's id (node)", () => {
  it("three runs started together highlight three parts, each naming one run; runs stop <part> stops exactly that one", { timeout: 120_000 }, async () => {
    // Started together: 0.2 s apart (each run's first line is on its terminal before the next
    // starts), all three within the same 1.3 s, so their ids share their first 6 characters; on a
    // loaded machine that may take a few attempts.
    let s = session();
    for (let attempt = 0; ; attempt++) {
      const started = s.tmux("new-session", "-d", "-x", "150", "-y", "20", ...s.window("0"), ";", "new-window", ...s.window("0.2"), ";", "new-window", ...s.window("0.4"));
      expect(started.status).toBe(0);
      const seen = await waitFor(() => [0, 1, 2].every((w) => BOLD.test(s.screen(w))), 30_000, 100);
      expect(seen, [0, 1, 2].map(s.screen).join("\n---\n")).toBe(true);
      const ids = [...records(s.env).keys()];
      if (new Set(ids.map((id) => id.slice(0, 6))).size === 1 || attempt === 5) break;
      s.tmux("kill-server");
      s = session();
    }
    const { cwd, env, tmux, screen } = s;
    try {
      const parts = [0, 1, 2].map((w) => BOLD.exec(screen(w))![1]!);
      const ids = [...records(env).keys()];
      expect(ids).toHaveLength(3);
      for (const part of parts) expect(ids.filter((id) => id.startsWith(part)), `${part} among ${ids.join(", ")}`).toHaveLength(1);
      expect(new Set(parts).size).toBe(3);
      // Stopping by the first window's part stops that run alone.
      const first = ids.find((id) => id.startsWith(parts[0]!))!;
      const stop = await loopx(node, ["runs", "stop", parts[0]!], cwd, env);
      expect(stop.code, stop.stderr).toBe(0);
      expect(await waitFor(() => /exit=0/.test(screen(0)), 30_000, 100), screen(0)).toBe(true);
      await sleep(500);
      expect(records(env)).toEqual(new Map(ids.map((id) => [id, id === first])));
      for (const part of parts.slice(1)) expect((await loopx(node, ["runs", "stop", part], cwd, env)).code).toBe(0);
      const ended = await waitFor(() => [0, 1, 2].every((w) => /exit=0/.test(screen(w))), 30_000, 100);
      expect(ended, [0, 1, 2].map(screen).join("\n---\n")).toBe(true);
      // The summary line highlights the same part.
      for (const [w, part] of parts.entries()) expect(screen(w)).toMatch(new RegExp(`stopped on request · .* · run \\x1b\\[1m${part}(?:\\x1b\\[|$)`, "m"));
    } finally {
      tmux("kill-server");
    }
  });
});
