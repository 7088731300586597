/**
 * What the run control channel costs: the same no-op bash loop under `bun dist/bin.js
 * run -n N`, with the channel on (the default) and off (LOOPX_CONTROL=0), side by side — alternated
 * in rounds on the same machine at the same time; reports the growth of the per-iteration wall and
 * CPU time (medians). Target: nothing measurable — CPU growth < 0.05 ms per iteration (wall time
 * on a loaded machine is noise of a few tenths of a ms either way). The channel's per-run cost (the socket's listen and removal) is included, spread over N,
 * and also timed alone; the part's per-iteration work (its gate and two events) is timed in-process.
 *
 * Run as part of `npm run bench` (`--only control`).
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { median, run } from "../harness.js";
import { BUN, DIST_BIN, ROOT, noopBashProject } from "../setup.js";

export interface ControlResult {
  n: number;
  rounds: number;
  offMsPerIteration: number;
  onMsPerIteration: number;
  wallGrowthMs: number;
  cpuGrowthMs: number;
  met: boolean;
  /** The part's work per iteration (beforeScript + iteration.start + iteration.end), in-process, in ns. */
  partNanosPerIteration: number;
  /** Opening and closing the channel (listen on the socket, close, unlink), in-process. */
  openCloseMs: number;
}

type ControlModule = typeof import("../../../src/control/part.js");

async function partCosts(stateHome: string, iterations: number): Promise<{ perIteration: number; openClose: number }> {
  const { controlPart } = (await import(pathToFileURL(join(ROOT, "dist", "control", "part.js")).href)) as ControlModule;
  const controls = { id: "0000benchcontro", cancel: async () => {}, warn: () => {}, emit: () => {}, runEnv: {}, progress: () => ({ iterations: 0, durationMs: 0 }), scriptExited: () => false };
  const env = { XDG_STATE_HOME: stateHome, HOME: stateHome };
  const opens: number[] = [];
  for (let i = 0; i < 5; i++) {
    const part = controlPart(env);
    const start = performance.now();
    await part.begin!(controls);
    await part.end!({ reason: "limit", exitCode: 0 });
    opens.push(performance.now() - start);
  }
  const part = controlPart(env);
  await part.begin!(controls);
  // The events and the gate's argument are made once: what is timed is the part's own work.
  const base = { v: 1 as const, run: controls.id, time: new Date().toISOString(), target: "noop:index", n: 1 };
  const started = { ...base, type: "iteration.start" as const };
  const ended = { ...base, type: "iteration.end" as const, durationMs: 1, exitCode: 0, signal: null, stdoutBytes: 0 };
  const next = { target: "noop:index", n: 1, stdin: undefined };
  const start = performance.now();
  for (let n = 1; n <= iterations; n++) {
    part.beforeScript!(next, controls);
    part.onEvent!(started);
    part.onEvent!(ended);
  }
  const perIteration = ((performance.now() - start) / iterations) * 1e6;
  await part.end!({ reason: "limit", exitCode: 0 });
  return { perIteration, openClose: median(opens) };
}

export async function benchControl(options: { quick?: boolean } = {}): Promise<ControlResult> {
  const n = options.quick ? 150 : 400;
  const rounds = options.quick ? 4 : 7;
  const { work, project } = noopBashProject("loopx-bench-control-");
  try {
    const env = { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: join(work, "home"), XDG_STATE_HOME: join(work, "state"), LANG: "C.UTF-8", LOOPX_RECORD: "0" };
    const once = async (extra: Record<string, string>) => {
      const result = await run([BUN, DIST_BIN, "run", "-n", String(n), "noop"], { cwd: project, env: { ...env, ...extra } });
      if (result.code !== 0 || result.stderr !== "") throw new Error(`loopx exited with ${result.code}: ${result.stderr}`);
      return result;
    };
    const on: Array<{ ms: number; cpuMs: number }> = [];
    const off: Array<{ ms: number; cpuMs: number }> = [];
    await once({}); // warm the file cache
    for (let round = 0; round < rounds; round++) {
      // Alternate which goes first, so a slow moment of the machine is shared fairly.
      const pair = [async () => off.push(await once({ LOOPX_CONTROL: "0" })), async () => on.push(await once({}))];
      if (round % 2) pair.reverse();
      for (const measure of pair) await measure();
    }
    const offMs = median(off.map((r) => r.ms)) / n;
    const onMs = median(on.map((r) => r.ms)) / n;
    const cpuGrowthMs = (median(on.map((r) => r.cpuMs)) - median(off.map((r) => r.cpuMs))) / n;
    const costs = await partCosts(join(work, "part"), options.quick ? 20_000 : 200_000);
    return {
      n,
      rounds,
      offMsPerIteration: offMs,
      onMsPerIteration: onMs,
      wallGrowthMs: onMs - offMs,
      cpuGrowthMs,
      // CPU time: far less sensitive to other load on the machine than wall time.
      met: cpuGrowthMs < 0.05,
      partNanosPerIteration: costs.perIteration,
      openCloseMs: costs.openClose,
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export function formatControl(r: ControlResult): string {
  return (
    `== run control channel: no-op bash loop under bun, channel on vs off (LOOPX_CONTROL=0), ${r.rounds} rounds of -n ${r.n} ==\n` +
    `  ms/iter off ${r.offMsPerIteration.toFixed(3)}  on ${r.onMsPerIteration.toFixed(3)}  ` +
    `growth ${r.wallGrowthMs.toFixed(3)} ms wall, ${r.cpuGrowthMs.toFixed(3)} ms CPU  (CPU < 0.05 ms: ${r.met ? "yes" : "NO"})\n` +
    `  the part alone (in-process, ${process.versions.bun ? "bun" : "node"}): ${r.partNanosPerIteration.toFixed(0)} ns per iteration ` +
    `(gate + two events); opening and closing the channel: ${r.openCloseMs.toFixed(2)} ms per run`
  );
}
