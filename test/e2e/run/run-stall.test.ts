/**
 * The stall sensor, `loopx run --stall-after <n>` (loopx's own addition), black-box under node, bun
 * and the standalone binary with real git: a script that changes nothing ends "stalled" after n
 * iterations (exit 5, one line, a run.stall event, the end hook told); A→B→A oscillation stalls;
 * new commits never do; `loopx progress` keeps a loop alive; `runs resume` goes on.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { makeProject, sh } from "../../helpers.js";
import { CHANNELS, events, loopx, recordIds, type Channel } from "../../fixtures/control/support.js";
import { git, gitEnv } from "../../fixtures/worktree.js";

vi.setConfig({ testTimeout: 120_000 });

const only = (stderr: string) => stderr.split("\n").filter((line) => line.startsWith("loopx:"));

/** A git repository with one commit; `.loopx/` untracked. */
function repo(env: Record<string, string>, files: Record<string, string>): string {
  const root = makeProject({ README: "readme\n", ...files });
  git(root, ["init", "-q", "-b", "main"], env);
  git(root, ["add", "README"], env);
  git(root, ["commit", "-q", "-m", "init"], env);
  return root;
}

const head = (root: string, env: Record<string, string>) => git(root, ["rev-parse", "HEAD"], env).trim().slice(0, 12);

