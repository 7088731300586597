/**
 * A telemetry typo is never in the way: a bad OTLP endpoint, header or protocol costs a run one
 * `loopx: warning:` line naming the variable (and the run goes on, exporting nothing), and
 * `loopx otel test` one line naming it; OTEL_SDK_DISABLED=true keeps the probe from going out.
 * Against the OTLP receiver fixture, on node, bun and the binary.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startReceiver, type Receiver } from "../../fixtures/otlp/receiver.js";
import { CLIS, isolatedEnv, makeProject, runCli, sh, sleep, type Cli } from "../../helpers.js";

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

const project = () =>
  makeProject({
    ".loopx/w/index.sh": sh(`echo "$LOOPX_ITERATION" >> "$LOOPX_PROJECT_ROOT/ran.txt"\nif [ "$LOOPX_ITERATION" -ge 2 ]; then $LOOPX_BIN output --stop; fi`),
  });

const otelEnv = (extra: Record<string, string>) => isolatedEnv({ LOOPX_OTEL: "1", OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_METRIC_EXPORT_INTERVAL: "600000", ...extra });

/** Each bad setting, and the words its one line must hold. */
const TYPOS: Array<[Record<string, string>, RegExp]> = [
  [{ OTEL_EXPORTER_OTLP_ENDPOINT: "not-a-url" }, /OTEL_EXPORTER_OTLP_ENDPOINT="not-a-url" must start with http:\/\/ or https:\/\//],
  [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "localhost:4318/v1/traces" }, /OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="localhost:4318\/v1\/traces" must start with http:\/\/ or https:\/\//],
  [{ OTEL_EXPORTER_OTLP_ENDPOINT: "http://[::1" }, /OTEL_EXPORTER_OTLP_ENDPOINT="http:\/\/\[::1" is not a URL/],
  [{ OTEL_EXPORTER_OTLP_HEADERS: "Authorization Basic abc" }, /OTEL_EXPORTER_OTLP_HEADERS: "Authorization Basic abc" is not a header name/],
  [{ OTEL_EXPORTER_OTLP_HEADERS: "x-key=100%" }, /OTEL_EXPORTER_OTLP_HEADERS: the value of x-key is not percent-encoded correctly/],
  [{ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }, /OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported: loopx exports OTLP over HTTP only/],
  [{ OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: "http/xml" }, /OTEL_EXPORTER_OTLP_METRICS_PROTOCOL="http\/xml" is not a protocol loopx exports with/],
];

describe.each(CLIS)("a telemetry typo ($name)", (cli: Cli) => {
  it("a run: one warning line naming the variable, every iteration runs, exit 0, nothing sent", async () => {
    const before = receiver.requests.length;
    for (const [typo, words] of TYPOS.slice(0, cli.name === "node" ? TYPOS.length : 2)) {
      const dir = project();
      const result = await runCli(cli, ["run", "-n", "5", "w"], { cwd: dir, env: otelEnv(typo) });
      expect(result.code, result.stderr).toBe(0);
      const lines = result.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^loopx: warning: telemetry: /);
      expect(lines[0]).toMatch(words);
      expect(lines[0]).toMatch(/this run exports nothing$/);
      expect(readFileSync(join(dir, "ran.txt"), "utf8")).toBe("1\n2\n");
    }
    await sleep(200);
    expect(receiver.requests.length).toBe(before);
  });

  it("loopx otel test: one line naming the bad variable, exit 1, never 'internal error'", async () => {
    for (const [typo, words] of TYPOS.slice(0, cli.name === "node" ? TYPOS.length : 3)) {
      const result = await runCli(cli, ["otel", "test"], { cwd: makeProject(), env: otelEnv(typo) });
      expect(result.code).toBe(1);
      expect(result.stdout).toBe("");
      expect(result.stderr).toMatch(/^loopx: telemetry test failed: [^\n]+\n$/);
      expect(result.stderr).toMatch(words);
      expect(result.stderr).not.toMatch(/internal error|Could not parse|Protocol ".*" not supported/);
    }
  });

  it("OTEL_SDK_DISABLED=true loopx otel test sends no probe, and says so in one line", async () => {
    const before = receiver.requests.length;
    const result = await runCli(cli, ["otel", "test"], { cwd: makeProject(), env: otelEnv({ OTEL_SDK_DISABLED: "true" }) });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("loopx: telemetry is off (OTEL_SDK_DISABLED=true): no probe sent\n");
    await sleep(300);
    expect(receiver.requests.length).toBe(before);
  });
});

it("a good configuration still sends (the check refuses nothing valid): percent-encoded headers, per-signal endpoint", async () => {
  const [node] = CLIS;
  const result = await runCli(node!, ["otel", "test"], {
    cwd: makeProject(),
    env: otelEnv({ OTEL_EXPORTER_OTLP_HEADERS: "Authorization=Basic%20abc,x-team=infra,", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }),
  });
  expect(result.code, result.stderr).toBe(0);
  expect(receiver.requests.some((request) => request.headers.authorization === "Basic abc" && request.headers["x-team"] === "infra")).toBe(true);
});

