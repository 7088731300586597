import { defaultTextMapGetter, defaultTextMapSetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from "@opentelemetry/api";
import { ExportResultCode, setGlobalErrorHandler, W3CTraceContextPropagator, type ExportResult } from "@opentelemetry/core";
import { resourceFromAttributes, type Resource } from "@opentelemetry/resources";
import { MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from "@opentelemetry/sdk-metrics";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type IdGenerator,
  type Sampler,
  type SpanExporter,
} from "@opentelemetry/sdk-trace-base";
import { parseHeaders, parseResourceAttributes } from "./settings.js";
import { RunMetrics } from "./metrics.js";
import type { Env } from "../core/env.js";

/**
 * The OpenTelemetry SDK, set up for one run (loaded only when telemetry is on: see part.ts). Its
 * providers are the run's own — never registered globally, so a program that runs loops through the
 * API keeps its own OpenTelemetry setup — and are configured from the run's environment by the
 * standard variables: OTEL_EXPORTER_OTLP_(TRACES_|METRICS_)ENDPOINT / _HEADERS / _PROTOCOL
 * (http/protobuf, the default, or http/json), OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES,
 * OTEL_TRACES_SAMPLER(_ARG), OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER (`none`),
 * OTEL_METRIC_EXPORT_INTERVAL.
 */


/**
 * The longest loopx waits for the last export when a run ends, and the longest any export (its
 * retries included) may take: documented as "at most 2 s" of delay at exit, with room for the
 * process's own exit under load.
 */
export const FLUSH_LIMIT_MS = 1500;

/** Where a signal goes: the signal's own endpoint as given, or the common one + /v1/<signal>. */
function endpoint(env: Env, signal: "traces" | "metrics"): string {
  const own = env[`OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_ENDPOINT`];
  if (own) return own;
  const base = (env.OTEL_EXPORTER_OTLP_ENDPOINT || "http://localhost:4318").replace(/\/+$/, "");
  return `${base}/v1/${signal}`;
}

/** The protocol of a signal: its own variable, the common one, or http/protobuf. */
function protocolOf(env: Env, signal: "traces" | "metrics"): "http/protobuf" | "http/json" | string {
  return env[`OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_PROTOCOL`] || env.OTEL_EXPORTER_OTLP_PROTOCOL || "http/protobuf";
}

function exporterConfig(env: Env, signal: "traces" | "metrics") {
  const headers = { ...parseHeaders(env.OTEL_EXPORTER_OTLP_HEADERS), ...parseHeaders(env[`OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_HEADERS`]) };
  // An export (its retries included) never outlasts the flush limit: a collector that is down or slow
  // holds nothing of the run, nor its exit, longer than that.
  return { url: endpoint(env, signal), headers, timeoutMillis: FLUSH_LIMIT_MS };
}

type OnError = (message: string) => void;

/** An exporter whose failed exports are told to `onError` (the SDK's own reporting misses some at shutdown). */
function watched<T extends SpanExporter | PushMetricExporter>(exporter: T, onError: OnError): T {
  const exportBatch = exporter.export.bind(exporter) as (items: unknown, done: (result: ExportResult) => void) => void;
  (exporter as { export: typeof exportBatch }).export = (items, done) =>
    exportBatch(items, (result) => {
      if (result.code !== ExportResultCode.SUCCESS) onError(result.error?.message ?? "export failed");
      done(result);
    });
  return exporter;
}

async function spanExporter(env: Env, onError: OnError): Promise<SpanExporter> {
  const config = exporterConfig(env, "traces");
  if (protocolOf(env, "traces") === "http/json") return watched(new (await import("@opentelemetry/exporter-trace-otlp-http")).OTLPTraceExporter(config), onError);
  return watched(new (await import("@opentelemetry/exporter-trace-otlp-proto")).OTLPTraceExporter(config), onError);
}

async function metricExporter(env: Env, onError: OnError): Promise<PushMetricExporter> {
  const config = exporterConfig(env, "metrics");
  if (protocolOf(env, "metrics") === "http/json") return watched(new (await import("@opentelemetry/exporter-metrics-otlp-http")).OTLPMetricExporter(config), onError);
  return watched(new (await import("@opentelemetry/exporter-metrics-otlp-proto")).OTLPMetricExporter(config), onError);
}

/** OTEL_TRACES_SAMPLER as the SDK documents it (default: parentbased_always_on). */
function sampler(env: Env): Sampler {
  const ratio = Number(env.OTEL_TRACES_SAMPLER_ARG ?? "1");
  const fraction = Number.isFinite(ratio) && ratio >= 0 && ratio <= 1 ? ratio : 1;
  switch ((env.OTEL_TRACES_SAMPLER ?? "").trim()) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return new TraceIdRatioBasedSampler(fraction);
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(fraction) });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/** service.name (OTEL_SERVICE_NAME, else "loopx"), service.version, then OTEL_RESOURCE_ATTRIBUTES. */
function resource(env: Env, version: string): Resource {
  const attributes: Attributes = { "service.name": "loopx", "service.version": version, "telemetry.sdk.language": "nodejs" };
  for (const [key, value] of parseResourceAttributes(env.OTEL_RESOURCE_ATTRIBUTES)) attributes[key] = value;
  if (env.OTEL_SERVICE_NAME) attributes["service.name"] = env.OTEL_SERVICE_NAME;
  return resourceFromAttributes(attributes);
}

