/**
 * loopx's own run variables under the CLI (node dist/bin.js, bun dist/bin.js, the standalone
 * binary): LOOPX_TMPDIR (one private scratch directory per run, removed on every way a run ends,
 * safely), LOOPX_RUN_ID and LOOPX_ITERATION. Each test gives loopx its own TMPDIR, so "what loopx
 * left behind" is exactly the `loopx-XXXXXX` entries in it.
 */
import type { ChildProcess } from "node:child_process";
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLIS, ROOT, giveToUnprivileged, isolatedEnv, leftovers, makeProject, processAlive, runCommand, scratchEnv, sh, sleep, tempDir, unprivileged, waitFor, waitForFile, type Cli, type RunResult } from "../../helpers.js";

function loopx(cli: Cli, args: string[], cwd: string, env: Record<string, string>, onSpawn?: (child: ChildProcess) => void, timeoutMs = 30_000): Promise<RunResult> {
  return runCommand(cli.exe, [...cli.prefix, ...args], { cwd, env, onSpawn, timeoutMs });
}

/** `loopx args` as the unprivileged user (permission cases fail even though CI runs as root). */
function loopxAsNobody(cli: Cli, args: string[], cwd: string, env: Record<string, string>): Promise<RunResult> {
  const [exe, argv] = unprivileged(cli.exe, [...cli.prefix, ...args], cwd);
  return runCommand(exe, argv, { cwd, env });
}
const chownToNobody = giveToUnprivileged;

/** Lines `key=value ...` a script appended to <root>/trace.log, as records. */
function records(root: string): Record<string, string>[] {
  const path = join(root, "trace.log");
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => Object.fromEntries(line.split(" ").map((pair) => pair.split("=", 2) as [string, string])));
}

/** Appends where/iteration/run id/tmpdir/its mode to trace.log. */
const TRACE = `echo "at=$LOOPX_WORKFLOW:$(basename "$0" .sh) n=$LOOPX_ITERATION run=$LOOPX_RUN_ID tmp=$LOOPX_TMPDIR mode=$(stat -c %a "$LOOPX_TMPDIR")" >> "$LOOPX_PROJECT_ROOT/trace.log"`;

/** One script recording its tmpdir, then `body`. */
const traced = (body: string) => sh(`${TRACE}\n${body}`);

function startLoopx(cli: Cli, args: string[], cwd: string, env: Record<string, string>) {
  let child: ChildProcess | undefined;
  const result = loopx(cli, args, cwd, env, (c) => (child = c));
  return { child: child!, result };
}

