/**
 * OpenTelemetry (loopx's own addition): whether a run exports, and what its scripts get. Nothing
 * here loads the SDK: a run with telemetry off reads two variables and adds no part.
 *
 * On: `LOOPX_OTEL=1` (or `true`) in the environment or the global env file, or `telemetry: true` in
 * RunOptions. `OTEL_SDK_DISABLED=true` (the SDK's own switch) wins over both. Everything else is
 * configured by the standard `OTEL_*` variables (see sdk.ts).
 */
import type { Env } from "../core/env.js";


const yes = (value: string | undefined) => value !== undefined && /^(1|true|yes|on)$/i.test(value.trim());

/** Telemetry for a run with environment `env` and the API's `telemetry` option. */
export function telemetryEnabled(env: Env, option?: boolean): boolean {
  if (yes(env.OTEL_SDK_DISABLED)) return false;
  return option ?? yes(env.LOOPX_OTEL);
}

/** What the user allows loopx to export or pass on beyond the defaults. */
export interface TelemetryCapture {
  /** `LOOPX_OTEL_CAPTURE_RESULT=1`: a script's `result` (its first 4 KiB) as a span attribute. Default: its length and SHA-256 only. */
  result: boolean;
  /** `LOOPX_OTEL_CAPTURE_STDIN=1`: what a script got on stdin, likewise. Default: length and SHA-256. */
  stdin: boolean;
  /** `LOOPX_OTEL_SCRIPT_HEADERS=1`: scripts keep the `OTEL_EXPORTER_OTLP_*HEADERS` credentials. Default: removed from their environment. */
  scriptHeaders: boolean;
}

export function telemetryCapture(env: Env): TelemetryCapture {
  return { result: yes(env.LOOPX_OTEL_CAPTURE_RESULT), stdin: yes(env.LOOPX_OTEL_CAPTURE_STDIN), scriptHeaders: yes(env.LOOPX_OTEL_SCRIPT_HEADERS) };
}

/** The variables that carry OTLP credentials (`…_HEADERS`): kept from scripts unless allowed. */
export const CREDENTIAL_VARIABLES = ["OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_METRICS_HEADERS", "OTEL_EXPORTER_OTLP_LOGS_HEADERS"] as const;

/**
 * `OTEL_RESOURCE_ATTRIBUTES` (`key=value,key=value`, values percent-encoded) as pairs; malformed
 * entries are skipped, as the SDK does.
 */
export function parseResourceAttributes(text: string | undefined): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (const entry of (text ?? "").split(",")) {
    const at = entry.indexOf("=");
    if (at <= 0) continue;
    try {
      pairs.push([decodeURIComponent(entry.slice(0, at).trim()), decodeURIComponent(entry.slice(at + 1).trim())]);
    } catch {
      // not percent-decodable: skipped
    }
  }
  return pairs;
}

/** `OTEL_RESOURCE_ATTRIBUTES` for a script: the inherited ones, then the run id and iteration (replacing any of the same name). */
export function scriptResourceAttributes(inherited: string | undefined, runId: string, iteration: number): string {
  const own: Array<[string, string]> = [
    ["loopx.run.id", runId],
    ["loopx.iteration", String(iteration)],
  ];
  const kept = parseResourceAttributes(inherited).filter(([key]) => !own.some(([name]) => name === key));
  return [...kept, ...own].map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`).join(",");
}

/** `OTEL_EXPORTER_OTLP_HEADERS` (`key=value,…`, percent-encoded) as a header object. */
export function parseHeaders(text: string | undefined): Record<string, string> {
  return Object.fromEntries(parseResourceAttributes(text));
}
