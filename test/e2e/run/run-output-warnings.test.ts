/**
 * Silent traps of unattended loops: a near-miss structured output — text
 * before the JSON line, `{"stop":"true"}`, `{"Stop":true}`, `{"goto":5}` — is still read as the
 * spec says (a raw result, the field ignored) but the run says so once per script (stderr and a
 * `warning` record event; LOOPX_WARN_OUTPUT=0 turns it off); a failed bash script saved with CRLF
 * line endings gets one hint line naming the file and the fix. On node, bun and the binary.
 */
import { describe, expect, it } from "vitest";
import { CHANNELS, isolatedEnv, makeProject, warnings } from "../../helpers.js";
import { events, loopx, recordIds } from "../../fixtures/control/support.js";

const NEAR_MISSES: Array<[string, string, RegExp]> = [
  ["text before the JSON line", 'echo "committing..."\n"$LOOPX_BIN" output --stop', /not one JSON object .*"stop" is ignored/],
  ['{"stop":"true"}', `echo '{"stop":"true"}'`, /"stop" is "true", and only true stops the loop/],
  ['{"Stop":true}', `echo '{"Stop":true}'`, /"Stop" is not a field loopx reads .*"stop"/],
  ['{"goto":5}', `echo '{"goto":5}'`, /"goto" is 5, not a string/],
];

describe.each(CHANNELS)("near-miss outputs and CRLF scripts ($name)", (channel) => {
  it.concurrent.each(NEAR_MISSES)("%s: the loop goes on as the spec says, with one warning line and one record event", async (_name, body, pattern) => {
    const cwd = makeProject({ ".loopx/main/index.sh": `#!/bin/bash\n${body}\n` });
    const env = isolatedEnv();
    const result = await loopx(channel, ["run", "-n", "3", "main"], cwd, env);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("");
    const lines = warnings(result.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^loopx: warning: main:index: /);
    expect(lines[0]).toMatch(pattern);
    const [id] = recordIds(env);
    const record = events(env, id!);
    expect(record.filter((event) => event.type === "iteration.end")).toHaveLength(3);
    expect(record.filter((event) => event.type === "warning").map((event) => [event.kind, event.n, event.target])).toEqual([["output", 1, "main:index"]]);
  });

  it.concurrent("LOOPX_WARN_OUTPUT=0 turns the warning off; a plain result or a good output gets none", async () => {
    const cwd = makeProject({
      ".loopx/main/index.sh": `#!/bin/bash\necho "committing..."\n"$LOOPX_BIN" output --goto good\n`,
      ".loopx/main/good.sh": `#!/bin/bash\necho "plain text"\necho '{"not":"an output"}'\n`,
    });
    const quiet = await loopx(channel, ["run", "-n", "2", "main"], cwd, isolatedEnv({ LOOPX_WARN_OUTPUT: "0" }));
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).toBe("");
    const loud = await loopx(channel, ["run", "-n", "2", "main"], cwd, isolatedEnv());
    expect(warnings(loud.stderr)).toHaveLength(1);
  });

  it.concurrent("a failed bash script with CRLF line endings: one hint naming the file and the fix", async () => {
    const cwd = makeProject({ ".loopx/main/index.sh": '#!/bin/bash\r\necho "working" >&2\r\n"$LOOPX_BIN" output --stop\r\n' });
    const result = await loopx(channel, ["run", "-n", "2", "main"], cwd, isolatedEnv());
    expect(result.code).toBe(1);
    const hints = warnings(result.stderr);
    expect(hints).toHaveLength(1);
    expect(hints[0]).toContain(`${cwd}/.loopx/main/index.sh has Windows (CRLF) line endings`);
    expect(hints[0]).toContain(`sed -i 's/\\r$//' ${cwd}/.loopx/main/index.sh`);
    // The same script with LF endings fails for other reasons without the hint.
    const lf = makeProject({ ".loopx/main/index.sh": "#!/bin/bash\nexit 3\n" });
    expect(warnings((await loopx(channel, ["run", "main"], lf, isolatedEnv())).stderr)).toEqual([]);
  });
});
