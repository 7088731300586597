import type { Attributes } from "@opentelemetry/api";
import type { IterationEndEvent, RunEndEvent, RunResumeEvent, RunStartEvent } from "../core/events.js";
import type { Receipt } from "../core/receipt-types.js";
import type { TelemetryCapture } from "./settings.js";

/**
 * What the run's spans say, apart from when they start and end (RunTrace, run-trace.ts): pure
 * functions of the events, named as in run-trace.ts's list of attributes.
 */

/** How much of a result or a stdin is put on a span, when the settings allow it. */
export const RESULT_ATTRIBUTE_BYTES = 4096;

/** The `loopx run` span's attributes at run.start / run.resume (`runAttributes`: the ones the metrics share). */
export function runAttributesOf(event: RunStartEvent | RunResumeEvent, runAttributes: Attributes): Attributes {
  return {
    ...runAttributes,
    "loopx.target": event.target,
    "loopx.project": event.projectRoot,
    "loopx.version": event.version,
    "loopx.runtime": event.runtime,
    ...(event.maxIterations !== null ? { "loopx.max_iterations": event.maxIterations } : {}),
    ...(event.type === "run.resume" ? { "loopx.resume": true, "loopx.resume.iterations": event.iterations } : {}),
  };
}

/** An iteration span's attributes at its iteration.end. */
export function iterationEndAttributes(event: IterationEndEvent, capture: TelemetryCapture): Attributes {
  const output = event.output;
  return {
    ...(event.exitCode !== null ? { "process.exit.code": event.exitCode } : {}),
    ...(event.signal ? { "loopx.signal": event.signal } : {}),
    "loopx.stdout.length": event.stdoutBytes,
    ...(output?.goto !== undefined ? { "loopx.goto": output.goto } : {}),
    ...(output?.stop === true ? { "loopx.stop": true } : {}),
    ...(output?.result !== undefined ? { "loopx.result.length": output.resultBytes ?? Buffer.byteLength(output.result) } : {}),
    ...(capture.result && output?.result !== undefined ? { "loopx.result": output.result.slice(0, RESULT_ATTRIBUTE_BYTES) } : {}),
  };
}

/** The attributes of a receipt's `loopx.receipt` event on its iteration's span. */
export function receiptAttributes(receipt: Receipt): Attributes {
  const tokens = receipt.tokens ?? {};
  return {
    ...(receipt.model ? { "gen_ai.request.model": receipt.model } : {}),
    ...(receipt.provider ? { "gen_ai.provider.name": receipt.provider } : {}),
    ...(receipt.agent ? { "loopx.agent": receipt.agent } : {}),
    // The call failed: its class, as OpenTelemetry's semantic conventions name an error's kind.
    ...(receipt.failure ? { "error.type": receipt.failure } : {}),
    ...(receipt.cost ? { "loopx.cost.usd": receipt.cost.usd, "loopx.cost.kind": receipt.cost.kind } : {}),
    ...(tokens.input !== undefined ? { "gen_ai.usage.input_tokens": tokens.input } : {}),
    ...(tokens.output !== undefined ? { "gen_ai.usage.output_tokens": tokens.output } : {}),
    ...(tokens.cacheRead !== undefined ? { "gen_ai.usage.cache_read.input_tokens": tokens.cacheRead } : {}),
    ...(tokens.cacheWrite !== undefined ? { "gen_ai.usage.cache_creation.input_tokens": tokens.cacheWrite } : {}),
    ...(tokens.reasoning !== undefined ? { "loopx.usage.reasoning_tokens": tokens.reasoning } : {}),
  };
}

/** The `loopx run` span's attributes at run.end: its ending. */
export function runEndAttributes(event: RunEndEvent): Attributes {
  return {
    "loopx.run.state": event.reason,
    "loopx.iterations": event.iterations,
    ...(event.exitCode !== null ? { "loopx.exit_code": event.exitCode } : {}),
    ...(event.signal ? { "loopx.signal": event.signal } : {}),
    ...(event.target ? { "loopx.ended_by": event.target } : {}),
  };
}
