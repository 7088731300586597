/**
 * OpenTelemetry (loopx's own addition): what runs send to an OTLP/HTTP receiver on 127.0.0.1 that
 * decodes with the official opentelemetry-proto definitions (test/fixtures/otlp/receiver.ts), over
 * http/protobuf and http/json, on node, bun and the binary; and what they never send or pass on.
 */
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startReceiver, type Receiver, type ReceivedSpan } from "../../fixtures/otlp/receiver.js";
import { CLIS, consumer, isolatedEnv, makeProject, runCli, runConsumer, RUNTIMES, sh, sleep, startLoopx, waitFor, type Cli } from "../../helpers.js";

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

const [NODE_CLI] = CLIS;

/** Each script appends `n TRACEPARENT OTEL_RESOURCE_ATTRIBUTES headers?` to seen.txt. */
const SEEN = `echo "$LOOPX_ITERATION $TRACEPARENT $OTEL_RESOURCE_ATTRIBUTES \${OTEL_EXPORTER_OTLP_HEADERS:-none}" >> "$LOOPX_PROJECT_ROOT/seen.txt"`;

/** index → goto check → (check stops at its second visit) — three iterations, a goto and a stop. */
function gotoProject(): string {
  return makeProject({
    ".loopx/w/index.sh": sh(`${SEEN}\n$LOOPX_BIN output --goto check --result "to check"`),
    ".loopx/w/check.sh": sh(`${SEEN}\nif [ "$LOOPX_ITERATION" -ge 4 ]; then $LOOPX_BIN output --stop; else $LOOPX_BIN output --result secret-result; fi`),
  });
}

function otelEnv(extra: Record<string, string> = {}): Record<string, string> {
  return isolatedEnv({ LOOPX_OTEL: "1", OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_METRIC_EXPORT_INTERVAL: "600000", ...extra });
}

/** The spans of run `id` that have arrived (after loopx exited, its flush is done). */
const spansOf = (id: string) => receiver.spans.filter((span) => span.attributes["loopx.run.id"] === id);
const runIdOf = (stderrOrDir: string) => readFileSync(join(stderrOrDir, "seen.txt"), "utf8").match(/loopx\.run\.id=([0-9a-z]+)/)![1]!;

function seen(dir: string): Array<{ n: number; traceparent: string; attributes: string; headers: string }> {
  return readFileSync(join(dir, "seen.txt"), "utf8")
    .trim()
    .split("\n")
    .map((line) => {
      const [n, traceparent, attributes, headers] = line.split(" ");
      return { n: Number(n), traceparent: traceparent!, attributes: attributes!, headers: headers! };
    });
}

const traceparentOf = (span: ReceivedSpan) => `00-${span.traceId}-${span.spanId}-01`;

describe.each(CLIS)("telemetry on ($name)", (cli: Cli) => {
  it("one trace per run: the run span, one iteration span per script, TRACEPARENT = the iteration's span; metrics", async () => {
    const dir = gotoProject();
    const result = await runCli(cli, ["run", "-n", "10", "w"], { cwd: dir, env: otelEnv() });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe("");
    const id = runIdOf(dir);
    const spans = spansOf(id);
    const root = spans.find((span) => span.name === "loopx run")!;
    expect(root.parentSpanId).toBe("");
    expect(root.attributes).toMatchObject({ "loopx.run.id": id, "loopx.workflow": "w", "loopx.target": "w:index", "loopx.run.state": "stopped", "loopx.iterations": 4, "loopx.exit_code": 0 });
    expect(root.status.code).toBe(1); // OK
    expect(root.resource["service.name"]).toBe("loopx");
    const iterations = spans.filter((span) => span.name.startsWith("loopx iteration")).sort((a, b) => Number(a.attributes["loopx.iteration"]) - Number(b.attributes["loopx.iteration"]));
    expect(iterations.map((span) => span.attributes["loopx.target"])).toEqual(["w:index", "w:check", "w:index", "w:check"]);
    for (const span of iterations) {
      expect(span.traceId).toBe(root.traceId);
      expect(span.parentSpanId).toBe(root.spanId);
    }
    expect(iterations[0]!.attributes).toMatchObject({ "loopx.goto": "check", "process.exit.code": 0, "loopx.result.length": 8 });
    expect(iterations[3]!.attributes).toMatchObject({ "loopx.stop": true });
    // The result itself is never exported unless asked for.
    expect(JSON.stringify(spans)).not.toContain("secret-result");
    expect(JSON.stringify(spans)).not.toContain("to check");
    // Each script saw its own iteration's span, and the run id and iteration as resource attributes.
    expect(seen(dir).map((line) => line.traceparent)).toEqual(iterations.map(traceparentOf));
    expect(seen(dir).map((line) => line.attributes)).toEqual([1, 2, 3, 4].map((n) => `loopx.run.id=${id},loopx.iteration=${n}`));
    // Metrics, flushed at the end: 4 iterations, a duration histogram of 4, no run active.
    const points = receiver.points.filter((point) => point.attributes["loopx.run.id"] === id || point.attributes["loopx.workflow"] === "w");
    const sum = (metric: string) => points.filter((point) => point.metric === metric && point.resource["service.name"] === "loopx").reduce((total, point) => total + point.value, 0);
    expect(await waitFor(() => sum("loopx.iterations") >= 4, 5000)).toBe(true);
    expect(receiver.points.find((point) => point.metric === "loopx.script.duration")).toMatchObject({ kind: "histogram", unit: "s" });
  });
});

