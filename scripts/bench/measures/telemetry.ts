/**
 * What OpenTelemetry costs: the same no-op bash loop under `bun dist/bin.js run -n N`
 * with telemetry off and on (LOOPX_OTEL=1, exporting to a local OTLP/HTTP receiver that answers at
 * once), alternated in rounds; reports the growth of per-iteration CPU and wall time (medians).
 * Target: ≤ 0.3 ms per iteration on. Also: the SDK's load (the first `begin`), and how long loopx
 * takes to exit after `run.end` with the collector down (connection refused) and hanging (never
 * answers): target ≤ 2 s.
 *
 * Run as part of `npm run bench` (`--only telemetry`).
 */
import { readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { median, run } from "../harness.js";
import { BUN, DIST_BIN, noopBashProject } from "../setup.js";

export interface TelemetryResult {
  n: number;
  rounds: number;
  offMsPerIteration: number;
  onMsPerIteration: number;
  cpuGrowthMs: number;
  met: boolean;
  /** Whole run of -n 1, on minus off: what a run pays once (loading the SDK, the last export). */
  perRunMs: number;
  perRunCpuMs: number;
  exitAfterEndDownMs: number;
  exitAfterEndHangMs: number;
}

async function receiver(mode: "ok" | "hang"): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    request.resume();
    if (mode === "hang") return;
    request.on("end", () => response.end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

export async function benchTelemetry(options: { quick?: boolean } = {}): Promise<TelemetryResult> {
  const n = options.quick ? 150 : 400;
  const rounds = options.quick ? 4 : 7;
  const { work, project } = noopBashProject("loopx-bench-telemetry-");
  const collector = await receiver("ok");
  const hanging = await receiver("hang");
  try {
    const env = { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: join(work, "home"), XDG_STATE_HOME: join(work, "state"), LANG: "C.UTF-8", LOOPX_RECORD: "0" };
    const on = { LOOPX_OTEL: "1", OTEL_EXPORTER_OTLP_ENDPOINT: collector.url };
    const once = async (count: number, extra: Record<string, string>) => {
      const result = await run([BUN, DIST_BIN, "run", "-n", String(count), "noop"], { cwd: project, env: { ...env, ...extra } });
      if (result.code !== 0) throw new Error(`loopx exited with ${result.code}: ${result.stderr}`);
      return result;
    };
    /** ms from run.end (its time in the --log) to loopx's exit. */
    const exitDelay = async (endpoint: string) => {
      const log = join(work, `log-${Date.now()}.jsonl`);
      const started = Date.now();
      const result = await run([BUN, DIST_BIN, "run", "-n", "1", "--log", log, "noop"], { cwd: project, env: { ...env, LOOPX_OTEL: "1", OTEL_EXPORTER_OTLP_ENDPOINT: endpoint } });
      const exited = started + result.ms;
      const end = JSON.parse(readFileSync(log, "utf8").trim().split("\n").at(-1)!) as { time: string };
      return exited - Date.parse(end.time);
    };
    const timed: Record<"on" | "off", Array<{ ms: number; cpuMs: number }>> = { on: [], off: [] };
    await once(n, {});
    for (let round = 0; round < rounds; round++) {
      const pair = [async () => timed.off.push(await once(n, {})), async () => timed.on.push(await once(n, on))];
      if (round % 2) pair.reverse();
      for (const measure of pair) await measure();
    }
    const single: Record<"on" | "off", number[]> = { on: [], off: [] };
    const singleCpu: Record<"on" | "off", number[]> = { on: [], off: [] };
    for (let round = 0; round < rounds; round++) {
      const off1 = await once(1, {});
      const on1 = await once(1, on);
      single.off.push(off1.ms);
      single.on.push(on1.ms);
      singleCpu.off.push(off1.cpuMs);
      singleCpu.on.push(on1.cpuMs);
    }
    // Per iteration: the growth of a long run beyond what a one-iteration run grows (the SDK's
    // load and the last export are paid once per run, and reported apart).
    const perRunCpu = median(singleCpu.on) - median(singleCpu.off);
    const cpuGrowthMs = (median(timed.on.map((r) => r.cpuMs)) - median(timed.off.map((r) => r.cpuMs)) - perRunCpu) / (n - 1);
    return {
      n,
      rounds,
      offMsPerIteration: median(timed.off.map((r) => r.ms)) / n,
      onMsPerIteration: median(timed.on.map((r) => r.ms)) / n,
      cpuGrowthMs,
      met: cpuGrowthMs <= 0.3,
      perRunMs: median(single.on) - median(single.off),
      perRunCpuMs: perRunCpu,
      exitAfterEndDownMs: await exitDelay("http://127.0.0.1:9"),
      exitAfterEndHangMs: await exitDelay(hanging.url),
    };
  } finally {
    await collector.close();
    await hanging.close();
    rmSync(work, { recursive: true, force: true });
  }
}

export function formatTelemetry(r: TelemetryResult): string {
  return (
    `== OpenTelemetry: no-op bash loop under bun, off vs on (LOOPX_OTEL=1, local collector), ${r.rounds} rounds of -n ${r.n} ==\n` +
    `  ms/iter off ${r.offMsPerIteration.toFixed(3)}  on ${r.onMsPerIteration.toFixed(3)}  ` +
    `CPU growth ${r.cpuGrowthMs.toFixed(3)} ms per iteration (≤ 0.3 ms: ${r.met ? "yes" : "NO"})\n` +
    `  per run (SDK load + last export, -n 1 on minus off): ${r.perRunMs.toFixed(0)} ms wall, ${r.perRunCpuMs.toFixed(0)} ms CPU; ` +
    `exit after run.end with the collector down ${r.exitAfterEndDownMs.toFixed(0)} ms, hanging ${r.exitAfterEndHangMs.toFixed(0)} ms (≤ 2000 ms)`
  );
}
