import { dirname } from "node:path";
import { BASE_ENV, BUDGET_MS, KINDS, KIND_LABEL, type Kind, MAX_N, MIN_N, ROUNDS, scriptPath } from "../setup.js";
import type { Channel } from "../channels.js";
import { type Probe, type RawCommand, type Timing, loopxRun, medianTiming, perIteration, probe, rawPerIteration, shortPath, withScript } from "../harness.js";
import { fmt, table } from "../report.js";

// ---------------------------------------------------------------------------------------------
// Phase 1: loopx vs raw, alternating rounds

export interface Cell {
  channel: Channel["name"];
  kind: Kind;
  n: number;
  raw: RawCommand;
  /** loopx's exact command, when it differs from `raw`. */
  exact?: RawCommand;
  probe: Probe;
  loopx: Timing[];
  rawTimes: Timing[];
  exactTimes: Timing[];
}

export interface CellResult {
  channel: string;
  kind: string;
  n: number;
  loopxMs: number;
  rawMs: number;
  ratio: number;
  ratioRange: [number, number];
  loopxCpuMs: number;
  rawCpuMs: number;
  exactMs?: number;
  exactRatio?: number;
  target: string;
  met: boolean;
  rawCommand: string;
  exactCommand: string;
  scriptProcess: string;
}

export function targetFor(channel: Channel["name"], kind: Kind): { label: string; check(loopx: number, raw: number): boolean } {
  if (kind === "sh") return { label: "<= 1.10 x raw + 1 ms", check: (l, r) => l <= 1.1 * r + 1 };
  if (channel === "node") return { label: "<= 1.15 x raw", check: (l, r) => l <= 1.15 * r };
  return { label: "<= 1.10 x raw", check: (l, r) => l <= 1.1 * r };
}

export function sameCommand(a: RawCommand, b: RawCommand): boolean {
  return a.cmd.join("\0") === b.cmd.join("\0");
}


export async function measureLoop(active: Channel[], notes: string[]) {
  const cells: Cell[] = [];
  const startup = new Map<string, Timing[]>();
  const usable: Channel[] = [];
  for (const channel of active) {
    let ok = true;
    for (const kind of KINDS) {
      let probed: Probe;
      try {
        probed = await probe(channel, kind);
      } catch (error) {
        notes.push(`${channel.name}/${KIND_LABEL[kind]}: loopx cannot run the probe script, skipped: ${(error as Error).message}`);
        if (kind === "sh") ok = false;
        continue;
      }
      const path = scriptPath(kind, kind);
      const cwd = dirname(path);
      const raw: RawCommand =
        kind === "sh"
          ? { cmd: ["/bin/bash", path], env: { ...BASE_ENV, ...channel.rawEnv }, cwd }
          : { cmd: channel.rawScript(path), env: { ...BASE_ENV, ...channel.rawEnv }, cwd };
      const exactCandidate: RawCommand = { cmd: withScript(probed.argv, path), env: probed.env, cwd };
      const cell: Cell = { channel: channel.name, kind, n: 0, raw, probe: probed, loopx: [], rawTimes: [], exactTimes: [] };
      if (!sameCommand(raw, exactCandidate)) cell.exact = exactCandidate;
      // Calibrate N (and warm caches such as tsx's transform cache) on the raw command.
      const estimate = await rawPerIteration(channel, raw, 3, 2);
      if (cell.exact) await rawPerIteration(channel, cell.exact, 1, 2);
      cell.n = Math.max(MIN_N, Math.min(MAX_N, Math.round(BUDGET_MS / estimate.ms)));
      cells.push(cell);
    }
    if (ok) {
      usable.push(channel);
      startup.set(channel.name, []);
    } else {
      notes.push(`${channel.name} channel skipped: loopx does not run a bash script there`);
    }
  }
  const liveCells = cells.filter((cell) => usable.some((c) => c.name === cell.channel));

  for (let round = 0; round < ROUNDS; round++) {
    process.stderr.write(`  round ${round + 1}/${ROUNDS}\n`);
    for (const channel of usable) {
      startup.get(channel.name)!.push(await loopxRun(channel, "sh", 0));
      for (const cell of liveCells.filter((c) => c.channel === channel.name)) {
        // Alternate which goes first, so drift in machine load does not favour one side.
        const steps = [
          async () => cell.loopx.push(await loopxRun(channel, cell.kind, cell.n)),
          async () => cell.rawTimes.push(await rawPerIteration(channel, cell.raw, cell.n, 1)),
          ...(cell.exact ? [async () => cell.exactTimes.push(await rawPerIteration(channel, cell.exact!, cell.n, 1))] : []),
        ];
        if (round % 2 === 1) steps.reverse();
        for (const step of steps) await step();
      }
      startup.get(channel.name)!.push(await loopxRun(channel, "sh", 0));
    }
  }

  const startupTimes = new Map([...startup].map(([name, samples]) => [name, medianTiming(samples)]));
  const results: CellResult[] = [];
  for (const cell of liveCells) {
    const channel = usable.find((c) => c.name === cell.channel)!;
    const perRound = perIteration(cell.loopx, startupTimes.get(cell.channel)!, cell.n);
    const loopx = medianTiming(perRound);
    const raw = medianTiming(cell.rawTimes);
    const ratios = perRound.map((l, i) => l.ms / cell.rawTimes[i]!.ms);
    const target = targetFor(cell.channel, cell.kind);
    const exact = cell.exact ? medianTiming(cell.exactTimes) : undefined;
    results.push({
      channel: cell.channel,
      kind: KIND_LABEL[cell.kind],
      n: cell.n,
      loopxMs: loopx.ms,
      rawMs: raw.ms,
      ratio: loopx.ms / raw.ms,
      ratioRange: [Math.min(...ratios), Math.max(...ratios)],
      loopxCpuMs: loopx.cpuMs,
      rawCpuMs: raw.cpuMs,
      exactMs: exact?.ms,
      exactRatio: exact ? loopx.ms / exact.ms : undefined,
      target: target.label,
      met: target.check(loopx.ms, raw.ms),
      rawCommand: cell.kind === "sh" ? "/bin/bash <script>" : channel.rawLabel,
      exactCommand: shortPath(withScript(cell.probe.argv, "<script>").join(" ")) + envNote(cell.probe.env),
      scriptProcess: cell.probe.parentNote,
    });
  }
  return { results, startupTimes, usable };
}

