/**
 * The shipped workflows from install to a finished run, once per channel: loopx under node and
 * under bun installing dist/workflows.tar.gz over HTTP (`-w ralph`, `-w converge`, and both at
 * once), and the standalone binary — with neither node nor bun on PATH — installing them from a
 * git repository holding the packed tree (`scripts/pack-workflows.mjs --tree`). Each then runs
 * ralph:plan to <promise>COMPLETE</promise> (through a retried crash), converge through a failing gate, a rejecting judge and convergence, and Ctrl-C during
 * an agent call in ralph:build. The full case matrix runs under node in workflows.test.ts; this
 * file covers what differs between runtimes (install, imports, spawning, streaming, signals).
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync, symlinkSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BINARY, ROOT, RUNTIMES, processAlive, runCommand, runLoopx, snapshotTree, taggedSurvivors, tempDir, waitFor, type RunOptions, type RunResult } from "../../helpers.js";
import { FakeAgents, WORKFLOWS, ampStream, claudeStream, lastWorkflowLine, packedWorkflows, sessionLog, workflowEnv } from "../../fixtures/agents/support.js";
import { fileUrl, makeBareRepo, sendTarball, startServer, type TestServer } from "../../fixtures/install/support.js";

const TARBALL = join(ROOT, "dist", "workflows.tar.gz");
const COMPLETE = "<promise>COMPLETE</promise>";

/** A PATH with the shell tools the workflows, the fake agents and git need, but no node and no bun. */
function toolsOnlyPath(): string {
  const dir = tempDir("loopx-tools-");
  for (const tool of ["bash", "sh", "cat", "cp", "basename", "sleep", "mkdir", "rm", "env", "pwd", "ls", "git", "grep", "echo", "test"]) {
    const found = spawnSync("/bin/sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).stdout.trim();
    if (found.startsWith("/")) symlinkSync(found, join(dir, tool));
  }
  return dir;
}

/** Every file of the packed workflow tree, for a git repository holding the workflows at its root. */
function workflowFiles(dir = packedWorkflows()): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) Object.assign(out, workflowFiles(path));
    else out[relative(packedWorkflows(), path)] = readFileSync(path, "utf8");
  }
  return out;
}

interface Channel {
  name: string;
  /** Runs loopx with `args` in `cwd`. */
  loopx: (args: string[], options: RunOptions) => Promise<RunResult>;
  /** PATH after the fake agents (the binary's has neither node nor bun). */
  basePath?: () => string;
  /** The install commands that put ralph and converge into .loopx/. */
  installs: (source: { http: string; git: string }) => string[][];
}

const CHANNELS: Channel[] = [
  {
    name: "node (tarball over HTTP, -w ralph then -w converge)",
    loopx: (args, options) => runLoopx(RUNTIMES[0]!, args, options),
    installs: ({ http }) => [
      ["install", "-w", "ralph", http],
      ["install", "-w", "converge", http],
    ],
  },
  {
    name: "bun (tarball over HTTP, both workflows at once)",
    loopx: (args, options) => runLoopx(RUNTIMES[1]!, args, options),
    installs: ({ http }) => [["install", http]],
  },
  {
    name: "standalone binary, no node or bun on PATH (git repository)",
    loopx: (args, options) => runCommand(BINARY, args, options),
    basePath: toolsOnlyPath,
    installs: ({ git }) => [["install", git]],
  },
];

let server: TestServer;
let sources: { http: string; git: string };

beforeAll(async () => {
  const tarball = readFileSync(TARBALL);
  server = await startServer((_req, res) => sendTarball(res, tarball));
  const bare = makeBareRepo(workflowFiles(), tempDir("loopx-wf-git-"), "workflows.git");
  sources = { http: `${server.origin}/releases/workflows.tar.gz`, git: fileUrl(bare) };
});
afterAll(async () => {
  await server?.stop();
});

