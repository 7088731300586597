/**
 * The OTLP settings a run would export with, checked before the SDK sees them: the SDK throws on a
 * malformed endpoint (in words of its own or of Node's URL parser), skips a malformed header
 * silently, and ignores a protocol it does not know. Here each gives one line that names the
 * variable, so a typo costs a run one warning (and the test one clear failure), never the run.
 */

import type { Env } from "../core/env.js";

/** The protocols loopx exports with; gRPC would need a second transport (and @grpc/grpc-js) in every channel. */
const PROTOCOLS = ["http/protobuf", "http/json"];

/** An HTTP header name (RFC 9110 token). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The signals a run exports (a signal whose exporter is `none` is not checked). */
function signals(env: Env): Array<"TRACES" | "METRICS"> {
  const used: Array<"TRACES" | "METRICS"> = [];
  if (env.OTEL_TRACES_EXPORTER !== "none") used.push("TRACES");
  if (env.OTEL_METRICS_EXPORTER !== "none") used.push("METRICS");
  return used;
}

function endpointProblem(name: string, value: string): string | undefined {
  if (!/^https?:\/\//i.test(value.trim())) return `${name}=${JSON.stringify(value)} must start with http:// or https://`;
  try {
    new URL(value.trim());
    return undefined;
  } catch {
    return `${name}=${JSON.stringify(value)} is not a URL`;
  }
}

function protocolProblem(name: string, value: string): string | undefined {
  if (PROTOCOLS.includes(value.trim())) return undefined;
  if (value.trim() === "grpc") return `${name}=grpc is not supported: loopx exports OTLP over HTTP only (http/protobuf or http/json; a collector's OTLP/HTTP port is usually 4318)`;
  return `${name}=${JSON.stringify(value)} is not a protocol loopx exports with (http/protobuf or http/json)`;
}

/** `key=value,…` as OTEL_EXPORTER_OTLP_HEADERS gives them: every entry a header name, `=`, and a percent-encoded value. */
function headersProblem(name: string, value: string): string | undefined {
  for (const entry of value.split(",")) {
    if (entry.trim() === "") continue;
    const at = entry.indexOf("=");
    const key = at < 0 ? entry.trim() : entry.slice(0, at).trim();
    if (at <= 0 || !TOKEN.test(key)) return `${name}: ${JSON.stringify(key.slice(0, 40))} is not a header name (the form is name=value,name=value)`;
    let decoded: string;
    try {
      decoded = decodeURIComponent(entry.slice(at + 1).trim());
    } catch {
      return `${name}: the value of ${key} is not percent-encoded correctly (a space is %20)`;
    }
    if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(decoded)) return `${name}: the value of ${key} holds a control character (a line break?)`;
  }
  return undefined;
}

/** The first bad OTLP setting of `env` as one line naming its variable, or undefined when all are usable. */
export function otlpSettingsProblem(env: Env): string | undefined {
  if (signals(env).length === 0) return undefined;
  const names = (suffix: string) => [`OTEL_EXPORTER_OTLP_${suffix}`, ...signals(env).map((signal) => `OTEL_EXPORTER_OTLP_${signal}_${suffix}`)];
  const checks: Array<[string, (name: string, value: string) => string | undefined]> = [
    ...names("PROTOCOL").map((name) => [name, protocolProblem] as [string, typeof protocolProblem]),
    ...names("ENDPOINT").map((name) => [name, endpointProblem] as [string, typeof endpointProblem]),
    ...names("HEADERS").map((name) => [name, headersProblem] as [string, typeof headersProblem]),
  ];
  for (const [name, check] of checks) {
    const value = env[name];
    if (value === undefined || value === "") continue;
    const problem = check(name, value);
    if (problem) return problem;
  }
  return undefined;
}
