/**
 * A script's stdout is a real pipe (item 5): on Linux, opening /dev/stdout or /dev/fd/1
 * on the runtimes' own socketpair fails with ENXIO; loopx gives scripts a FIFO instead. Under node,
 * bun and the standalone binary: writes through /dev/stdout, /dev/fd/1, `tee` to a dup of stdout
 * and a TS script's writeFileSync("/dev/stdout") are captured as structured output; large output
 * arrives whole; a stray still holding one script's stdout never leaks into the next script's.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "vitest";
import { CLIS, isolatedEnv, makeProject, runCommand, sh } from "../../helpers.js";

const RUNNERS = CLIS;

const COUNT = 'echo x >> "$LOOPX_PROJECT_ROOT/count"\n';

describe.concurrent.each(RUNNERS)("stdout is a pipe ($name)", (runner) => {
  const run = (cwd: string, args: string[], timeoutMs = 30_000) => runCommand(runner.exe, [...runner.prefix, ...args], { cwd, env: isolatedEnv(), timeoutMs });
  const iterations = (cwd: string) => readFileSync(join(cwd, "count"), "utf8").split("\n").filter(Boolean).length;

  it.concurrent.for([
    ["echo > /dev/stdout", `echo '{"stop": true}' > /dev/stdout`],
    ["cat > /dev/fd/1", `cat > /dev/fd/1 <<< '{"stop": true}'`],
    ["tee to a dup of stdout", `echo '{"stop": true}' | tee /dev/fd/3 3>&1 > "$LOOPX_TMPDIR/copy"`],
    ["a FIFO by test -p", `[ -p /dev/stdout ] && echo '{"stop": true}'`],
  ])("%s: captured as the script's output (stop after one iteration)", async ([, line], { expect }) => {
    const cwd = makeProject({ ".loopx/w/index.sh": sh(`${COUNT}${line}`) });
    const result = await run(cwd, ["run", "-n", "3", "w"]);
    expect(result).toMatchObject({ code: 0, stdout: "", stderr: "" });
    expect(iterations(cwd)).toBe(1);
  });

  it.concurrent("a TS script writing its output with writeFileSync('/dev/stdout')", async ({ expect }) => {
    const cwd = makeProject({
      ".loopx/w/index.ts":
        'import { appendFileSync, writeFileSync } from "node:fs";\n' +
        'appendFileSync(`${process.env.LOOPX_PROJECT_ROOT}/count`, "x\\n");\n' +
        'writeFileSync("/dev/stdout", JSON.stringify({ stop: true }));\n',
    });
    const result = await run(cwd, ["run", "-n", "3", "w"]);
    expect(result).toMatchObject({ code: 0, stdout: "", stderr: "" });
    expect(iterations(cwd)).toBe(1);
  });

  it.concurrent("5 MB written through /dev/stdout arrive whole (handed on as the next script's input)", async ({ expect }) => {
    const cwd = makeProject({
      ".loopx/w/index.sh": sh(`{ printf '{"goto": "check", "result": "'; head -c 5000000 /dev/zero | tr '\\0' a; printf '"}'; } > /dev/stdout`),
      ".loopx/w/check.sh": sh('wc -c > "$LOOPX_PROJECT_ROOT/size"\necho \'{"stop": true}\''),
    });
    const result = await run(cwd, ["run", "w"]);
    expect(result).toMatchObject({ code: 0, stdout: "", stderr: "" });
    expect(readFileSync(join(cwd, "size"), "utf8").trim()).toBe("5000000");
  });

  // 100 script starts: room for a loaded 2-core box (CI runs other files beside this one).
  it.concurrent("50 iterations in one run reuse the pipe with nothing carried over", { timeout: 150_000 }, async ({ expect }) => {
    const cwd = makeProject({
      ".loopx/w/index.sh": sh(`${COUNT}n=$(wc -l < "$LOOPX_PROJECT_ROOT/count")\necho "{\\"result\\": \\"$n\\", \\"goto\\": \\"check\\"}" > /dev/stdout`),
      ".loopx/w/check.sh": sh('read -r got\n[ "$got" = "$(wc -l < "$LOOPX_PROJECT_ROOT/count" | tr -d " ")" ] || { echo "carried over: $got" >&2; exit 1; }'),
    });
    const result = await run(cwd, ["run", "-n", "100", "w"], 140_000);
    expect(result).toMatchObject({ code: 0, stdout: "", stderr: "" });
    expect(iterations(cwd)).toBe(50);
  });

  it.concurrent("a stray still holding one script's stdout writes nothing into the next script's", async ({ expect }) => {
    const cwd = makeProject({
      // The stray keeps the pipe and writes after its script is gone, while b runs.
      ".loopx/w/index.sh": sh(`setsid bash -c 'sleep 0.7; echo LATE; echo LATE >&2' &\necho '{"goto": "b"}'`),
      ".loopx/w/b.sh": sh(`sleep 1.5\necho '{"result": "clean", "goto": "c"}'`),
      ".loopx/w/c.sh": sh(`cat > "$LOOPX_PROJECT_ROOT/input"\necho '{"stop": true}'`),
    });
    const result = await run(cwd, ["run", "w"]);
    expect(result.code, result.stderr).toBe(0);
    expect(readFileSync(join(cwd, "input"), "utf8")).toBe("clean");
  });
});
