import type { Attributes, Context, Link, Span } from "@opentelemetry/api";
import type { IterationEndEvent, LoopEvent, RunEndEvent, RunResumeEvent, RunStartEvent } from "../core/events.js";
import type { Receipt } from "../core/receipt-types.js";
import { inputBytes, inputPrefix, type ScriptInput } from "../core/stdout-text.js";
import { derivedIds, parentContext, ROOT_CONTEXT, SpanKind, SpanStatusCode, spanVariables, trace, type SdkSetup } from "./sdk.js";
import type { TelemetryCapture } from "./settings.js";
import type { Env } from "../core/env.js";
import { splitTarget, workflowOf } from "../core/target.js";
import { iterationEndAttributes, receiptAttributes, RESULT_ATTRIBUTE_BYTES, runAttributesOf, runEndAttributes } from "./span-attributes.js";

/**
 * One run's trace and metrics, fed by the run's events: a `loopx run` span (root, or the child of an
 * inbound TRACEPARENT) and under it one `loopx iteration` span per script execution. Attributes:
 * loopx.run.id, loopx.workflow, loopx.script, loopx.target, loopx.iteration, process.exit.code,
 * loopx.signal, loopx.goto, loopx.stop, loopx.result.length (the result itself only when allowed),
 * the receipts' cost (loopx.cost.usd + loopx.cost.kind) and tokens (gen_ai.usage.*), and on the run
 * span its ending (loopx.run.state, loopx.exit_code; status ERROR with the reason line unless it
 * ended as asked: stopped, -n, a stop request). A resumed run links to its first sitting's span.
 * This class starts and ends the spans; what they say is built in span-attributes.ts.
 */


/** Endings that are not errors: the loop did what it was told. */
const FINE = new Set(["stopped", "stopped-on-request", "limit"]);

export class RunTrace {
  private run: Span | undefined;
  private runContext: Context = ROOT_CONTEXT;
  private iteration: Span | undefined;
  private iterationN = 0;
  private runAttributes: Attributes = {};
  private stdin: ScriptInput | undefined;

  constructor(
    private readonly setup: SdkSetup,
    private readonly env: Env,
    private readonly capture: TelemetryCapture,
  ) {}

  /** run.start / run.resume: the run's span. */
  begin(event: RunStartEvent | RunResumeEvent): void {
    this.runAttributes = { "loopx.run.id": event.run, "loopx.workflow": workflowOf(event.target) };
    this.setup.metrics?.runStarted(this.runAttributes);
    const tracer = this.setup.tracer;
    if (!tracer) return;
    const parent = parentContext(this.setup, this.env);
    const own = derivedIds(event.run);
    const links: Link[] = [];
    if (event.type === "run.resume") {
      // Links to the first sitting's span (its ids derive from the run id), when that sitting had no parent.
      links.push({ context: { traceId: own.traceId, spanId: own.spanId, traceFlags: 1 }, attributes: { "loopx.link": "resumed from" } });
    } else {
      if (parent === ROOT_CONTEXT) this.setup.ids.next.traceId = own.traceId;
      this.setup.ids.next.spanId = own.spanId;
    }
    const attributes = runAttributesOf(event, this.runAttributes);
    this.run = tracer.startSpan("loopx run", { kind: SpanKind.INTERNAL, attributes, links, startTime: Date.parse(event.time) }, parent);
    this.runContext = trace.setSpan(parent, this.run);
  }

  /** What the next script's stdin is (recorded as its length, or itself when allowed). */
  nextStdin(stdin: ScriptInput | undefined): void {
    this.stdin = stdin;
  }

  onEvent(event: LoopEvent): void {
    switch (event.type) {
      case "iteration.start":
        this.startIteration(event.n, event.target, Date.parse(event.time));
        break;
      case "iteration.end":
        this.endIteration(event);
        break;
      case "run.pause":
      case "run.continue":
      case "run.stop":
        this.run?.addEvent(event.type, {}, Date.parse(event.time));
        break;
      case "run.stall":
        this.run?.addEvent(event.type, { "loopx.stall.message": event.message }, Date.parse(event.time));
        break;
      case "run.end":
        this.end(event);
        break;
    }
  }

  private startIteration(n: number, target: string, startTime: number): void {
    this.iterationN = n;
    const { workflow, script } = splitTarget(target);
    const stdinBytes = this.stdin === undefined ? 0 : inputBytes(this.stdin);
    const attributes: Attributes = {
      "loopx.run.id": this.runAttributes["loopx.run.id"]!,
      "loopx.iteration": n,
      "loopx.target": target,
      "loopx.workflow": workflow,
      "loopx.script": script,
      "loopx.stdin.length": stdinBytes,
      ...(this.capture.stdin && this.stdin !== undefined ? { "loopx.stdin": inputPrefix(this.stdin, RESULT_ATTRIBUTE_BYTES) } : {}),
    };
    this.stdin = undefined;
    this.iteration = this.setup.tracer?.startSpan(`loopx iteration ${target}`, { kind: SpanKind.INTERNAL, attributes, startTime }, this.runContext);
  }

  private endIteration(event: IterationEndEvent): void {
    const { workflow, script } = splitTarget(event.target);
    const failure = event.error === undefined ? undefined : /timed out|time limit/i.test(event.error) ? "timed-out" : "failed";
    this.setup.metrics?.iteration({ "loopx.workflow": workflow, "loopx.script": script }, event.durationMs / 1000, failure);
    const span = this.iteration;
    if (!span || this.iterationN !== event.n) return;
    span.setAttributes(iterationEndAttributes(event, this.capture));
    if (event.error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: event.error });
    span.end(Date.parse(event.time));
    this.iteration = undefined;
  }

  /** A receipt a script of this run sent (read as it came): on its iteration's span and in the metrics. */
  receipt(receipt: Receipt, n: number | undefined): void {
    const model = receipt.model ?? "(unknown)";
    const tokens = receipt.tokens ?? {};
    this.setup.metrics?.receipt(model, receipt.provider, receipt.cost, tokens as Record<string, number | undefined>);
    const span = n === this.iterationN ? this.iteration : undefined;
    if (!span) return;
    span.addEvent("loopx.receipt", receiptAttributes(receipt));
  }

  /** TRACEPARENT / TRACESTATE of the running iteration's span, for its script. */
  scriptVariables(): Record<string, string> {
    return this.iteration ? spanVariables(this.setup, this.iteration) : {};
  }

  private end(event: RunEndEvent): void {
    this.setup.metrics?.runEnded(this.runAttributes, event.reason);
    const run = this.run;
    if (!run) return;
    // An iteration cut short by the ending (a signal, a time limit) ends with the run.
    this.iteration?.end(Date.parse(event.time));
    run.setAttributes(runEndAttributes(event));
    if (FINE.has(event.reason)) run.setStatus({ code: SpanStatusCode.OK });
    else run.setStatus({ code: SpanStatusCode.ERROR, message: event.message ?? event.reason });
    run.end(Date.parse(event.time));
  }
}
