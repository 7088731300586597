/**
 * The real Claude Code CLI (@anthropic-ai/claude-code, installed by scripts/agent-clis.mjs), run from a loopx script
 * with loopx's telemetry and Claude Code's own (CLAUDE_CODE_ENABLE_TELEMETRY=1) both on, offline
 * against a local Messages API stand-in: Claude Code ignores an inbound TRACEPARENT, so its data
 * is joined to loopx's trace by the resource attributes loopx gives each script —
 * loopx.run.id and loopx.iteration — which its metrics and events carry to the same receiver.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startReceiver, type Receiver } from "../../fixtures/otlp/receiver.js";
import { realClaudeBin, realClaudeEnv, startMessagesApi, type MessagesApi } from "../../fixtures/agents/messages-api.js";
import { CLIS, isolatedEnv, linuxOnly, makeProject, runCli, sh } from "../../helpers.js";

let receiver: Receiver;
let api: MessagesApi;
beforeAll(async () => {
  receiver = await startReceiver();
  api = await startMessagesApi(() => ({ text: "Hello from the stand-in." }));
});
afterAll(async () => {
  await receiver.close();
  await api.stop();
});

linuxOnly("Claude Code's own telemetry, joined to loopx's run", () => {
  it("its metrics and events carry loopx.run.id and loopx.iteration; loopx's spans arrive at the same receiver", async () => {
    const dir = makeProject({
      ".loopx/agent/index.sh": sh(`claude -p "Say hello." --output-format json > "$LOOPX_PROJECT_ROOT/answer-$LOOPX_ITERATION.json"
[ "$LOOPX_ITERATION" -ge 2 ] && { $LOOPX_BIN output --stop; exit 0; }
$LOOPX_BIN output --result next`),
    });
    const env = isolatedEnv({ LOOPX_OTEL: "1", OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" });
    mkdirSync(join(env.HOME!, ".claude"), { recursive: true });
    Object.assign(env, realClaudeEnv(api, env.HOME!), {
      PATH: `${realClaudeBin()}:${env.PATH}`,
      CLAUDE_CODE_ENABLE_TELEMETRY: "1",
      OTEL_METRICS_EXPORTER: "otlp",
      OTEL_LOGS_EXPORTER: "otlp",
      OTEL_METRIC_EXPORT_INTERVAL: "500",
      OTEL_LOGS_EXPORT_INTERVAL: "500",
    });
    delete env.DISABLE_TELEMETRY;
    const result = await runCli(CLIS[0]!, ["run", "agent"], { cwd: dir, env, timeoutMs: 120_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, "answer-1.json"), "utf8")).result).toContain("Hello from the stand-in.");
    const loopxRun = receiver.spans.find((span) => span.name === "loopx run")!;
    const runId = String(loopxRun.attributes["loopx.run.id"]);
    const claude = [...receiver.points.map((point) => point.resource), ...receiver.logs.map((log) => log.resource)].filter((resource) => resource["service.name"] === "claude-code");
    expect(claude.length).toBeGreaterThan(0);
    const iterations = new Set(claude.filter((resource) => resource["loopx.run.id"] === runId).map((resource) => resource["loopx.iteration"]));
    expect([...iterations].sort()).toEqual(["1", "2"]);
  });
});
