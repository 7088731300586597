/**
 * The real Claude Code CLI inside `loopx run --sandbox`, offline against its local Messages API
 * stand-in (the port allowed on the command line, as a user allows a local proxy): ralph:plan runs
 * to completion under ralph's own policy (its ~/.claude stays writable: the session is written
 * back), the agent's own tool call commits in the project, and the tool calls the stand-in scripts
 * to escape — `rm -rf ~/important`, a connection to a port the policy does not name, a request
 * through the proxy to a host it does not name — are refused: the files are intact, the refusal
 * reached the agent, the proxy's refusal is a record event.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RUNTIMES, runLoopx } from "../../helpers.js";
import { FakeAgents, workflowEnv, workflowProject } from "../../fixtures/agents/support.js";
import { realClaudeBin, realClaudeEnv, startMessagesApi } from "../../fixtures/agents/messages-api.js";
import { recordEvents, standIn } from "./support.js";

const COMPLETE = "<promise>COMPLETE</promise>";

describe("the real Claude Code inside --sandbox", () => {
  it.runIf(process.platform === "linux")("ralph:plan completes with a commit; rm -rf ~/important and the connections out are refused", async (context) => {
    const denied = await standIn();
    context.onTestFinished(() => denied.close());
    const commands = [
      "rm -rf ~/important; ls ~/important/keep.txt",
      `exec 3<>/dev/tcp/127.0.0.1/${denied.port} && echo LINK-$((1+1)) || echo NOLINK-$((2+2))`,
      "curl -s -o /dev/null -w 'proxy %{http_connect}' https://elsewhere.example/",
      "mkdir -p .ralph && printf -- '- [ ] say hello\\n' > .ralph/implementation_plan.md && git add .ralph/implementation_plan.md && git commit -qm 'plan: say hello' && echo COMMITTED",
    ];
    const api = await startMessagesApi((n) => (n <= commands.length ? { tool: { command: commands[n - 1]! } } : { text: `The plan is ready.\n${COMPLETE}` }));
    context.onTestFinished(() => api.stop());
    const project = workflowProject(["ralph"]);
    const env = workflowEnv(new FakeAgents());
    Object.assign(env, realClaudeEnv(api, env.HOME!), { PATH: `${realClaudeBin()}:${env.PATH}`, GIT_AUTHOR_NAME: "C", GIT_AUTHOR_EMAIL: "c@example.com", GIT_COMMITTER_NAME: "C", GIT_COMMITTER_EMAIL: "c@example.com" });
    mkdirSync(join(env.HOME!, ".claude"), { recursive: true });
    mkdirSync(join(env.HOME!, "important"));
    writeFileSync(join(env.HOME!, "important", "keep.txt"), "keep me");
    const port = new URL(api.origin).port;
    const result = await runLoopx(RUNTIMES[0]!, ["run", "--sandbox", "--sandbox-allow", `127.0.0.1:${port}`, "ralph:plan"], { cwd: project, env, timeoutMs: 120_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(join(env.HOME!, "important", "keep.txt"))).toBe(true);
    // What the tools gave back to the model (the commands' outputs, not their text).
    const outputs = api.requests.map((request) => JSON.stringify(request.body)).join("\n");
    expect(outputs).toContain("NOLINK-4");
    expect(outputs).not.toContain("LINK-2");
    expect(outputs).toContain("proxy 403");
    expect(outputs).toContain("COMMITTED");
    expect(spawnSync("git", ["log", "--format=%s"], { cwd: project, encoding: "utf8" }).stdout).toContain("plan: say hello");
    // Claude's own state, in ~/.claude (ralph's policy keeps it writable), was written.
    expect(readdirSync(join(env.HOME!, ".claude")).length).toBeGreaterThan(0);
    const events = recordEvents(env);
    expect(events.find((event) => event.type === "run.start")?.sandbox).toMatchObject({ kind: "bwrap" });
    expect(events.filter((event) => event.type === "sandbox.denied").map((event) => event.target)).toEqual(["elsewhere.example:443"]);
  }, 150_000);
});
