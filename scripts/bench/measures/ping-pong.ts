import { join } from "node:path";
import { BASE_ENV, BUDGET_MS, MAX_N, MIN_N, PAYLOAD_BYTES, PING_ROUNDS, PROJECT } from "../setup.js";
import type { Channel } from "../channels.js";
import { type RawCommand, type Timing, describeFailure, loopxRun, medianTiming, perIteration, rawPerIteration, run } from "../harness.js";
import { fmt, table } from "../report.js";

// ---------------------------------------------------------------------------------------------
// Phase 4: 1 MB goto ping-pong

export interface PingResult {
  channel: string;
  n: number;
  loopx1m: number;
  loopx1b: number;
  raw1m: number;
  raw1b: number;
}

export async function measurePingPong(usable: Channel[], startup: Map<string, Timing>): Promise<PingResult[]> {
  const results: PingResult[] = [];
  for (const channel of usable) {
    const samples = { loopx1m: [] as Timing[], loopx1b: [] as Timing[], raw1m: [] as Timing[], raw1b: [] as Timing[] };
    const rawFor = (bytes: number): RawCommand => {
      const workflow = bytes === 1 ? "ping1b" : "ping1m";
      return {
        cmd: ["/bin/bash", join(PROJECT, ".loopx", workflow, "ping.sh")],
        env: { ...BASE_ENV, ...channel.rawEnv },
        cwd: join(PROJECT, ".loopx", workflow),
        stdinFile: join(PROJECT, `payload-${bytes}`),
      };
    };
    // The result must arrive intact: index -> ping -> pong -> check, which compares it with the payload.
    for (const workflow of ["check1m", "check1b"]) {
      const command = [...channel.loopx, "run", "-n", "4", workflow];
      const result = await run(command);
      if (result.code !== 0 || result.stderr) throw new Error(describeFailure(command, result));
    }
    const estimate = await rawPerIteration(channel, rawFor(PAYLOAD_BYTES), 3, 2);
    const n = Math.max(MIN_N, Math.min(MAX_N, Math.round(BUDGET_MS / estimate.ms)));
    for (let round = 0; round < PING_ROUNDS; round++) {
      const steps = [
        async () => samples.loopx1m.push(await loopxRun(channel, "ping1m", n)),
        async () => samples.raw1m.push(await rawPerIteration(channel, rawFor(PAYLOAD_BYTES), n, 1)),
        async () => samples.loopx1b.push(await loopxRun(channel, "ping1b", n)),
        async () => samples.raw1b.push(await rawPerIteration(channel, rawFor(1), n, 1)),
      ];
      if (round % 2 === 1) steps.reverse();
      for (const step of steps) await step();
    }
    const start = startup.get(channel.name)!;
    results.push({
      channel: channel.name,
      n,
      loopx1m: medianTiming(perIteration(samples.loopx1m, start, n)).ms,
      loopx1b: medianTiming(perIteration(samples.loopx1b, start, n)).ms,
      raw1m: medianTiming(samples.raw1m).ms,
      raw1b: medianTiming(samples.raw1b).ms,
    });
  }
  return results;
}

export function printPingPong(ping: PingResult[]): void {
  console.log("\n== Goto ping-pong between two bash scripts, result through stdin (medians) ==");
  console.log(
    table(
      ["channel", "", "1 MB iter/s", "1 MB ms/iter", "1 B ms/iter", "hand-off ms", "<5 ms", "raw 1 MB", "raw 1 B", "raw hand-off", "loopx share"],
      ping.map((p) => {
        const handoff = p.loopx1m - p.loopx1b;
        return [
          p.channel,
          "",
          fmt(1000 / p.loopx1m, 0),
          fmt(p.loopx1m),
          fmt(p.loopx1b),
          fmt(handoff),
          handoff < 5 ? "yes" : "NO",
          fmt(p.raw1m),
          fmt(p.raw1b),
          fmt(p.raw1m - p.raw1b),
          fmt(handoff - (p.raw1m - p.raw1b)),
        ];
      }),
    ),
  );
  console.log(
    "hand-off = loopx 1 MB - loopx 1 B per iteration (bash's own `cat` of 1 MB included); raw = the same script started by the\n" +
      "driver with the payload as stdin; loopx share = hand-off - raw hand-off.",
  );
}
