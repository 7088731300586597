import type { LoopEvent, RunResumeEvent, RunStartEvent } from "../core/events.js";
import type { Receipt } from "../core/receipt-types.js";
import type { NextScript, RunControls, RunPart } from "../core/run-part.js";
import { CREDENTIAL_VARIABLES, scriptResourceAttributes, telemetryCapture } from "./settings.js";
import type { RunTrace } from "./run-trace.js";
import { otlpSettingsProblem } from "./settings-check.js";
import type { SdkSetup } from "./sdk.js";
import type { Env } from "../core/env.js";


/**
 * A run's OpenTelemetry export (loopx's own addition; only in runs with telemetry on — see
 * settings.ts — so a run without it loads nothing of the SDK). The SDK is loaded when the run
 * begins; spans and metrics are batched and exported off the loop's path (an exporter that fails
 * costs one warning per run, never the run); when the run has ended, the last export gets at most
 * FLUSH_LIMIT_MS (2 s). Every script gets TRACEPARENT / TRACESTATE of its iteration's span and
 * OTEL_RESOURCE_ATTRIBUTES with loopx.run.id and loopx.iteration, so an agent's own telemetry can
 * be joined to the run; the OTLP credentials (`…_HEADERS`) are kept from scripts unless allowed.
 */
export class TelemetryPart implements RunPart {
  private trace: RunTrace | undefined;
  private setup: SdkSetup | undefined;
  private started: RunStartEvent | RunResumeEvent | undefined;
  private warned = false;
  private runId = "";
  private readonly capture;
  private readonly removed: Record<string, undefined>;

  constructor(
    private readonly env: Env,
    private readonly version: string,
  ) {
    this.capture = telemetryCapture(env);
    this.removed = this.capture.scriptHeaders ? {} : Object.fromEntries(CREDENTIAL_VARIABLES.map((name) => [name, undefined]));
  }

  async begin(controls: RunControls): Promise<void> {
    this.runId = controls.id;
    const endpoint = this.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || this.env.OTEL_EXPORTER_OTLP_ENDPOINT || "http://localhost:4318";
    // A setting the exporters cannot use turns telemetry off for this run, with one line: never the run.
    const problem = otlpSettingsProblem(this.env);
    if (problem) return controls.warn(`telemetry: ${problem}; this run exports nothing`);
    const [sdk, { RunTrace }] = await Promise.all([import("./sdk.js"), import("./run-trace.js")]);
    // A fenced run (--sandbox) says so on its resource: loopx.sandbox, loopx.sandbox.policy_digest.
    const fence = this.started?.sandbox;
    const attributes = fence && [this.env.OTEL_RESOURCE_ATTRIBUTES, `loopx.sandbox=${fence.kind}`, `loopx.sandbox.policy_digest=${fence.policyDigest}`].filter(Boolean).join(",");
    try {
      this.setup = await sdk.setUpSdk(attributes ? { ...this.env, OTEL_RESOURCE_ATTRIBUTES: attributes } : this.env, this.version, (message) => {
        if (this.warned) return;
        this.warned = true;
        controls.warn(`telemetry: exporting to ${endpoint} failed (the run goes on; no further warning): ${message.split("\n")[0]}`);
      });
    } catch (error) {
      return controls.warn(`telemetry: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}; this run exports nothing`);
    }
    this.trace = new RunTrace(this.setup, this.env, this.capture);
    if (this.started) this.trace.begin(this.started);
  }

  onEvent(event: LoopEvent): void {
    if (event.type === "run.start" || event.type === "run.resume") this.started = event;
    else this.trace?.onEvent(event);
  }

  beforeScript(next: NextScript): void {
    this.trace?.nextStdin(next.stdin);
  }

  scriptEnv(n: number): Record<string, string | undefined> {
    return {
      ...this.removed,
      ...this.trace?.scriptVariables(),
      OTEL_RESOURCE_ATTRIBUTES: scriptResourceAttributes(this.env.OTEL_RESOURCE_ATTRIBUTES, this.runId, n),
    };
  }

  /** A receipt of iteration `n`, as the run's live receipts read it. */
  receipt(receipt: Receipt, n: number | undefined): void {
    this.trace?.receipt(receipt, n);
  }

  async settle(): Promise<void> {
    await this.setup?.shutdown();
  }
}