describe.each(CLIS)("LOOPX_TMPDIR, LOOPX_RUN_ID, LOOPX_ITERATION under the CLI ($name)", (cli) => {
  it.concurrent("one directory for the whole run: start, goto, cross-workflow goto, reset; files persist; 0700; ITERATION counts as -n does; RUN_ID fixed; removed at -n", async ({ expect }) => {
    // a:index → (goto b) a:b → (goto other:x) other:x → (no goto: reset) a:index → a:b  (-n 5)
    const cwd = makeProject({
      ".loopx/a/index.sh": traced('echo "n$LOOPX_ITERATION" >> "$LOOPX_TMPDIR/handoff"\n$LOOPX_BIN output --goto b'),
      ".loopx/a/b.sh": traced('cat "$LOOPX_TMPDIR/handoff" >> "$LOOPX_PROJECT_ROOT/seen.log"\n$LOOPX_BIN output --goto other:x'),
      ".loopx/other/x.sh": traced('echo "x$LOOPX_ITERATION" >> "$LOOPX_TMPDIR/handoff"'),
    });
    const { env, tmp } = scratchEnv();
    const result = await loopx(cli, ["run", "-n", "5", "a"], cwd, env);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const seen = records(cwd);
    expect(seen.map((r) => `${r.n}@${r.at}`)).toEqual(["1@a:index", "2@a:b", "3@other:x", "4@a:index", "5@a:b"]);
    const dir = seen[0]!.tmp!;
    expect(isAbsolute(dir)).toBe(true);
    expect(dirname(dir)).toBe(tmp);
    expect(dir).toMatch(/\/loopx-[A-Za-z0-9]{6}$/);
    for (const r of seen) {
      expect(r.tmp).toBe(dir);
      expect(r.mode).toBe("700");
      expect(r.run).toBe(seen[0]!.run);
    }
    expect(seen[0]!.run).toMatch(/^[0-9a-z]{15}$/);
    // a:b read what earlier scripts of the run wrote: n1, then n1 x3 n4.
    expect(readFileSync(join(cwd, "seen.log"), "utf8")).toBe("n1\nn1\nx3\nn4\n");
    expect(existsSync(dir)).toBe(false);
    expect(leftovers(tmp)).toEqual([]);
  });

  it.concurrent("two concurrent runs get distinct directories and run ids; a later run a new id", async ({ expect }) => {
    // Each run's script waits until the other run's script is running too.
    const sync = tempDir("loopx-sync-");
    const script = (me: string, other: string) =>
      traced(`touch "${sync}/${me}"\nfor i in $(seq 1 200); do [ -e "${sync}/${other}" ] && break; sleep 0.05; done\n[ -e "${sync}/${other}" ]\n$LOOPX_BIN output --stop`);
    const one = makeProject({ ".loopx/w/index.sh": script("one", "two") });
    const two = makeProject({ ".loopx/w/index.sh": script("two", "one") });
    const { env, tmp } = scratchEnv();
    const [r1, r2] = await Promise.all([loopx(cli, ["run", "w"], one, env), loopx(cli, ["run", "w"], two, env)]);
    expect([r1.code, r2.code, r1.stderr, r2.stderr]).toEqual([0, 0, "", ""]);
    const [a, b] = [records(one)[0]!, records(two)[0]!];
    expect(a.tmp).not.toBe(b.tmp);
    expect(a.run).not.toBe(b.run);
    rmSync(join(one, "trace.log"));
    rmSync(join(sync, "two"));
    writeFileSync(join(sync, "two"), "");
    expect((await loopx(cli, ["run", "w"], one, env)).code).toBe(0);
    expect(records(one)[0]!.run).not.toBe(a.run);
    expect(records(one)[0]!.run! > a.run!).toBe(true); // sortable by start time
    expect(leftovers(tmp)).toEqual([]);
  });

  it.concurrent("loopx's values override LOOPX_TMPDIR / RUN_ID / ITERATION from the environment, the global env file and -e (env set accepts the names)", async ({ expect }) => {
    const cwd = makeProject({
      ".loopx/w/index.sh": traced('echo "G=$G L=$L I=$I" >> "$LOOPX_PROJECT_ROOT/user.log"\n$LOOPX_BIN output --stop'),
      "local.env": "LOOPX_TMPDIR=/from-local\nLOOPX_RUN_ID=from-local\nLOOPX_ITERATION=77\nL=local\n",
    });
    const { env, tmp } = scratchEnv({ LOOPX_TMPDIR: "/inherited", LOOPX_RUN_ID: "inherited", LOOPX_ITERATION: "99", I: "inherited" });
    for (const [name, value] of [["LOOPX_TMPDIR", "/global"], ["LOOPX_RUN_ID", "global"], ["LOOPX_ITERATION", "55"], ["G", "global"]]) {
      const set = await loopx(cli, ["env", "set", name!, value!], cwd, env);
      expect([set.code, set.stderr]).toEqual([0, ""]);
    }
    expect((await loopx(cli, ["env", "list"], cwd, env)).stdout).toContain("LOOPX_RUN_ID=global\n");
    for (const args of [["run", "w"], ["run", "-e", "local.env", "w"]]) {
      rmSync(join(cwd, "trace.log"), { force: true });
      const result = await loopx(cli, args, cwd, env);
      expect([result.code, result.stderr]).toEqual([0, ""]);
      const [r] = records(cwd);
      expect(dirname(r!.tmp!)).toBe(tmp);
      expect(r!.run).toMatch(/^[0-9a-z]{15}$/);
      expect(r!.n).toBe("1");
    }
    // The user's other variables still arrive (the override is only for loopx's names).
    expect(readFileSync(join(cwd, "user.log"), "utf8")).toBe("G=global L= I=inherited\nG=global L=local I=inherited\n");
    expect(leftovers(tmp)).toEqual([]);
  });

  it.concurrent("no directory for -n 0 or when validation fails (missing workflow, missing -e file, bad target)", async ({ expect }) => {
    const cwd = makeProject({ ".loopx/w/index.sh": traced("") });
    const { env, tmp } = scratchEnv();
    expect((await loopx(cli, ["run", "-n", "0", "w"], cwd, env)).code).toBe(0);
    for (const args of [["run", "nope"], ["run", "-e", "missing.env", "w"], ["run", "w:nope"], ["run", "a:b:c"]]) {
      expect((await loopx(cli, args, cwd, env)).code).toBe(1);
    }
    expect(records(cwd)).toEqual([]);
    expect(readdirSync(tmp).filter((name) => name.startsWith("loopx-"))).toEqual([]);
  });

  it.concurrent("creation failure (TMPDIR missing, TMPDIR a file): exit 1, one line naming the directory and the reason, no script ran", async ({ expect }) => {
    const cwd = makeProject({ ".loopx/w/index.sh": traced("") });
    const file = join(tempDir("loopx-tmpfile-"), "not-a-dir");
    writeFileSync(file, "");
    for (const [dir, reason] of [[join(cwd, "missing-tmp"), "no such file or directory (ENOENT)"], [file, "not a directory (ENOTDIR)"]] as const) {
      const result = await loopx(cli, ["run", "w"], cwd, isolatedEnv({ TMPDIR: dir }));
      expect(result.stdout).toBe("");
      expect(result.stderr).toMatch(/^loopx:[^\n]*\n$/);
      expect(result.stderr).toContain(`LOOPX_TMPDIR) in ${dir}: ${reason}`);
      expect(result.code).toBe(1);
    }
    expect(records(cwd)).toEqual([]);
  });

  it.concurrent("creation failure (TMPDIR read-only for the user running loopx): exit 1, one line, no script ran", async ({ expect }) => {
    const cwd = makeProject({ ".loopx/w/index.sh": traced("") });
    const { env, tmp } = scratchEnv();
    chownToNobody(cwd, env.HOME!);
    chmodSync(tmp, 0o555);
    const result = await loopxAsNobody(cli, ["run", "w"], cwd, env);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(`loopx: cannot create the run's temporary directory (LOOPX_TMPDIR) in ${tmp}: permission denied (EACCES)\n`);
    expect(result.code).toBe(1);
    expect(records(cwd)).toEqual([]);
  });

  describe("removed on every ending", () => {
    it.concurrent("stop", async ({ expect }) => {
      const cwd = makeProject({ ".loopx/w/index.sh": traced('touch "$LOOPX_TMPDIR/f"\n$LOOPX_BIN output --stop') });
      const { env, tmp } = scratchEnv();
      const result = await loopx(cli, ["run", "w"], cwd, env);
      expect([result.code, result.stderr]).toEqual([0, ""]);
      expect(records(cwd)).toHaveLength(1);
      expect(leftovers(tmp)).toEqual([]);
    });

    it.concurrent("a script exiting non-zero", async ({ expect }) => {
      const cwd = makeProject({ ".loopx/w/index.sh": traced('touch "$LOOPX_TMPDIR/f"\nexit 3') });
      const { env, tmp } = scratchEnv();
      const result = await loopx(cli, ["run", "w"], cwd, env);
      expect(result.code).toBe(1);
      expect(records(cwd)).toHaveLength(1);
      expect(leftovers(tmp)).toEqual([]);
    });

    it.concurrent("an invalid goto target", async ({ expect }) => {
      const cwd = makeProject({ ".loopx/w/index.sh": traced('touch "$LOOPX_TMPDIR/f"\n$LOOPX_BIN output --goto "a:b:c"') });
      const { env, tmp } = scratchEnv();
      const result = await loopx(cli, ["run", "w"], cwd, env);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("invalid goto");
      expect(leftovers(tmp)).toEqual([]);
    });

    it.concurrent("a missing goto target", async ({ expect }) => {
      const cwd = makeProject({ ".loopx/w/index.sh": traced('touch "$LOOPX_TMPDIR/f"\n$LOOPX_BIN output --goto "gone:x"') });
      const { env, tmp } = scratchEnv();
      const result = await loopx(cli, ["run", "w"], cwd, env);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('"gone" not found');
      expect(leftovers(tmp)).toEqual([]);
    });

    it.concurrent("SIGINT mid-script: after the group is gone, before exit 130", async ({ expect }) => {
      const cwd = makeProject({ ".loopx/w/index.sh": traced(': > "$LOOPX_TMPDIR/f"; : > "$LOOPX_PROJECT_ROOT/ready"\nexec sleep 30') });
      const { env, tmp } = scratchEnv();
      const started = startLoopx(cli, ["run", "w"], cwd, env);
      await waitForFile(join(cwd, "ready"));
      started.child.kill("SIGINT");
      const result = await started.result;
      expect(result.code).toBe(130);
      expect(records(cwd)).toHaveLength(1);
      expect(leftovers(tmp)).toEqual([]);
    });

    it.concurrent("SIGTERM mid-script (the script's trap runs and may still use the directory): exit 143", async ({ expect }) => {
      const cwd = makeProject({
        ".loopx/w/index.sh": traced(`trap 'echo bye > "$LOOPX_TMPDIR/bye" && echo trapped >> "$LOOPX_PROJECT_ROOT/trap.log"; exit 0' TERM\n: > "$LOOPX_PROJECT_ROOT/ready"\nsleep 30 & wait`),
      });
      const { env, tmp } = scratchEnv();
      const started = startLoopx(cli, ["run", "w"], cwd, env);
      await waitForFile(join(cwd, "ready"));
      started.child.kill("SIGTERM");
      const result = await started.result;
      expect(result.code).toBe(143);
      expect(readFileSync(join(cwd, "trap.log"), "utf8")).toBe("trapped\n");
      expect(leftovers(tmp)).toEqual([]);
    });

    it.concurrent("SIGINT at an arbitrary moment of a loop of very short scripts (one just ended, the next about to start): exit 130", async ({ expect }) => {
      const cwd = makeProject({ ".loopx/w/index.sh": sh('echo "$LOOPX_TMPDIR" >> "$LOOPX_PROJECT_ROOT/tmps"') });
      const { env, tmp } = scratchEnv();
      const started = startLoopx(cli, ["run", "-n", "1000000", "w"], cwd, env);
      const count = () => (existsSync(join(cwd, "tmps")) ? readFileSync(join(cwd, "tmps"), "utf8").split("\n").length - 1 : 0);
      expect(await waitFor(() => count() >= 20, 15_000)).toBe(true);
      started.child.kill("SIGINT");
      const result = await started.result;
      expect(result.code).toBe(130);
      expect(new Set(readFileSync(join(cwd, "tmps"), "utf8").trim().split("\n")).size).toBe(1);
      expect(leftovers(tmp)).toEqual([]);
    });

    it.concurrent("SIGINT while a background writer that ignores SIGINT and SIGTERM keeps writing into it: removed only after the SIGKILL, nothing recreated", async ({ expect }) => {
      // The writer re-creates the directory if it is gone: removing it before the group is dead
      // would leave it behind.
      const cwd = makeProject({
        ".loopx/w/index.sh": traced(
          `(trap '' INT TERM; while :; do mkdir -p "$LOOPX_TMPDIR" && echo x >> "$LOOPX_TMPDIR/bg.txt"; sleep 0.02; done) &\n` +
            `echo $! > "$LOOPX_PROJECT_ROOT/bg.pid"\nwhile [ ! -s "$LOOPX_TMPDIR/bg.txt" ]; do sleep 0.02; done\n: > "$LOOPX_PROJECT_ROOT/ready"\nwait`,
        ),
      });
      const { env, tmp } = scratchEnv();
      const started = startLoopx(cli, ["run", "w"], cwd, env);
      await waitForFile(join(cwd, "ready"));
      const bgPid = Number(readFileSync(join(cwd, "bg.pid"), "utf8"));
      const sentAt = Date.now();
      started.child.kill("SIGINT");
      const result = await started.result;
      expect(result.code).toBe(130);
      expect(Date.now() - sentAt).toBeGreaterThan(4000); // the 5 s grace ran out
      expect(processAlive(bgPid)).toBe(false);
      await sleep(100);
      expect(leftovers(tmp)).toEqual([]);
    });
  });

  describe("safe removal", () => {
    it.concurrent("symlinks inside (to a directory, to a file, deep in a tree) are unlinked; their targets survive", async ({ expect }) => {
      const outside = makeProject({ "keep/a.txt": "A", "file.txt": "F" });
      const cwd = makeProject({
        ".loopx/w/index.sh": traced(
          `cd "$LOOPX_TMPDIR" && mkdir -p d1/d2/d3 && ln -s "${outside}/keep" d1/d2/d3/to-dir && ln -s "${outside}/file.txt" to-file && ln -s "${outside}" top\n` +
            `mkdir locked && touch locked/f && chmod 000 locked\n$LOOPX_BIN output --stop`,
        ),
      });
      const { env, tmp } = scratchEnv();
      const result = await loopx(cli, ["run", "w"], cwd, env);
      expect([result.code, result.stderr]).toEqual([0, ""]);
      expect(readFileSync(join(outside, "keep/a.txt"), "utf8")).toBe("A");
      expect(readFileSync(join(outside, "file.txt"), "utf8")).toBe("F");
      expect(leftovers(tmp)).toEqual([]);
    });

    it.concurrent("the directory replaced by a symlink: only the link goes, with one warning", async ({ expect }) => {
      const outside = makeProject({ "keep.txt": "K" });
      const cwd = makeProject({ ".loopx/w/index.sh": traced(`rm -rf "$LOOPX_TMPDIR" && ln -s "${outside}" "$LOOPX_TMPDIR"\n$LOOPX_BIN output --stop`) });
      const { env, tmp } = scratchEnv();
      const result = await loopx(cli, ["run", "w"], cwd, env);
      expect(result.code).toBe(0);
      expect(result.stderr).toMatch(/^loopx: warning: LOOPX_TMPDIR \S+ was replaced by a symlink during the run: removed the link, not its target\n$/);
      expect(readFileSync(join(outside, "keep.txt"), "utf8")).toBe("K");
      expect(leftovers(tmp)).toEqual([]);
    });

    it.concurrent("the directory replaced by another directory (removed and re-made, which reuses the inode; or moved away): left in place, one warning, exit code unchanged", async ({ expect }) => {
      for (const replace of ['rm -rf "$LOOPX_TMPDIR" && mkdir "$LOOPX_TMPDIR"', 'mv "$LOOPX_TMPDIR" "$LOOPX_TMPDIR.old" && mkdir "$LOOPX_TMPDIR"']) {
        const cwd = makeProject({ ".loopx/w/index.sh": traced(`${replace} && echo mine > "$LOOPX_TMPDIR/keep"\nexit 4`) });
        const { env, tmp } = scratchEnv();
        const result = await loopx(cli, ["run", "w"], cwd, env);
        expect(result.code).toBe(1);
        const dir = records(cwd)[0]!.tmp!;
        // The warning (written as the run ends), then the script's failure, unchanged.
        expect(result.stderr, replace).toBe(`loopx: warning: LOOPX_TMPDIR ${dir} was replaced during the run by another directory: left it in place\nloopx: script w:index exited with code 4\n`);
        expect(readFileSync(join(dir, "keep"), "utf8")).toBe("mine\n");
        rmSync(tmp, { recursive: true });
      }
    });

    it.concurrent("a removal that fails (the user cannot write TMPDIR any more) is one warning; the exit code is unchanged", async ({ expect }) => {
      const cwd = makeProject({ ".loopx/w/index.sh": traced('touch "$LOOPX_TMPDIR/f"\nchmod 555 "$(dirname "$LOOPX_TMPDIR")"\n$LOOPX_BIN output --stop') });
      const { env, tmp } = scratchEnv();
      chownToNobody(cwd, env.HOME!, tmp);
      const result = await loopxAsNobody(cli, ["run", "w"], cwd, env);
      const dir = records(cwd)[0]!.tmp!;
      expect(result.code).toBe(0);
      expect(result.stderr).toBe(`loopx: warning: could not remove LOOPX_TMPDIR ${dir}: permission denied (EACCES)\n`);
      chmodSync(tmp, 0o755);
      rmSync(dir, { recursive: true });
    });

    it.concurrent("a file or a FIFO in its place: left in place, one warning", async ({ expect }) => {
      for (const [make, kind] of [["echo data >", "a file"], ["mkfifo", "a FIFO"]] as const) {
        const cwd = makeProject({ ".loopx/w/index.sh": traced(`rm -rf "$LOOPX_TMPDIR" && ${make} "$LOOPX_TMPDIR"\n$LOOPX_BIN output --stop`) });
        const { env } = scratchEnv();
        const result = await loopx(cli, ["run", "w"], cwd, env);
        const dir = records(cwd)[0]!.tmp!;
        expect(result.code).toBe(0);
        expect(result.stderr).toBe(`loopx: warning: LOOPX_TMPDIR ${dir} was replaced during the run by ${kind}: left it in place\n`);
        expect(kind === "a file" ? lstatSync(dir).isFile() : lstatSync(dir).isFIFO()).toBe(true);
        rmSync(dir);
      }
    });
  });
});