describe("telemetry: endings, context, configuration", () => {
  it("an inbound TRACEPARENT is the run's parent (http/json); OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES name the service", async () => {
    const dir = gotoProject();
    const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const result = await runCli(NODE_CLI!, ["run", "-n", "2", "w"], {
      cwd: dir,
      env: otelEnv({ TRACEPARENT: parent, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_SERVICE_NAME: "nightly-loops", OTEL_RESOURCE_ATTRIBUTES: "team=infra,deployment.environment=ci" }),
    });
    expect(result.code, result.stderr).toBe(0);
    const id = runIdOf(dir);
    const root = spansOf(id).find((span) => span.name === "loopx run")!;
    expect(root.traceId).toBe("0af7651916cd43dd8448eb211c80319c");
    expect(root.parentSpanId).toBe("b7ad6b7169203331");
    expect(root.resource).toMatchObject({ "service.name": "nightly-loops", team: "infra", "deployment.environment": "ci" });
    expect(root.attributes["loopx.run.state"]).toBe("limit");
    expect(receiver.requests.some((request) => request.contentType.includes("json"))).toBe(true);
    // Scripts get the inherited resource attributes, then the run's.
    expect(seen(dir)[0]!.attributes).toBe(`team=infra,deployment.environment=ci,loopx.run.id=${id},loopx.iteration=1`);
  });

  it("a failed script and a time limit end the run span with status ERROR and the reason", async () => {
    const failing = makeProject({ ".loopx/w/index.sh": sh(`${SEEN}\nexit 3`) });
    const failed = await runCli(NODE_CLI!, ["run", "w"], { cwd: failing, env: otelEnv() });
    expect(failed.code).toBe(1);
    const failedSpans = spansOf(runIdOf(failing));
    const root = failedSpans.find((span) => span.name === "loopx run")!;
    expect(root.status.code).toBe(2);
    expect(root.attributes).toMatchObject({ "loopx.run.state": "failed", "loopx.exit_code": 1 });
    expect(failedSpans.find((span) => span.name !== "loopx run")!).toMatchObject({ status: { code: 2 }, attributes: { "process.exit.code": 3 } });

    const slow = makeProject({ ".loopx/w/index.sh": sh(`${SEEN}\nsleep 30`) });
    const slowEnv = otelEnv();
    const timed = await runCli(NODE_CLI!, ["run", "--max-time", "1s", "w"], { cwd: slow, env: slowEnv });
    expect(timed.code).not.toBe(0);
    // The run's id from its record: on a loaded box the limit may end the script before it wrote seen.txt.
    const [record] = readdirSync(join(slowEnv.XDG_STATE_HOME!, "loopx", "runs")).filter((name) => name.endsWith(".jsonl"));
    const timedRoot = spansOf(record!.slice(0, -".jsonl".length)).find((span) => span.name === "loopx run")!;
    expect(timedRoot.attributes["loopx.run.state"]).toBe("timed-out");
    expect(timedRoot.status).toMatchObject({ code: 2 });
  });

  it("Ctrl-C mid-iteration: the run span says interrupted, and it is exported before loopx exits", async () => {
    const dir = makeProject({ ".loopx/w/index.sh": sh(`${SEEN}\n: > "$LOOPX_PROJECT_ROOT/started"; sleep 30`) });
    const started = startLoopx(NODE_CLI!, ["run", "w"], { cwd: dir, env: otelEnv() });
    await waitFor(() => existsSync(join(dir, "started")), 20_000);
    started.child.kill("SIGINT");
    const result = await started.result;
    expect(result.code).toBe(130);
    const root = spansOf(runIdOf(dir)).find((span) => span.name === "loopx run")!;
    expect(root.attributes["loopx.run.state"]).toBe("interrupted");
    expect(root.status.code).toBe(2);
  });

  it("a resumed run (after kill -9 of loopx) is a new run span that links to the first sitting's trace", async () => {
    const dir = makeProject({ ".loopx/w/index.sh": sh(`${SEEN}\nif [ "$LOOPX_ITERATION" -ge 3 ]; then $LOOPX_BIN output --stop; exit 0; fi\nif [ ! -e "$LOOPX_PROJECT_ROOT/resumed" ] && [ "$LOOPX_ITERATION" = 2 ]; then touch "$LOOPX_PROJECT_ROOT/killme"; sleep 30; fi\necho ok`) });
    const env = otelEnv();
    const first = startLoopx(NODE_CLI!, ["run", "w"], { cwd: dir, env });
    await waitFor(() => existsSync(join(dir, "killme")), 20_000);
    await sleep(1500); // the first iteration's span is exported (batched each second)
    first.child.kill("SIGKILL");
    await first.result;
    const id = runIdOf(dir);
    // The guardian closes the run; then it can be resumed.
    expect(await waitFor(() => readFileSync(join(env.XDG_STATE_HOME!, "loopx", "runs", `${id}.jsonl`), "utf8").includes('"run.end"'), 15_000)).toBe(true);
    writeFileSync(join(dir, "resumed"), "");
    const resumed = await runCli(NODE_CLI!, ["runs", "resume", id], { cwd: dir, env });
    expect(resumed.code, resumed.stderr).toBe(0);
    const spans = spansOf(id);
    const firstIteration = spans.find((span) => span.attributes["loopx.iteration"] === 1)!;
    const roots = spans.filter((span) => span.name === "loopx run");
    expect(roots).toHaveLength(1); // the first sitting's run span died with loopx
    expect(roots[0]!.attributes).toMatchObject({ "loopx.resume": true, "loopx.run.state": "stopped" });
    expect(roots[0]!.links).toEqual([expect.objectContaining({ traceId: firstIteration.traceId, spanId: firstIteration.parentSpanId })]);
  });

  it("receipts: span events on their iteration, cost and tokens metrics by model and kind; a budget stop ends the run span", async () => {
    const dir = makeProject({
      ".loopx/w/index.sh": sh(`${SEEN}
$LOOPX_BIN receipt --cost 0.25 --kind billed --input 1000 --output 200 --model claude-sonnet-4-5 --provider anthropic
$LOOPX_BIN receipt --json '{"cost":{"usd":0.5,"kind":"estimate"},"tokens":{"input":10,"cacheRead":90},"model":"claude-opus-4-1","provider":"anthropic","failure":"server"}'
$LOOPX_BIN output --result spent`),
    });
    const result = await runCli(NODE_CLI!, ["run", "--max-cost", "0.5", "w"], { cwd: dir, env: otelEnv() });
    expect(result.code).toBe(3);
    const id = runIdOf(dir);
    const spans = spansOf(id);
    const root = spans.find((span) => span.name === "loopx run")!;
    expect(root.attributes).toMatchObject({ "loopx.run.state": "budget", "loopx.iterations": 2, "loopx.exit_code": 3 });
    expect(root.status).toMatchObject({ code: 2, message: expect.stringMatching(/0\.5/) });
    const first = spans.find((span) => span.attributes["loopx.iteration"] === 1)!;
    expect(first.events.map((event) => event.attributes)).toEqual([
      expect.objectContaining({ "gen_ai.request.model": "claude-sonnet-4-5", "loopx.cost.usd": 0.25, "loopx.cost.kind": "billed", "gen_ai.usage.input_tokens": 1000, "gen_ai.usage.output_tokens": 200 }),
      expect.objectContaining({ "gen_ai.request.model": "claude-opus-4-1", "loopx.cost.usd": 0.5, "loopx.cost.kind": "estimate", "gen_ai.usage.cache_read.input_tokens": 90, "error.type": "server" }),
    ]);
    // A receipt of a call that failed carries its class as error.type; the others none.
    expect(first.events[0]!.attributes["error.type"]).toBeUndefined();
    // Cumulative sums of this run's process: billed and estimate apart, by model.
    const cost = (model: string, kind: string) => receiver.points.filter((p) => p.metric === "loopx.cost" && p.attributes["gen_ai.request.model"] === model && p.attributes["loopx.cost.kind"] === kind).map((p) => p.value);
    expect(cost("claude-sonnet-4-5", "billed")).toContain(0.5);
    expect(cost("claude-opus-4-1", "estimate")).toContain(1);
    expect(receiver.points.some((p) => p.metric === "gen_ai.client.token.usage" && p.attributes["gen_ai.token.type"] === "input" && p.kind === "histogram")).toBe(true);
  });

  it("a collector that answers 500, or never answers, fails nothing: exit 0, one warning line", async () => {
    for (const answer of [500, "hang"] as const) {
      receiver.answer = answer;
      try {
        const dir = gotoProject();
        const result = await runCli(NODE_CLI!, ["run", "-n", "3", "w"], { cwd: dir, env: otelEnv() });
        expect(result.code).toBe(0);
        expect(result.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^loopx: warning: telemetry: exporting to .* failed \(the run goes on; no further warning\)/)]);
      } finally {
        receiver.answer = 200;
      }
    }
  });

  it("OTLP credentials reach the collector but not scripts, unless LOOPX_OTEL_SCRIPT_HEADERS=1", async () => {
    const dir = gotoProject();
    const result = await runCli(NODE_CLI!, ["run", "-n", "1", "w"], { cwd: dir, env: otelEnv({ OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=s3cret" }) });
    expect(result.code).toBe(0);
    expect(seen(dir)[0]!.headers).toBe("none");
    expect(receiver.requests.some((request) => request.headers["x-api-key"] === "s3cret")).toBe(true);
    const allowed = gotoProject();
    await runCli(NODE_CLI!, ["run", "-n", "1", "w"], { cwd: allowed, env: otelEnv({ OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=s3cret", LOOPX_OTEL_SCRIPT_HEADERS: "1" }) });
    expect(seen(allowed)[0]!.headers).toBe("x-api-key=s3cret");
  });

  it("off (no LOOPX_OTEL, or OTEL_SDK_DISABLED=true): nothing is sent and scripts see the environment unchanged", async () => {
    const before = receiver.requests.length;
    for (const env of [isolatedEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, TRACEPARENT: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" }), otelEnv({ OTEL_SDK_DISABLED: "true" })]) {
      const dir = gotoProject();
      const result = await runCli(NODE_CLI!, ["run", "-n", "2", "w"], { cwd: dir, env });
      expect(result.code).toBe(0);
      expect(result.stderr).toBe("");
      expect(seen(dir).map((line) => line.traceparent)).toEqual(Array(2).fill(env.TRACEPARENT ?? ""));
    }
    await sleep(200);
    expect(receiver.requests.length).toBe(before);
  });

  it("the API: RunOptions.telemetry turns it on for that run only (and false keeps LOOPX_OTEL's run off)", async () => {
    const dir = consumer(
      `import { runPromise } from "loopx";
       await runPromise("w", { maxIterations: 1, telemetry: true });
       await runPromise("w", { maxIterations: 1, telemetry: false, env: { SECOND: "1" } });
       console.log(JSON.stringify({ ok: true }));`,
      { ".loopx/w/index.sh": sh(`${SEEN}\n$LOOPX_BIN output --result "\${SECOND:-first}"`) },
    );
    const result = await runConsumer(RUNTIMES[0]!, dir, { env: otelEnv({ LOOPX_OTEL: "1" }) });
    expect(result.json, result.stderr).toEqual({ ok: true });
    const lines = seen(dir);
    expect(lines).toHaveLength(2);
    expect(lines[0]!.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(lines[1]!.traceparent).toBe("");
    const id = lines[0]!.attributes.match(/loopx\.run\.id=([0-9a-z]+)/)![1]!;
    expect(spansOf(id).find((span) => span.name === "loopx run")!.attributes["loopx.run.state"]).toBe("limit");
  });

  it("loopx otel test: OK with the collector up; one line and exit 1 with it down", async () => {
    const dir = makeProject();
    const ok = await runCli(NODE_CLI!, ["otel", "test"], { cwd: dir, env: otelEnv() });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(new RegExp(`^OK: a probe span and metric \\(loopx\\.test_id [0-9a-f-]{36}\\) sent to ${receiver.url}\\n$`));
    const id = ok.stdout.match(/test_id ([0-9a-f-]+)/)![1];
    expect(receiver.spans.some((span) => span.name === "loopx.otel.test" && span.attributes["loopx.test_id"] === id)).toBe(true);
    const down = await runCli(NODE_CLI!, ["otel", "test"], { cwd: dir, env: otelEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9" }) });
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/^loopx: telemetry test failed: .*ECONNREFUSED.*\n$/);
  });
});
