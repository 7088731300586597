/**
 * `loopx run --timeout main`: the target was taken as the option's value, so
 * the one line names the missing duration (or count), not a missing target. Same parser on every
 * channel; checked on all three as it is cheap.
 */
import { describe, expect, it } from "vitest";
import { CHANNELS, expectOneLineError, isolatedEnv, makeProject } from "../../helpers.js";
import { loopx } from "../../fixtures/channels.js";

describe("run: an option that swallowed the target", () => {
  it.concurrent.each(CHANNELS)("$name: --timeout main, --max-time main, -n main name what the option needs", async (channel) => {
    const cwd = makeProject({ ".loopx/main/index.sh": "#!/bin/bash\necho '{\"stop\":true}'\n" });
    const env = isolatedEnv();
    const timeout = await loopx(channel, ["run", "--timeout", "main"], cwd, env);
    expectOneLineError(timeout, '--timeout needs a duration, e.g. --timeout 20m: it took "main" as its value');
    const maxTime = await loopx(channel, ["run", "--max-time", "main"], cwd, env);
    expectOneLineError(maxTime, "--max-time needs a duration");
    const count = await loopx(channel, ["run", "-n", "main"], cwd, env);
    expectOneLineError(count, "-n needs a count");
    // A plain missing target is still said as before.
    expectOneLineError(await loopx(channel, ["run", "--timeout", "5s"], cwd, env), "loopx run needs a target");
    expect((await loopx(channel, ["run", "--timeout", "5s", "main"], cwd, env)).code).toBe(0);
  });
});