describe("LOOPX_TMPDIR removal details (node CLI)", () => {
  const cli = CLIS[0]!;

  it.concurrent("a tree deeper than PATH_MAX, with symlinks at the bottom, is removed without following them", async ({ expect }) => {
    const outside = makeProject({ "keep.txt": "K" });
    const segment = "d".repeat(200);
    const cwd = makeProject({
      ".loopx/w/index.sh": traced(
        `cd "$LOOPX_TMPDIR"\nfor i in $(seq 1 30); do mkdir -p ${Array(5).fill(segment).join("/")} && cd ${Array(5).fill(segment).join("/")}; done\n` +
          `ln -s "${outside}" out && ln -s "${outside}/keep.txt" f && pwd | wc -c > "$LOOPX_PROJECT_ROOT/depth"\ncd /\n$LOOPX_BIN output --stop`,
      ),
    });
    const { env, tmp } = scratchEnv();
    const result = await loopx(cli, ["run", "w"], cwd, env);
    expect([result.code, result.stderr]).toEqual([0, ""]);
    expect(Number(readFileSync(join(cwd, "depth"), "utf8"))).toBeGreaterThan(30_000);
    expect(readFileSync(join(outside, "keep.txt"), "utf8")).toBe("K");
    expect(statSync(outside).isDirectory()).toBe(true);
    expect(leftovers(tmp)).toEqual([]);
  });
});