/** The environment variables loopx adds that matter to the interpreter (not LOOPX_*, which are spec'd). */
export function envNote(env: Record<string, string>): string {
  const interesting = Object.keys(env).filter((key) => !(key in BASE_ENV) && !key.startsWith("LOOPX_"));
  return interesting.length ? `  [env: ${interesting.map((key) => `${key}=${shortPath(env[key]!)}`).join(" ")}]` : "";
}

export function printLoop(loop: Awaited<ReturnType<typeof measureLoop>>): void {
  console.log("\n== Per-iteration cost: loopx run -n N vs raw interpreter start (medians of alternating rounds; run records on, the default) ==");
  console.log(
    table(
      ["channel", "script", "loopx ms/iter", "raw ms/iter", "ratio", "target", "met"],
      loop.results.map((r) => [r.channel, r.kind, fmt(r.loopxMs), fmt(r.rawMs), fmt(r.ratio, 3), r.target, r.met ? "yes" : "NO"]),
    ),
  );
  console.log("\nDetails: per-round ratio range; CPU (user+sys of every process involved) per iteration; raw' = loopx's exact command");
  console.log(
    table(
      ["channel", "script", "ratio range", "loopx CPU ms", "raw CPU ms", "CPU ratio", "raw' ms/iter", "loopx/raw'", "raw'/raw", "N"],
      loop.results.map((r) => [
        r.channel,
        r.kind,
        `${fmt(r.ratioRange[0])}-${fmt(r.ratioRange[1])}`,
        fmt(r.loopxCpuMs),
        fmt(r.rawCpuMs),
        fmt(r.loopxCpuMs / r.rawCpuMs, 3),
        r.exactMs === undefined ? "= raw" : fmt(r.exactMs),
        r.exactRatio === undefined ? "" : fmt(r.exactRatio, 3),
        r.exactMs === undefined ? "" : fmt(r.exactMs / r.rawMs, 3),
        String(r.n),
      ]),
    ),
  );
  console.log(
    "raw = the issue's physical limit; raw' = loopx's exact interpreter command and environment (as probed); both are started\n" +
      "by a minimal driver on the channel's runtime with loopx's wiring. loopx ms/iter = (wall(run -n N) - wall(run -n 0)) / N;\n" +
      `run -n 0 start-up: ${loop.usable.map((c) => `${c.name} ${fmt(loop.startupTimes.get(c.name)!.ms)} ms`).join(", ")}.`,
  );
  console.log("\nCommands:");
  for (const r of loop.results) {
    const key = `${r.channel}/${r.kind}`;
    console.log(`  ${key.padEnd(11)} raw: ${r.rawCommand}\n  ${"".padEnd(11)} loopx runs: ${r.exactCommand}  (${r.scriptProcess})`);
  }
}