describe.concurrent.each(CHANNELS)("--stall-after ($name)", (channel: Channel) => {
  it("a script that changes nothing: stalled after 3 iterations, exit 5, one line, a run.stall event, the end hook and runs show tell it", async () => {
    const env = gitEnv();
    const root = repo(env, { ".loopx/w/index.sh": sh("true") });
    const hook = `cat > ${JSON.stringify(join(root, "..", `end-${channel.name}.json`))}`;
    const result = await loopx(channel, ["run", "-n", "10", "--stall-after", "3", "--on-end", hook, "w"], root, env);
    const line = `loopx: stalled: iterations 1-3 made no progress (--stall-after 3): they left the workspace as it was at the start (HEAD ${head(root, env)}, clean)`;
    expect(result.code, result.stderr).toBe(5);
    expect(only(result.stderr)).toEqual([line]);
    const id = recordIds(env)[0]!;
    const all = events(env, id);
    expect(all.filter((event) => event.type === "iteration.start")).toHaveLength(3);
    const stall = all.find((event) => event.type === "run.stall");
    expect(stall).toMatchObject({ after: 3, message: line.slice("loopx: ".length), flat: [1, 2, 3].map((n) => ({ n, since: 0 })) });
    expect(all.at(-1)).toMatchObject({ type: "run.end", reason: "stalled", exitCode: 5, iterations: 3 });
    const ending = JSON.parse(readFileSync(join(root, "..", `end-${channel.name}.json`), "utf8"));
    expect(ending).toMatchObject({ state: "stalled", exitCode: 5 });
    const listed = await loopx(channel, ["runs", "--state", "stalled"], root, env);
    expect(listed.stdout).toContain(id);
    const shown = await loopx(channel, ["runs", "show", id], root, env);
    expect(shown.stdout).toContain(line.slice("loopx: ".length));
  });

  it("A→B→A oscillation stalls; new commits each time never do", async () => {
    const env = gitEnv();
    const root = repo(env, {
      ".loopx/ab/index.sh": sh('echo $((LOOPX_ITERATION % 2)) > "$LOOPX_PROJECT_ROOT/a.txt"'),
      ".loopx/c/index.sh": sh('cd "$LOOPX_PROJECT_ROOT" && echo "$LOOPX_ITERATION" > c.txt && git add c.txt && git commit -q -m "c $LOOPX_ITERATION"'),
    });
    const oscillating = await loopx(channel, ["run", "-n", "20", "--stall-after", "3", "ab"], root, env);
    expect(oscillating.code, oscillating.stderr).toBe(5);
    expect(only(oscillating.stderr)).toEqual([
      `loopx: stalled: iterations 3-5 made no progress (--stall-after 3): they left the workspace as it was after iteration 1 (HEAD ${head(root, env)}, 1 untracked file) or as it was after iteration 2 (HEAD ${head(root, env)}, 1 untracked file)`,
    ]);
    git(root, ["clean", "-fq", "a.txt"], env);
    const committing = await loopx(channel, ["run", "-n", "6", "--stall-after", "2", "c"], root, env);
    expect(committing.code, committing.stderr).toBe(0);
    expect(committing.stderr).toBe("");
    expect(git(root, ["rev-list", "--count", "HEAD"], env).trim()).toBe("7");
  });

  it("loopx progress keeps a loop that changes no file alive; a number under the minimum step does not; outside such a run it does nothing", async () => {
    const env = gitEnv();
    const root = repo(env, {
      ".loopx/p/index.sh": sh('"$LOOPX_BIN" progress "$LOOPX_ITERATION"'),
      ".loopx/j/index.sh": sh('"$LOOPX_BIN" progress "0.8$((LOOPX_ITERATION % 2))" --min-step 0.05'),
      ".loopx/v/index.sh": sh('echo "${LOOPX_RUN_PROGRESS-unset}" > "$LOOPX_PROJECT_ROOT/../v-$LOOPX_RUN_ID"; "$LOOPX_BIN" progress 1'),
    });
    const alive = await loopx(channel, ["run", "-n", "6", "--stall-after", "2", "p"], root, env);
    expect(alive.code, alive.stderr).toBe(0);
    const jitter = await loopx(channel, ["run", "-n", "10", "--stall-after", "2", "j"], root, env);
    expect(jitter.code, jitter.stderr).toBe(5);
    expect(only(jitter.stderr)[0]).toContain("iterations 2 and 3 made no progress (--stall-after 2)");
    expect(only(jitter.stderr)[0]).toContain("their progress (0.8, 0.81) did not beat the best (0.81) by the minimum step");
    // Without the switch: no variable, nothing written, exit 0.
    const plain = await loopx(channel, ["run", "-n", "1", "v"], root, env);
    expect(plain.code, plain.stderr).toBe(0);
    const id = recordIds(env).find((run) => events(env, run)[0]?.target === "v:index")!;
    expect(readFileSync(join(root, "..", `v-${id}`), "utf8")).toBe("unset\n");
    const refused = await loopx(channel, ["progress", "1", "--min-step", "-1"], root, env);
    expect(refused.code).toBe(1);
    expect(only(refused.stderr)).toHaveLength(1);
  });

  it("progress() from \"loopx\" in a TypeScript script keeps a loop alive; the same value again does not", async () => {
    const env = gitEnv();
    const root = repo(env, {
      ".loopx/ts/index.ts": 'import { progress } from "loopx";\nprogress(Number(process.env.LOOPX_ITERATION) > 3 ? 3 : Number(process.env.LOOPX_ITERATION));\n',
    });
    const result = await loopx(channel, ["run", "-n", "8", "--stall-after", "2", "ts"], root, env);
    expect(result.code, result.stderr).toBe(5);
    expect(only(result.stderr)[0]).toContain("iterations 4 and 5 made no progress (--stall-after 2)");
  });

  it("runs resume goes on with a stalled run: the next iterations count anew", async () => {
    const env = gitEnv();
    // Changes nothing until iteration 4, then commits, and stops at 5.
    const root = repo(env, {
      ".loopx/r/index.sh": sh(
        [
          '[ "$LOOPX_ITERATION" -lt 4 ] && exit 0',
          'cd "$LOOPX_PROJECT_ROOT" && echo "$LOOPX_ITERATION" > r.txt && git add r.txt && git commit -q -m "r $LOOPX_ITERATION"',
          '[ "$LOOPX_ITERATION" -ge 5 ] && echo \'{"stop":true}\'',
          "exit 0",
        ].join("\n"),
      ),
    });
    const first = await loopx(channel, ["run", "--stall-after", "3", "r"], root, env);
    expect(first.code, first.stderr).toBe(5);
    const id = recordIds(env)[0]!;
    const resumed = await loopx(channel, ["runs", "resume", id], root, env);
    expect(resumed.code, resumed.stderr).toBe(0);
    const all = events(env, id);
    expect(all.filter((event) => event.type === "iteration.start").map((event) => event.n)).toEqual([1, 2, 3, 4, 5]);
    expect(all.at(-1)).toMatchObject({ type: "run.end", reason: "stopped", exitCode: 0 });
    expect(all.find((event) => event.type === "run.start")?.options).toMatchObject({ stallAfter: 3 });
  });

  it("outside a git project only progress signals count (one warning line says so); a bad count is one line", async () => {
    const env = gitEnv();
    const root = makeProject({ ".loopx/w/index.sh": sh("true") });
    const result = await loopx(channel, ["run", "--stall-after", "2", "w"], root, env);
    expect(result.code).toBe(5);
    expect(only(result.stderr)).toEqual([
      `loopx: warning: --stall-after: ${root} is not in a git work tree: only progress signals (loopx progress) count as progress`,
      "loopx: stalled: iterations 1 and 2 made no progress (--stall-after 2): no progress signal came, and there is no git work tree to compare",
    ]);
    const bad = await loopx(channel, ["run", "--stall-after", "0", "w"], root, env);
    expect(bad.code).toBe(1);
    expect(only(bad.stderr)).toHaveLength(1);
  });
});
