/**
 * `--sandbox` as an unprivileged user (setpriv to nobody when the suite is root, as CI runs it):
 * bubblewrap then needs an unprivileged user namespace, and the fence holds as it does for root —
 * the project is written, $HOME and another project are not, the planted key is not read, only the
 * allowed port connects, and the proxy's refusal is recorded.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { RUNTIMES, giveToUnprivileged, linuxOnly, runLoopxUnprivileged, tempDir } from "../../helpers.js";
import { fencedProject, plantedEnv, recordEvents, standIn } from "./support.js";

linuxOnly("--sandbox as an unprivileged user", () => {
  it.concurrent("the fence holds, the allowed port connects, the refusal is recorded", async (context) => {
    const allowed = await standIn();
    const denied = await standIn();
    context.onTestFinished(() => (allowed.close(), denied.close()));
    const other = tempDir("loopx-other-project-");
    const project = fencedProject({ network: [`127.0.0.1:${allowed.port}`, "api.example.com:443"] });
    const tmp = tempDir("loopx-tmproot-");
    const env = plantedEnv({ OTHER_PROJECT: other, ALLOWED_PORT: String(allowed.port), DENIED_PORT: String(denied.port), TMPDIR: tmp });
    giveToUnprivileged(project, env.HOME!, other, tmp);
    const result = await runLoopxUnprivileged(RUNTIMES[0]!, ["run", "--sandbox", "w"], { cwd: project, env, timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(readFileSync(join(project, "written.txt"), "utf8")).toBe("inside\n");
    expect(existsSync(join(project, "escaped.txt")) ? readFileSync(join(project, "escaped.txt"), "utf8") : "").toBe("");
    expect(existsSync(join(env.HOME!, "outside"))).toBe(false);
    expect(existsSync(join(other, "planted"))).toBe(false);
    expect(readFileSync(join(project, "allowed.txt"), "utf8")).toBe("pong");
    expect(readFileSync(join(project, "proxy.txt"), "utf8")).toBe("403");
    expect(readFileSync(join(project, "js.txt"), "utf8")).toBe("js ran");
    const events = recordEvents(env);
    expect(events.find((event) => event.type === "run.start")?.sandbox).toMatchObject({ kind: "bwrap" });
    expect(events.filter((event) => event.type === "sandbox.denied").map((event) => event.target)).toEqual(["not-allowed.example:443"]);
  });
});
