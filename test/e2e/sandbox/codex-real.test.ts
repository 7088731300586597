/**
 * The real OpenAI Codex CLI inside `loopx run --sandbox`, offline against its local Responses API
 * stand-in (its port allowed on the command line, as a user allows a local proxy): converge runs
 * with codex as worker and judge, under converge's own policy (~/.codex writable), the presets
 * unchanged — the worker bypasses codex's sandbox, the judge's `--sandbox read-only` nests codex's
 * own bubblewrap inside loopx's fence. The worker's scripted tool calls try to escape first:
 * - `rm -rf ~/important`: codex's own exec policy rejects it before it runs ("rm -f style
 *   commands"), so the fence is tried with `rm -r ~/important` and a write to ~, which codex runs;
 * - a connection to a port of 127.0.0.1 the policy does not name, directly (refused, silently)
 *   and through the fence's proxy (a 403 and a `sandbox.denied` record event); the server on that
 *   port sees no connection;
 * then writes the answer the gate (`npm test`) checks; the judge's write fails, and it approves.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RUNTIMES, runLoopx } from "../../helpers.js";
import { FakeAgents, lastWorkflowLine, workflowEnv, workflowProject } from "../../fixtures/agents/support.js";
import { realCodexBin, realCodexEnv, startResponsesApi, type Reply } from "../../fixtures/agents/responses-api.js";
import { recordEvents } from "./support.js";

/** A TCP server on 127.0.0.1 that counts the connections it is given (the test wants none). */
function watchedPort(): Promise<{ port: number; connections: () => number; close(): void }> {
  let seen = 0;
  const server = createServer((socket) => {
    seen++;
    socket.on("error", () => {});
    socket.end("pong");
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve({ port: (server.address() as { port: number }).port, connections: () => seen, close: () => server.close() }));
  });
}

/** What codex's tool sent back to the model: the function_call_output items of a request, in order. */
const toolOutputs = (body: Record<string, any>): string[] => (body.input ?? []).filter((i: any) => i?.type === "function_call_output").map((i: any) => String(i.output));

describe("the real Codex CLI inside --sandbox", () => {
  it.runIf(process.platform === "linux")("converge with codex as worker and judge converges; rm -rf ~/important and a connection to a port not allowed are refused", async (context) => {
    const denied = await watchedPort();
    context.onTestFinished(() => denied.close());
    const worker = [
      "rm -rf ~/important; ls ~/important/keep.txt",
      "rm -r ~/important; ls ~/important/keep.txt; touch ~/escaped && echo ESCAPED",
      `exec 3<>/dev/tcp/127.0.0.1/${denied.port} && echo LINK-$((1+1)) || echo NOLINK-$((2+2))`,
      `curl -s -o /dev/null -w 'proxy %{http_code}' --proxy "$HTTP_PROXY" --noproxy '' http://127.0.0.1:${denied.port}/`,
      "echo 42 > answer.txt && echo WROTE-$((40+2))",
    ];
    // One worker call (its tool calls, then its answer), then one judge call (a read, a write, the verdict).
    const script: Reply[] = [
      ...worker.map((exec) => ({ exec })),
      { text: "Wrote the answer." },
      { exec: "cat answer.txt; echo judged > judge-was-here.txt" },
      { text: "The answer is right.\n<verdict>APPROVE</verdict>" },
    ];
    const api = await startResponsesApi((n) => script[n - 1] ?? { text: "unexpected call" });
    context.onTestFinished(() => api.stop());
    const project = workflowProject(["converge"], {
      "package.json": JSON.stringify({ name: "answer", private: true, scripts: { test: "node check.js" } }),
      "check.js": "const got = require('fs').readFileSync('answer.txt', 'utf8').trim(); if (got !== '42') { console.error('answer.txt: expected 42, got ' + got); process.exit(1); }\n",
    });
    const env = workflowEnv(new FakeAgents());
    Object.assign(env, realCodexEnv(api, env.HOME!), {
      PATH: `${realCodexBin()}:${env.PATH}`,
      CONVERGE_WORKER_TYPE: "codex",
      CONVERGE_JUDGE_TYPE: "codex",
      CONVERGE_TASK: "Write the answer, 42, into answer.txt.",
      CONVERGE_GATE: "npm test",
      CONVERGE_MAX_ROUNDS: "2",
    });
    mkdirSync(join(env.HOME!, "important"));
    writeFileSync(join(env.HOME!, "important", "keep.txt"), "keep me");
    const port = new URL(api.origin).port;
    const result = await runLoopx(RUNTIMES[0]!, ["run", "--sandbox", "--sandbox-allow", `127.0.0.1:${port}`, "converge"], { cwd: project, env, timeoutMs: 150_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain("converge: round 1: worker (codex: codex exec --json --dangerously-bypass-approvals-and-sandbox -)");
    expect(result.stderr).toContain("converge: round 1: judge (codex: codex exec --json --sandbox read-only -, fresh context)");
    expect(lastWorkflowLine(result.stderr)).toMatch(/^converge: converged after 1 round \(\d+s\): gate `npm test` passed and the judge approved; rounds 1: approved$/);
    expect(readFileSync(join(project, "answer.txt"), "utf8")).toBe("42\n");
    expect(api.requests).toHaveLength(script.length);

    // The worker's tool calls, as codex gave their outputs back (its last request carries them all).
    const outputs = toolOutputs(api.requests[worker.length]!.body);
    expect(outputs).toHaveLength(worker.length);
    expect(outputs[0]).toContain("rm -f style commands are not permitted"); // codex's own exec policy
    expect(outputs[1]).toContain("ls: cannot access"); // ~ inside the fence is empty: nothing of ~/important to remove
    expect(outputs[1]).toContain("Read-only file system"); // and it cannot be written
    expect(outputs[1]).not.toContain("ESCAPED");
    expect(outputs[2]).toContain("NOLINK-4");
    expect(outputs[2]).not.toContain("LINK-2");
    expect(outputs[3]).toContain("proxy 403");
    expect(outputs[4]).toContain("WROTE-42");
    expect(readFileSync(join(env.HOME!, "important", "keep.txt"), "utf8")).toBe("keep me");
    expect(existsSync(join(env.HOME!, "escaped"))).toBe(false);
    expect(denied.connections()).toBe(0);

    // The judge's write failed in codex's own read-only sandbox, nested in the fence.
    expect(toolOutputs(api.requests[script.length - 1]!.body).join("\n")).toContain("judge-was-here.txt: Read-only file system");
    expect(existsSync(join(project, "judge-was-here.txt"))).toBe(false);

    const events = recordEvents(env);
    expect(events.find((event) => event.type === "run.start")?.sandbox).toMatchObject({ kind: "bwrap" });
    // Only the proxy's refusal is recorded (a direct connection the fence refuses is refused silently).
    const refusals = events.filter((event) => event.type === "sandbox.denied" && event.target.startsWith("127.0.0.1:"));
    expect(refusals).toEqual([expect.objectContaining({ kind: "connect", target: `127.0.0.1:${denied.port}`, script: "converge:index" })]);
    expect(result.stderr).toContain(`loopx: warning: the sandbox refused a connection to 127.0.0.1:${denied.port} (converge:index): not in the policy`);
  }, 180_000);
});
