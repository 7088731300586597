/**
 * `--sandbox` fails closed: with bubblewrap missing from PATH, with user namespaces refused (loopx
 * under `unshare` with user.max_user_namespaces=0 in its namespace), and with a planted policy that
 * leaves $HOME writable, the run does not start: one line naming what failed and the fix, exit
 * code 4, no script ran, and the record holds run.start and run.end with the refusal only.
 * `--sandbox=off` (and LOOPX_SANDBOX=0) run as without the switch.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLIS, linuxOnly, makeProject, runCli, runCommand, sh, type RunResult } from "../../helpers.js";
import { pathWithoutBwrap, plantedEnv, recordEvents } from "./support.js";

const MARKER_SCRIPT = sh(`/usr/bin/touch "$LOOPX_PROJECT_ROOT/ran.txt"
echo '{"stop":true}'`);

/** Exit 4, nothing on stdout, one `loopx:` line on stderr holding every needle, no stack trace. */
function refusalLine(result: RunResult, ...needles: string[]): void {
  expect(result.code, result.stderr).toBe(4);
  expect(result.stdout).toBe("");
  expect(result.stderr).toMatch(/^loopx: --sandbox: [^\n]*; the run did not start\n$/);
  for (const needle of needles) expect(result.stderr).toContain(needle);
}

function refusedOnly(env: Record<string, string>, pattern: RegExp): void {
  const events = recordEvents(env);
  expect(events.map((event) => event.type)).toEqual(["run.start", "run.end"]);
  expect(events[1]).toMatchObject({ reason: "failed", exitCode: 4, iterations: 0, message: expect.stringMatching(pattern) });
}

linuxOnly("--sandbox fails closed", () => {
  describe.concurrent.each(CLIS)("$name", (cli) => {
    it("bubblewrap missing from PATH: the run does not start (exit 4)", async () => {
      const project = makeProject({ ".loopx/w/index.sh": MARKER_SCRIPT });
      const env = plantedEnv();
      env.PATH = pathWithoutBwrap();
      const result = await runCli(cli, ["run", "--sandbox", "w"], { cwd: project, env });
      refusalLine(result, "bubblewrap (bwrap) is not on PATH", "apt-get install bubblewrap");
      expect(existsSync(join(project, "ran.txt"))).toBe(false);
      refusedOnly(env, /bwrap\) is not on PATH/);
    });

    it("a planted policy leaving $HOME writable: the run does not start (exit 4)", async () => {
      const project = makeProject({ ".loopx/w/index.sh": MARKER_SCRIPT, ".loopx/sandbox.json": JSON.stringify({ write: ["~/.."] }) });
      const env = plantedEnv();
      const result = await runCli(cli, ["run", "--sandbox", "w"], { cwd: project, env });
      refusalLine(result, "which holds your home directory", "the run did not start");
      expect(existsSync(join(project, "ran.txt"))).toBe(false);
      refusedOnly(env, /holds your home directory/);
    });

    it("user namespaces refused: the run does not start (exit 4)", async () => {
      const project = makeProject({ ".loopx/w/index.sh": MARKER_SCRIPT });
      const env = plantedEnv();
      const loopx = [cli.exe, ...cli.prefix, "run", "--sandbox", "w"].map((word) => `'${word}'`).join(" ");
      const result = await runCommand("unshare", ["--user", "--map-root-user", "sh", "-c", `echo 0 > /proc/sys/user/max_user_namespaces && exec ${loopx}`], { cwd: project, env });
      refusalLine(result, "bubblewrap cannot set up the fence here", "user namespaces");
      expect(existsSync(join(project, "ran.txt"))).toBe(false);
      refusedOnly(env, /cannot set up the fence/);
    });

    it("--sandbox=off and LOOPX_SANDBOX=0 run as without the switch, LOOPX_SANDBOX=1 fences", async () => {
      const project = makeProject({ ".loopx/w/index.sh": sh(`/usr/bin/touch "$HOME/unfenced"\necho '{"stop":true}'`) });
      const env = plantedEnv();
      env.PATH = pathWithoutBwrap();
      for (const [args, extra] of [[["run", "--sandbox=off", "w"], {}], [["run", "w"], { LOOPX_SANDBOX: "0" }]] as const) {
        const result = await runCli(cli, [...args], { cwd: project, env: { ...env, ...extra } });
        expect(result.code, result.stderr).toBe(0);
      }
      expect(existsSync(join(env.HOME!, "unfenced"))).toBe(true);
      expect(recordEvents(env).filter((event) => event.type === "run.start" && event.sandbox !== undefined)).toEqual([]);
      const fenced = await runCli(cli, ["run", "w"], { cwd: project, env: { ...env, LOOPX_SANDBOX: "1" } });
      expect(fenced.code).toBe(4);
    });
  });
});
