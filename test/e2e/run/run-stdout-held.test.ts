/**
 * A background process holds the loop: `sleep 3 &` in a script keeps its stdout
 * open, and loopx reads stdout to its end (the spec), so it waits — now saying so once per script
 * per run, two seconds after the script's own process exited: one `loopx: warning:` line naming
 * the holder (pid, command) and how to avoid it, and a `warning` record event. A script whose
 * stdout closes with it gets nothing. Real processes, on node, bun and the binary.
 */
import { describe, expect, it } from "vitest";
import { CHANNELS, isolatedEnv, makeProject, warnings } from "../../helpers.js";
import { events, loopx, recordIds } from "../../fixtures/control/support.js";

describe("run: a background process holding stdout", () => {
  it.concurrent.each(CHANNELS)("$name: one warning naming the holder and the fix; the record has it; a clean script gets none", async (channel) => {
    const cwd = makeProject({
      ".loopx/main/index.sh": `#!/bin/bash\nsleep 3 &\necho "$!" > "$LOOPX_PROJECT_ROOT/bg.pid"\n"$LOOPX_BIN" output --goto clean\n`,
      ".loopx/main/clean.sh": `#!/bin/bash\nsleep 1 >/dev/null 2>&1 &\necho '{"result":"ok"}'\n`,
    });
    const env = isolatedEnv();
    const result = await loopx(channel, ["run", "-n", "3", "main"], cwd, env);
    expect(result.code, result.stderr).toBe(0);
    const lines = warnings(result.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^loopx: warning: main:index: its own process has exited, but its stdout is still open after 2 s, held by pid \d+ \(sleep 3\);/);
    expect(lines[0]).toContain("cmd >/dev/null 2>&1 &");
    const record = events(env, recordIds(env)[0]!);
    expect(record.filter((event) => event.type === "warning").map((event) => [event.kind, event.n, event.target])).toEqual([["stdout-held", 1, "main:index"]]);
  });
});
