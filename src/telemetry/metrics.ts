import type { Attributes, Counter, Histogram, Meter, UpDownCounter } from "@opentelemetry/api";

/**
 * loopx's metrics. Named by the OpenTelemetry semantic conventions where one exists —
 * `gen_ai.client.token.usage` (histogram of tokens per receipt, `{token}`, with `gen_ai.token.type`
 * input/output, `gen_ai.request.model`, `gen_ai.provider.name`) — and `loopx.*` otherwise:
 *   loopx.runs.active    up-down counter  runs going now
 *   loopx.runs           counter          runs ended, by `loopx.run.state`
 *   loopx.iterations     counter          script executions, by workflow, script and outcome
 *   loopx.script.duration histogram (s)   how long each script ran
 *   loopx.script.failures counter         scripts that failed or timed out, by `loopx.failure`
 *   loopx.cost           counter (USD)    reported cost, by model and `loopx.cost.kind` (billed|estimate: never summed)
 *   loopx.tokens         counter ({token}) reported tokens, by model and `loopx.token.type` (input, output, cacheRead, cacheWrite, reasoning)
 */
export class RunMetrics {
  private readonly active: UpDownCounter;
  private readonly runs: Counter;
  private readonly iterations: Counter;
  private readonly duration: Histogram;
  private readonly failures: Counter;
  private readonly cost: Counter;
  private readonly tokens: Counter;
  private readonly tokenUsage: Histogram;

  constructor(meter: Meter) {
    this.active = meter.createUpDownCounter("loopx.runs.active", { description: "Runs going now", unit: "{run}" });
    this.runs = meter.createCounter("loopx.runs", { description: "Runs ended, by state", unit: "{run}" });
    this.iterations = meter.createCounter("loopx.iterations", { description: "Script executions", unit: "{iteration}" });
    this.duration = meter.createHistogram("loopx.script.duration", { description: "How long a script ran", unit: "s" });
    this.failures = meter.createCounter("loopx.script.failures", { description: "Scripts that failed or timed out", unit: "{iteration}" });
    this.cost = meter.createCounter("loopx.cost", { description: "Cost reported by scripts (billed and estimate apart)", unit: "USD" });
    this.tokens = meter.createCounter("loopx.tokens", { description: "Tokens reported by scripts", unit: "{token}" });
    this.tokenUsage = meter.createHistogram("gen_ai.client.token.usage", { description: "Tokens per reported call", unit: "{token}" });
  }

  /** `loopx otel test`'s probe: one point of loopx.runs.active, +1 then -1 (no run is counted). */
  probe(id: string): void {
    this.active.add(0, { "loopx.test_id": id });
  }

  runStarted(attributes: Attributes): void {
    this.active.add(1, attributes);
  }

  runEnded(attributes: Attributes, state: string): void {
    this.active.add(-1, attributes);
    this.runs.add(1, { ...attributes, "loopx.run.state": state });
  }

  iteration(attributes: Attributes, seconds: number, failure: string | undefined): void {
    this.iterations.add(1, { ...attributes, "loopx.outcome": failure ?? "ok" });
    this.duration.record(seconds, attributes);
    if (failure) this.failures.add(1, { ...attributes, "loopx.failure": failure });
  }

  receipt(model: string, provider: string | undefined, cost: { usd: number; kind: string } | undefined, tokens: Record<string, number | undefined>): void {
    const base: Attributes = { "gen_ai.request.model": model, ...(provider ? { "gen_ai.provider.name": provider } : {}) };
    if (cost) this.cost.add(cost.usd, { ...base, "loopx.cost.kind": cost.kind });
    for (const [type, count] of Object.entries(tokens)) if (count) this.tokens.add(count, { ...base, "loopx.token.type": type });
    if (tokens.input) this.tokenUsage.record(tokens.input, { ...base, "gen_ai.token.type": "input" });
    if (tokens.output) this.tokenUsage.record(tokens.output, { ...base, "gen_ai.token.type": "output" });
  }
}
