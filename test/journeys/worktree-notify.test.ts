/**
 * Journey: a notification from a --worktree run. A user with the standalone binary on PATH copies
 * the README's ntfy recipe next to the project (untracked, as a copied file is), puts its settings
 * in loopx's env file, and runs `loopx run --worktree --on-end 'sh on-end/ntfy.sh' ralph`. The hook
 * runs where the user started loopx (the worktree has no untracked `on-end/`), its push arrives at
 * a stand-in ntfy server on 127.0.0.1, and `loopx runs show` (text, --json, the dashboard) tells
 * the hook's outcome. When the push fails, the warning line quotes the hook's last stderr line.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, symlinkSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BINARY, isolatedEnv, makeProject, ROOT, runCommand, sh, tempDir } from "../helpers.js";
import { listenOnLoopback } from "../fixtures/local-server.js";
import { serve } from "../dashboard-helpers.js";

interface Push {
  url: string;
  title: string | undefined;
  body: string;
}

const pushes: Push[] = [];
/** A stand-in ntfy server: a push to any topic is taken, but to `.../down` it answers 500. */
const ntfy = createServer((req, res) => {
  let body = "";
  req.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
  req.on("end", () => {
    pushes.push({ url: req.url!, title: req.headers.title as string | undefined, body });
    res.writeHead(req.url!.endsWith("/down") ? 500 : 200).end();
  });
});
let origin = "";
let stopServer: () => Promise<void> = async () => undefined;
beforeAll(async () => {
  ({ origin, stop: stopServer } = await listenOnLoopback(ntfy));
});
afterAll(() => stopServer());

/** The user's machine: `loopx` (the standalone binary) on PATH, their own HOME. */
function userMachine(): Record<string, string> {
  const bin = tempDir("loopx-user-bin-");
  symlinkSync(BINARY, join(bin, "loopx"));
  const env = isolatedEnv();
  env.PATH = `${bin}:${env.PATH}`;
  return env;
}

/** A git repository with one commit; `.loopx/` and `on-end/ntfy.sh` (the README's recipe, copied) untracked. */
function userRepo(): string {
  const root = makeProject({ README: "readme\n", ".loopx/ralph/index.sh": sh("echo '{\"stop\":true}'") });
  const git = (...args: string[]) => {
    const result = spawnSync("git", ["-C", root, "-c", "user.name=u", "-c", "user.email=u@example.com", ...args], { encoding: "utf8" });
    if (result.status !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr}`);
  };
  git("init", "-q", "-b", "main");
  git("add", "README");
  git("commit", "-q", "-m", "init");
  mkdirSync(join(root, "on-end"));
  copyFileSync(join(ROOT, "examples", "on-end", "ntfy.sh"), join(root, "on-end", "ntfy.sh"));
  return root;
}

const loopx = (args: string[], cwd: string, env: Record<string, string>) => runCommand("loopx", args, { cwd, env, timeoutMs: 60_000 });

describe("journey: a notification from a --worktree run (the binary)", () => {
  it("the hook's push arrives; runs show, --json and the dashboard tell its outcome; a failed push is one line quoting its last stderr line", { timeout: 120_000 }, async () => {
    const env = userMachine();
    const cwd = userRepo();
    const topic = `loopx-journey-${Date.now().toString(36)}`;
    expect((await loopx(["env", "set", "NTFY_URL", origin], cwd, env)).code).toBe(0);
    expect((await loopx(["env", "set", "NTFY_TOPIC", topic], cwd, env)).code).toBe(0);

    const run = await loopx(["run", "--worktree", "--on-end", "sh on-end/ntfy.sh", "ralph"], cwd, env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toContain("warning");
    const push = pushes.find((p) => p.url === `/${topic}`);
    expect(push?.title).toBe("loopx: ralph:index stopped");
    const id = /run ([0-9a-z]{15})$/.exec(push!.body)?.[1];
    expect(push!.body).toBe(`stopped by ralph:index · 1 iterations · run ${id}`);

    const shown = await loopx(["runs", "show", id!], cwd, env);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/\non-end hook \(run by loopx\) · exit 0 · \d+(ms|\.\ds)\n$/);
    const json = (await loopx(["runs", "show", id!, "--json"], cwd, env)).stdout.trim().split("\n").map((line) => JSON.parse(line));
    expect(json.find((event) => event.type === "run.hook")).toMatchObject({ hook: "on-end", by: "loopx", exitCode: 0, signal: null, timedOut: false, output: "" });

    // The push fails (the server answers 500): one warning line ending with curl's own words.
    expect((await loopx(["env", "set", "NTFY_TOPIC", "down"], cwd, env)).code).toBe(0);
    const failed = await loopx(["run", "--worktree", "--on-end", "sh on-end/ntfy.sh", "ralph"], cwd, env);
    expect(failed.code, failed.stderr).toBe(0);
    expect(failed.stderr).toMatch(/^loopx: warning: the --on-end command exited with code 22: curl: \(22\) .*500.*$/m);
    expect(pushes.some((p) => p.url === "/down")).toBe(true);
    const failedId = JSON.parse((await loopx(["runs", "--json"], cwd, env)).stdout.trim().split("\n")[0]!).id as string;
    const failedShown = await loopx(["runs", "show", failedId], cwd, env);
    expect(failedShown.stdout).toMatch(/\non-end hook \(run by loopx\) · exited with code 22 · [^\n]+\n {2}output │ curl: \(22\) [^\n]*500[^\n]*\n$/);

    // The dashboard's run shows the same outcome.
    const served = await serve({ name: "binary", argv: ["loopx"] }, env);
    try {
      const answer = await fetch(`${served.base}/api/runs/${failedId}?token=${served.token}`);
      const summary = (await answer.json()) as { hook?: { by: string; ended: string; output: string[] } };
      expect(summary.hook).toMatchObject({ by: "loopx", ended: "exited with code 22", output: [expect.stringMatching(/^curl: \(22\) .*500/)] });
    } finally {
      await served.stop();
    }
  });

  it("a hook's output is shown escaped in runs show and its failure line (untrusted text)", { timeout: 60_000 }, async () => {
    const env = userMachine();
    const cwd = makeProject({ ".loopx/ralph/index.sh": sh("echo '{\"stop\":true}'") });
    const run = await loopx(["run", "--on-end", "printf 'one\\n\\033[2Jtwo\\n' >&2; exit 4", "ralph"], cwd, env);
    expect(run.stderr).toContain("loopx: warning: the --on-end command exited with code 4: \\e[2Jtwo\n");
    const shown = await loopx(["runs", "show"], cwd, env);
    expect(shown.stdout).toMatch(/on-end hook \(run by loopx\) · exited with code 4 · [^\n]+\n {2}output │ one\n {2}output │ \\e\[2Jtwo\n$/);
    expect(shown.stdout).not.toContain("\x1b");
  });
});