describe("the shipped workflows, installed and run", () => {
  it("dist/workflows.tar.gz is a multi-workflow source: workflows/ralph and workflows/converge, no script at its root", () => {
    const list = spawnSync("tar", ["tzf", TARBALL], { encoding: "utf8" }).stdout.trim().split("\n");
    expect(list.filter((p) => /^workflows\/[^/]+$/.test(p))).toEqual([]);
    expect(list).toContain("workflows/ralph/plan.ts");
    expect(list).toContain("workflows/converge/index.ts");
    expect(list).toContain("workflows/ralph/lib/shared/agent.ts");
  });

  it.concurrent.each(CHANNELS)("$name", async (channel) => {
    const project = tempDir("loopx-wf-e2e-");
    expect(spawnSync("git", ["init", "-q"], { cwd: project }).status).toBe(0);
    const basePath = channel.basePath?.();
    const run = (args: string[], env: Record<string, string>, onSpawn?: RunOptions["onSpawn"]) =>
      channel.loopx(args, { cwd: project, env, onSpawn, timeoutMs: 90_000 });

    // Install.
    for (const args of channel.installs(sources)) {
      const installed = await run(args, workflowEnv(new FakeAgents(), {}, basePath));
      expect(installed.code, installed.stderr).toBe(0);
    }
    for (const name of ["ralph", "converge"]) expect(snapshotTree(join(project, ".loopx", name))).toEqual(snapshotTree(join(packedWorkflows(), name)));

    // ralph:plan: a crash (retried), an iteration, then completion.
    const ralphFake = new FakeAgents()
      .step(1, { code: 1, err: "transient failure\n" })
      .step(2, { out: claudeStream("Planned.", { cost: 0.01 }), run: 'echo "- [ ] one" > .ralph/implementation_plan.md' })
      .step(3, { out: claudeStream(`Plan complete.\n${COMPLETE}`, { cost: 0.01 }) });
    const plan = await run(["run", "ralph:plan"], workflowEnv(ralphFake, {}, basePath));
    expect(plan.stdout).toBe("");
    expect(plan.code, plan.stderr).toBe(0);
    expect(ralphFake.calls()).toBe(3);
    expect(plan.stderr).toContain("→ Bash: echo done >> progress.txt\n");
    expect(lastWorkflowLine(plan.stderr)).toMatch(/^ralph: Completion signal detected/);
    const log = sessionLog(join(project, ".ralph"));
    expect(log).toMatch(/^={80}\nITERATION 1\n={80}\nMode: plan\n/);
    expect(log).toMatch(/-{80}\nITERATION 2 COMPLETE\nEnd Time: .*\nDuration: \d+s\nIteration Cost: \$0\.010000 billed\nStatus: complete\nRetries: 0\n={80}\n\n/);
    expect(log).toMatch(/={80}\nSESSION SUMMARY\n={80}\nTotal Iterations: 2\nSuccessful: 2\nFailed: 0\nTotal Duration: \d+s\nTotal Cost: \$0\.020000 billed\nExit Reason: Completion signal detected\nExit Code: 0\n={80}\n$/);

    // converge: the gate fails, the judge (amp, echoing a prompt that holds the tags) rejects, then both pass.
    const judgePrompt = readFileSync(join(WORKFLOWS, "converge", "JUDGE.md"), "utf8");
    const convergeFake = new FakeAgents()
      .step(1, { out: claudeStream("Looked around.") })
      .step(2, { out: claudeStream("Wrote it."), run: "echo ok > done.txt" })
      .step(3, { out: ampStream(judgePrompt, "Needs a test. <verdict>REJECT</verdict>") })
      .step(4, { out: claudeStream("Added a test.") })
      .step(5, { out: ampStream(judgePrompt, "Good. <verdict>APPROVE</verdict>") });
    const convergeEnv = { CONVERGE_TASK: "Write ok into done.txt.", CONVERGE_GATE: "grep -qx ok done.txt", CONVERGE_JUDGE_TYPE: "amp" };
    const converge = await run(["run", "converge"], workflowEnv(convergeFake, convergeEnv, basePath));
    expect(converge.stdout).toBe("");
    expect(converge.code, converge.stderr).toBe(0);
    expect(convergeFake.calls()).toBe(5);
    expect(convergeFake.prompt(4)).toContain("Needs a test.");
    expect(lastWorkflowLine(converge.stderr)).toMatch(/^converge: converged after 3 rounds .*rounds 1: gate failed · 2: judge rejected · 3: approved$/);

    // Ctrl-C while the agent works in ralph:build.
    const busy = new FakeAgents().step(1, { out: claudeStream("Building…").split("\n")[0] + "\n", sleep: 120 });
    const env = workflowEnv(busy, {}, basePath);
    const interrupted = await run(["run", "ralph:build"], env, (child) => {
      void waitFor(() => existsSync(busy.file("1.grandchild")) && existsSync(busy.file("1.started")), 60_000).then(() => child.kill("SIGINT"));
    });
    expect(interrupted.code, interrupted.stderr).toBe(130);
    expect(await waitFor(() => taggedSurvivors(env.HARDENING_TAG!).length === 0, 10_000)).toBe(true);
    expect(processAlive(Number(readFileSync(busy.file("1.grandchild"), "utf8")))).toBe(false);
    const logs = readdirSync(join(project, ".ralph", "logs")).filter((name) => name.endsWith(".log")).map((name) => readFileSync(join(project, ".ralph", "logs", name), "utf8"));
    expect(logs.some((text) => /Mode: build\n[\s\S]*Status: interrupted\n[\s\S]*Exit Reason: Interrupted by SIGINT\nExit Code: 130\n/.test(text))).toBe(true);
  });
});