describe("LOOPX_TMPDIR removal as an unprivileged user (node CLI)", () => {
  it.concurrent("directories a script made read-only or unreadable inside it are still removed, silently", async ({ expect }) => {
    const cwd = makeProject({
      ".loopx/w/index.sh": traced('cd "$LOOPX_TMPDIR" && mkdir -p ro/sub none && touch ro/f ro/sub/g none/h && chmod 500 ro/sub ro && chmod 000 none\n$LOOPX_BIN output --stop'),
    });
    const { env, tmp } = scratchEnv();
    chownToNobody(cwd, env.HOME!, tmp);
    const result = await loopxAsNobody(CLIS[0]!, ["run", "w"], cwd, env);
    expect([result.code, result.stderr]).toEqual([0, ""]);
    expect(records(cwd)).toHaveLength(1);
    expect(leftovers(tmp)).toEqual([]);
  });
});

describe("examples/todo-loop (npm run demo)", () => {
  it("runs to the end under node: hand-off files stay in LOOPX_TMPDIR, nothing left in the project or TMPDIR", async () => {
    const cwd = tempDir();
    for (const rel of ["tasks.md", ".loopx/worker/index.sh", ".loopx/worker/do-task.ts", ".loopx/review/check.sh"]) {
      mkdirSync(dirname(join(cwd, rel)), { recursive: true });
      writeFileSync(join(cwd, rel), readFileSync(join(ROOT, "examples", "todo-loop", rel)));
      if (rel.endsWith(".sh")) chmodSync(join(cwd, rel), 0o755);
    }
    const { env, tmp } = scratchEnv();
    const result = await loopx(CLIS[0]!, ["run", "-n", "20", "worker"], cwd, env);
    expect(result.code).toBe(0);
    expect(readFileSync(join(cwd, "tasks.md"), "utf8")).not.toContain("- [ ]");
    expect(result.stderr).toMatch(/iteration 1\b/);
    expect(readdirSync(cwd).sort()).toEqual([".loopx", "tasks.md"]);
    expect(leftovers(tmp)).toEqual([]);
  });
});
