/**
 * loopx's XDG directories (os/xdg.ts, the one lookup): `$XDG_CONFIG_HOME/loopx/env`,
 * `$XDG_STATE_HOME/loopx/runs/`, `$XDG_CACHE_HOME/loopx/` (Node's transform cache, the binary's
 * helper package). A relative value is invalid under the XDG Base Directory specification and is
 * ignored — the default under $HOME applies — for every one of them, on every channel. Before the
 * one lookup, the env file, the records and the binary's cache took a relative value as relative
 * to the cwd of the moment, and only the transform cache ignored it.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "vitest";
import { CHANNELS, isolatedEnv, makeProject, runCommand, sh } from "../../helpers.js";

describe.each(CHANNELS)("XDG directories ($name)", ({ name, argv }) => {
  const loopx = (args: string[], cwd: string, env: Record<string, string>) =>
    runCommand(argv[0]!, [...argv.slice(1), ...args], { cwd, env, timeoutMs: 60_000 });

  it.concurrent("relative XDG_CONFIG_HOME / XDG_STATE_HOME / XDG_CACHE_HOME are ignored: the defaults under $HOME apply", async ({ expect }) => {
    const cwd = makeProject({
      ".loopx/w/index.ts": 'import { output } from "loopx";\nconst n: number = Number(process.env.K);\noutput({ result: String(n + 1) });\n',
      ".loopx/w/check.sh": sh('echo "$K"'),
    });
    const env = isolatedEnv({ XDG_CONFIG_HOME: "cfg", XDG_STATE_HOME: "state", XDG_CACHE_HOME: "cache" });
    const home = env.HOME!;

    const set = await loopx(["env", "set", "K", "41"], cwd, env);
    expect(set).toMatchObject({ code: 0, stderr: "" });
    expect(readFileSync(join(home, ".config", "loopx", "env"), "utf8")).toBe('K="41"\n');

    const run = await loopx(["run", "-n", "1", "w"], cwd, env);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    const runs = readdirSync(join(home, ".local", "state", "loopx", "runs"));
    expect(runs).toHaveLength(1);
    expect(readFileSync(join(home, ".local", "state", "loopx", "runs", runs[0]!), "utf8")).toContain('"result":"42"');

    // The caches: Node's transform cache, the binary's helper package (Bun caches nothing of loopx's).
    const cache = join(home, ".cache", "loopx");
    if (name === "node") expect(readdirSync(join(cache, "transform")).filter((file) => file.endsWith(".js"))).toHaveLength(1);
    if (name === "binary") expect(readdirSync(cache).some((entry) => existsSync(join(cache, entry, "node-path", "loopx", "index.js")))).toBe(true);

    // Nothing of loopx's under the relative names, whichever directory they would have been taken
    // from (Bun itself keeps its transpiler cache in a relative XDG_CACHE_HOME/bun: not loopx's).
    for (const relative of ["cfg", "state", "cache", ".loopx/w/cfg", ".loopx/w/state", ".loopx/w/cache"]) {
      expect(existsSync(join(cwd, relative, "loopx"))).toBe(false);
    }
  });
});