/**
 * Ids that are random, except a run's own span when asked for: a run's trace id and root span id
 * derive from its run id (when it has no parent), so that a resumed run — a new process — can link
 * to the trace of its first sitting without keeping anything.
 */
class RunIds implements IdGenerator {
  next: { traceId?: string; spanId?: string } = {};
  generateTraceId(): string {
    const id = this.next.traceId ?? randomHex(16);
    this.next.traceId = undefined;
    return id;
  }
  generateSpanId(): string {
    const id = this.next.spanId ?? randomHex(8);
    this.next.spanId = undefined;
    return id;
  }
}

function randomHex(bytes: number): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** The run's derived ids: FNV-1a over the run id, widened; never all zero. */
export function derivedIds(runId: string): { traceId: string; spanId: string } {
  const words: string[] = [];
  for (let seed = 0; seed < 4; seed++) {
    let hash = (0x811c9dc5 ^ seed) >>> 0;
    for (const char of `loopx:${runId}`) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193) >>> 0;
    words.push((hash || 1).toString(16).padStart(8, "0"));
  }
  return { traceId: words.join(""), spanId: words.slice(2).join("") };
}

export interface SdkSetup {
  tracer: Tracer | undefined;
  metrics: RunMetrics | undefined;
  ids: RunIds;
  propagator: W3CTraceContextPropagator;
  /** Ends the providers, waiting at most FLUSH_LIMIT_MS for the last exports. */
  shutdown(): Promise<void>;
}

/** The providers for one run; `onError` hears the first export failure (one warning per run). */
export async function setUpSdk(env: Env, version: string, onError: (message: string) => void): Promise<SdkSetup> {
  setGlobalErrorHandler((error) => onError(error instanceof Error ? error.message : String(error)));
  const res = resource(env, version);
  const ids = new RunIds();
  const closers: Array<() => Promise<void>> = [];
  let tracer: Tracer | undefined;
  if (env.OTEL_TRACES_EXPORTER !== "none") {
    const provider = new BasicTracerProvider({ resource: res, sampler: sampler(env), idGenerator: ids, spanProcessors: [new BatchSpanProcessor(await spanExporter(env, onError), { scheduledDelayMillis: 1000 })] });
    tracer = provider.getTracer("loopx", version);
    closers.push(() => provider.shutdown());
  }
  let metrics: RunMetrics | undefined;
  if (env.OTEL_METRICS_EXPORTER !== "none") {
    const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL);
    const reader = new PeriodicExportingMetricReader({ exporter: await metricExporter(env, onError), exportIntervalMillis: Number.isFinite(interval) && interval > 0 ? interval : 60_000 });
    const provider = new MeterProvider({ resource: res, readers: [reader] });
    metrics = new RunMetrics(provider.getMeter("loopx", version));
    closers.push(() => provider.shutdown());
  }
  return {
    tracer,
    metrics,
    ids,
    propagator: new W3CTraceContextPropagator(),
    async shutdown() {
      let timer: NodeJS.Timeout | undefined;
      const limit = new Promise<void>((resolve) => (timer = setTimeout(resolve, FLUSH_LIMIT_MS)));
      await Promise.race([Promise.allSettled(closers.map((close) => close())), limit]);
      clearTimeout(timer);
    },
  };
}

/** The context of an inbound TRACEPARENT / TRACESTATE (the run's parent), or the root context. */
export function parentContext(setup: SdkSetup, env: Env): Context {
  if (!env.TRACEPARENT) return ROOT_CONTEXT;
  return setup.propagator.extract(ROOT_CONTEXT, { traceparent: env.TRACEPARENT, ...(env.TRACESTATE ? { tracestate: env.TRACESTATE } : {}) }, defaultTextMapGetter);
}

/** TRACEPARENT (and TRACESTATE) of `span`, for a script's environment. */
export function spanVariables(setup: SdkSetup, span: Span): Record<string, string> {
  const carrier: Record<string, string> = {};
  setup.propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, defaultTextMapSetter);
  const vars: Record<string, string> = {};
  if (carrier.traceparent) vars.TRACEPARENT = carrier.traceparent;
  if (carrier.tracestate) vars.TRACESTATE = carrier.tracestate;
  return vars;
}

export { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace };
