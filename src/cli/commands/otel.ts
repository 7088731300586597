import { Command } from "clipanion";
import { LoopxCommand } from "../context.js";
import type { CommandGroup } from "../command-spec.js";

/** `loopx otel test` (loopx's own addition): is the OpenTelemetry collector reachable, as runs would send to it? */
export class OtelTestCommand extends LoopxCommand {
  static override paths = [["otel", "test"]];
  static override usage = Command.Usage({ description: "Send one probe span and metric to the OpenTelemetry collector; say OK or why not" });

  async execute(): Promise<number> {
    const [{ probe }, { VERSION }] = await Promise.all([import("../../telemetry/probe.js"), import("../../version.js")]);
    const { line, ok } = await probe(this.context.env, VERSION);
    (ok ? this.context.stdout : this.context.stderr).write(`${ok ? "" : "loopx: "}${line}\n`);
    return ok ? 0 : 1;
  }
}

export const OTEL_COMMANDS: CommandGroup = {
  name: "otel",
  commands: [OtelTestCommand],
  details: `loopx's own addition. Runs export traces and metrics to OpenTelemetry when LOOPX_OTEL=1 is in
loopx's environment (RunOptions.telemetry in the API; OTEL_SDK_DISABLED=true wins), configured
by the standard variables: OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318),
OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_PROTOCOL (http/protobuf or http/json; no grpc),
OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER. Scripts get TRACEPARENT of
their iteration's span and loopx.run.id / loopx.iteration in OTEL_RESOURCE_ATTRIBUTES. Off, loopx
loads nothing of it. 'loopx otel test' sends one probe with these settings.
`,
};
