/**
 * Before any work, ralph says in one line why an agent CLI cannot run: missing on PATH (naming the
 * npm package that installs it) or without credentials (naming the fix; Ralph exit code 6). No
 * agent call is made either way.
 */
import { describe, expect, it } from "vitest";
import { RUNTIMES, runLoopx } from "../../helpers.js";
import { cliAlone } from "../../fixtures/local-server.js";
import { FakeAgents, workflowEnv, workflowProject } from "../../fixtures/agents/support.js";

const ralphLines = (stderr: string): string[] => stderr.split("\n").filter((l) => l.startsWith("ralph:"));

describe.concurrent("ralph's preflight for the new presets", () => {
  it("a CLI missing on PATH: one line naming its npm package", async () => {
    const project = workflowProject(["ralph"]);
    const result = await runLoopx(RUNTIMES[0]!, ["run", "ralph:plan"], { cwd: project, env: workflowEnv(new FakeAgents(), { AGENT_TYPE: "opencode" }) });
    expect(result.code, result.stderr).toBe(1);
    expect(ralphLines(result.stderr)).toEqual(["ralph: agent CLI not found on PATH: opencode (AGENT_TYPE=opencode; install it: npm i -g opencode-ai, or set AGENT_CLI to another command)"]);
  });

  it("gemini without any credentials: one line naming the fix, exit code 6, before any call", async () => {
    const project = workflowProject(["ralph"]);
    const env = workflowEnv(new FakeAgents(), { AGENT_TYPE: "gemini" });
    const result = await runLoopx(RUNTIMES[0]!, ["run", "ralph:plan"], { cwd: project, env: { ...env, PATH: `${cliAlone("gemini")}:${env.PATH}` } });
    expect(result.code, result.stderr).toBe(1);
    expect(ralphLines(result.stderr)).toEqual([
      "ralph: gemini has no credentials (no GEMINI_API_KEY, no Google sign-in in ~/.gemini): set GEMINI_API_KEY (or run `gemini` once and sign in with Google) (exit code 6)",
    ]);
  });

  it("AGENT_PREFLIGHT=<command> failing: its last line and the preset's fix", async () => {
    const project = workflowProject(["ralph"]);
    const env = workflowEnv(new FakeAgents(), { AGENT_TYPE: "copilot", AGENT_PREFLIGHT: "echo 'token expired' >&2; exit 3" });
    const result = await runLoopx(RUNTIMES[0]!, ["run", "ralph:plan"], { cwd: project, env: { ...env, PATH: `${cliAlone("copilot")}:${env.PATH}` } });
    expect(result.code, result.stderr).toBe(1);
    expect(ralphLines(result.stderr)).toEqual([
      "ralph: AGENT_PREFLIGHT failed (echo 'token expired' >&2; exit 3: exit 3: token expired): run `copilot` once and /login, or set GH_TOKEN / COPILOT_GITHUB_TOKEN (or COPILOT_PROVIDER_API_KEY for your own provider) (exit code 6)",
    ]);
  });
});
