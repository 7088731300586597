/**
 * A fenced run says so: `loopx runs show`, `--json`, `--markdown` and `loopx runs --json` name the
 * fence and its policy digest, the one `loopx sandbox show <target>` prints for the same layers
 * (workflow, project, --sandbox-allow), and a run without --sandbox names none.
 */
import { expect, it } from "vitest";
import { CLIS, linuxOnly, makeProject, runCli, sh } from "../../helpers.js";
import { plantedEnv, recordEvents } from "./support.js";

const NODE_CLI = CLIS[0]!;

linuxOnly("the fence, shown", () => {
  it.concurrent("runs show / --json / --markdown / runs --json and sandbox show agree on the policy digest", async () => {
    const project = makeProject({
      ".loopx/w/index.sh": sh(`echo '{"stop":true}'`),
      ".loopx/w/sandbox.json": JSON.stringify({ network: ["api.example.com:443"], write: ["~/.agent-state"] }),
      ".loopx/sandbox.json": JSON.stringify({ network: ["registry.npmjs.org:443"] }),
    });
    const env = plantedEnv();
    const run = await runCli(NODE_CLI, ["run", "--sandbox", "--sandbox-allow", "127.0.0.1:9", "w"], { cwd: project, env, timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    const digest = recordEvents(env).find((event) => event.type === "run.start")!.sandbox.policyDigest as string;

    const policy = await runCli(NODE_CLI, ["sandbox", "show", "w", "--sandbox-allow", "127.0.0.1:9", "--json"], { cwd: project, env });
    expect(policy.code, policy.stderr).toBe(0);
    const shown = JSON.parse(policy.stdout);
    expect(shown).toMatchObject({ kind: "bwrap", policyDigest: digest, policy: { network: ["127.0.0.1:9", "api.example.com:443", "registry.npmjs.org:443"], write: [`${env.HOME}/.agent-state`] } });
    expect(shown.layers.map((layer: { name: string }) => layer.name)).toEqual(["workflow", "project", "command line"]);
    const text = await runCli(NODE_CLI, ["sandbox", "show", "w"], { cwd: project, env });
    expect(text.stdout).toContain(`${env.HOME}/.ssh`);
    expect(text.stdout).not.toContain(digest); // without the command line's rule: another policy

    const detail = await runCli(NODE_CLI, ["runs", "show", "latest"], { cwd: project, env });
    expect(detail.stdout).toMatch(new RegExp(`^sandbox bwrap \\S+ · policy ${digest}$`, "m"));
    const markdown = await runCli(NODE_CLI, ["runs", "show", "latest", "--markdown"], { cwd: project, env });
    expect(markdown.stdout).toContain(`| **sandbox** | bwrap`);
    expect(markdown.stdout).toContain(digest);
    const json = await runCli(NODE_CLI, ["runs", "--json"], { cwd: project, env });
    expect(JSON.stringify(JSON.parse(json.stdout))).toContain(`"policyDigest":"${digest}"`);

    // Repeatable, as on `loopx run` (it was refused as "given more than once" before).
    const two = await runCli(NODE_CLI, ["sandbox", "show", "w", "--sandbox-allow", "127.0.0.1:9", "--sandbox-allow", "10.0.0.1:22", "--json"], { cwd: project, env });
    expect(two.code, two.stderr).toBe(0);
    expect(JSON.parse(two.stdout).policy.network).toEqual(["10.0.0.1:22", "127.0.0.1:9", "api.example.com:443", "registry.npmjs.org:443"]);

    const plain = await runCli(NODE_CLI, ["run", "w"], { cwd: project, env });
    expect(plain.code).toBe(0);
    const unfenced = await runCli(NODE_CLI, ["runs", "show", "latest"], { cwd: project, env });
    expect(unfenced.stdout).not.toMatch(/^sandbox /m);
  });
});
