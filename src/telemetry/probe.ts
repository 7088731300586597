import { FLUSH_LIMIT_MS, setUpSdk, type SdkSetup } from "./sdk.js";
import { telemetryEnabled } from "./settings.js";
import { otlpSettingsProblem } from "./settings-check.js";

/**
 * `loopx otel test`: one probe span and one probe metric point, sent with the run's own settings
 * (the OTEL_* variables), then flushed. Resolves with the line to print and the exit code: OK and
 * where it went, or why not (the first export error).
 */
export async function probe(env: Record<string, string | undefined>, version: string): Promise<{ line: string; ok: boolean }> {
  // The SDK's own switch wins here as in runs: the probe would say OK for telemetry that never goes out.
  if (!telemetryEnabled(env, true)) return { line: "telemetry is off (OTEL_SDK_DISABLED=true): no probe sent", ok: false };
  const problem = otlpSettingsProblem(env);
  if (problem) return { line: `telemetry test failed: ${problem}`, ok: false };
  let failure: string | undefined;
  let setup: SdkSetup;
  try {
    setup = await setUpSdk(env, version, (message) => (failure ??= message.split("\n")[0]));
  } catch (error) {
    return { line: `telemetry test failed: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`, ok: false };
  }
  const id = crypto.randomUUID();
  const span = setup.tracer?.startSpan("loopx.otel.test", { attributes: { "loopx.version": version, "loopx.test_id": id } });
  span?.end();
  setup.metrics?.probe(id);
  const started = Date.now();
  await setup.shutdown();
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || `${(env.OTEL_EXPORTER_OTLP_ENDPOINT || "http://localhost:4318").replace(/\/+$/, "")}/v1/traces`;
  if (!setup.tracer && !setup.metrics) return { line: "OK (no exporter: OTEL_TRACES_EXPORTER and OTEL_METRICS_EXPORTER are none)", ok: true };
  if (failure !== undefined) return { line: `telemetry test failed: ${failure}`, ok: false };
  if (Date.now() - started >= FLUSH_LIMIT_MS) return { line: `telemetry test failed: ${traces} did not answer within ${FLUSH_LIMIT_MS / 1000} s`, ok: false };
  return { line: `OK: a probe span and metric (loopx.test_id ${id}) sent to ${traces.replace(/\/v1\/traces$/, "")}`, ok: true };
}
