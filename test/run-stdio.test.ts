/**
 * How a script's stdin looks (spec §6.6, §6.7): the piped `result` can be read any way a script
 * likes — `cat`, `read`, or by opening /dev/stdin — and stdin is empty, never a hang, otherwise.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RUNTIMES, isolatedEnv, makeProject, runLoopx } from "./helpers.js";

describe.each(RUNTIMES)("script stdin ($name)", (runtime) => {
  it("a piped result can be read through /dev/stdin, and stdin is empty again after a reset", async () => {
    const cwd = makeProject({
      ".loopx/w/index.sh": 'echo "index:[$(cat /dev/stdin)]" >> "$LOOPX_PROJECT_ROOT/trace"\n$LOOPX_BIN output --result "line one\nline two" --goto b\n',
      ".loopx/w/b.sh": 'echo "b:[$(cat /dev/stdin)]" >> "$LOOPX_PROJECT_ROOT/trace"\n',
    });
    const result = await runLoopx(runtime, ["run", "-n", "3", "w"], { cwd, env: isolatedEnv() });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(readFileSync(join(cwd, "trace"), "utf8")).toBe("index:[]\nb:[line one\nline two]\nindex:[]\n");
  });
});
