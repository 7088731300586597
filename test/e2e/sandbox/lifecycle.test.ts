/**
 * Under `--sandbox`, nothing outlives the run: Ctrl-C, `--timeout`, `loopx runs stop --now` and
 * kill -9 of loopx end the fenced script, its `setsid` child and its daemon (the guardian after a
 * kill -9), LOOPX_TMPDIR and the fence's own directory go; `loopx runs resume` goes on inside the
 * fence (run.resume names it) and leaves nothing either.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { CLIS, STUBBORN_SCRIPT, carriersOf, linuxOnly, makeProject, runCli, scratchEnv, sh, sleep, startLoopx, waitFor, waitForLine, type Cli } from "../../helpers.js";
import { recordEvents } from "./support.js";

const read = (cwd: string, name: string): string => readFileSync(join(cwd, name), "utf8").trim();

/** Within `ms`: nothing carries the run's id, its LOOPX_TMPDIR and (unless loopx was killed: the next fenced run sweeps it) the fence's directory are gone. */
async function expectNothingLeft(cwd: string, tmp: string, ms = 8000, fenceDir = true): Promise<void> {
  const id = read(cwd, "run.id");
  expect(await waitFor(() => carriersOf("LOOPX_RUN_ID", id).length === 0, ms, 50), `left: ${carriersOf("LOOPX_RUN_ID", id).join(", ")}`).toBe(true);
  expect(await waitFor(() => !existsSync(read(cwd, "tmpdir.txt")), ms, 50)).toBe(true);
  if (!fenceDir) return;
  expect(await waitFor(() => readdirSync(tmp).filter((name) => name.startsWith("loopx-sandbox-")).length === 0, ms, 50), readdirSync(tmp).join(" ")).toBe(true);
}

const NODE_CLI = CLIS[0]!;
const BINARY_CLI = CLIS[2]!;

linuxOnly.concurrent.each([
  ["Ctrl-C", "node", 130],
  ["Ctrl-C", "binary", 130],
  ["--timeout", "node", 124],
  ["runs stop --now", "node", 130],
] as const)("%s under --sandbox (%s)", (how, name, code) => {
  const cli: Cli = name === "node" ? NODE_CLI : BINARY_CLI;
  it("ends the fenced script, its setsid child and its daemon; nothing is left", async () => {
    const cwd = makeProject({ ".loopx/w/index.sh": STUBBORN_SCRIPT });
    const { env, tmp } = scratchEnv();
    const started = startLoopx(cli, ["run", "--sandbox", ...(how === "--timeout" ? ["--timeout", "6s"] : []), "w"], { cwd, env, timeoutMs: 60_000 });
    const id = await waitForLine(join(cwd, "run.id"), 30_000);
    expect(carriersOf("LOOPX_RUN_ID", id).length).toBeGreaterThanOrEqual(3);
    if (how === "Ctrl-C") started.child.kill("SIGINT");
    if (how === "runs stop --now") expect((await runCli(cli, ["runs", "stop", "--now", id], { cwd, env })).code).toBe(0);
    const result = await started.result;
    expect(result.code, result.stderr).toBe(code);
    await expectNothingLeft(cwd, tmp);
  });
});

linuxOnly("kill -9 of loopx under --sandbox, then runs resume", () => {
  it.concurrent("the guardian ends the fenced processes; the resumed run is fenced too and leaves nothing", async () => {
    const cwd = makeProject({
      ".loopx/w/index.sh": sh(`cd "$LOOPX_PROJECT_ROOT"
if [ ! -e first-sitting ]; then
  : > first-sitting
  ${STUBBORN_SCRIPT.replace("#!/bin/bash\n", "").replace('cd "$LOOPX_PROJECT_ROOT"\n', "")}
fi
/usr/bin/touch "$HOME/after-resume" 2>/dev/null && echo escaped > escaped.txt
echo "$LOOPX_TMPDIR" > tmpdir.txt
echo '{"stop":true}'`),
    });
    const { env, tmp } = scratchEnv();
    const started = startLoopx(NODE_CLI, ["run", "--sandbox", "w"], { cwd, env, timeoutMs: 60_000 });
    const id = await waitForLine(join(cwd, "run.id"), 30_000);
    started.child.kill("SIGKILL");
    await started.result;
    await expectNothingLeft(cwd, tmp, 10_000, false);
    writeFileSync(join(cwd, "run.id"), id);
    const resumed = await runCli(NODE_CLI, ["runs", "resume", id], { cwd, env, timeoutMs: 60_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(existsSync(join(cwd, "escaped.txt"))).toBe(false);
    expect(existsSync(join(env.HOME!, "after-resume"))).toBe(false);
    const resume = recordEvents(env).find((event) => event.type === "run.resume");
    expect(resume?.sandbox).toMatchObject({ kind: "bwrap", policyDigest: expect.stringMatching(/^[0-9a-f]{16}$/) });
    await sleep(200);
    await expectNothingLeft(cwd, tmp);
  });
});
