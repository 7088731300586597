import { describe, expect, it } from "vitest";
import { RUNTIMES, isolatedEnv, makeProject, runLoopx } from "../../helpers.js";

describe.each(RUNTIMES)("smoke ($name)", (runtime) => {
  it("runs a bash → ts → cross-workflow loop to stop", async () => {
    const cwd = makeProject({
      ".loopx/ralph/index.sh": '#!/bin/bash\n$LOOPX_BIN output --result "hi" --goto check\n',
      ".loopx/ralph/check.ts": 'import { input, output } from "loopx";\nconst data: string = await input();\noutput({ result: data + "!", goto: "other:index" });\n',
      ".loopx/other/index.sh": 'read -r line; echo "got:$line" >&2; echo \'{"stop": true}\'\n',
    });
    const result = await runLoopx(runtime, ["run", "ralph"], { cwd, env: isolatedEnv() });
    expect(result.stderr).toContain("got:hi!");
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("");
  });
});
