import { BUDGET_MS, HELPER_ROUNDS, MAX_N, MIN_N } from "../setup.js";
import type { Channel } from "../channels.js";
import { type Timing, describeFailure, loopxRun, medianTiming, perIteration, run } from "../harness.js";
import { fmt, table } from "../report.js";

// ---------------------------------------------------------------------------------------------
// Phase 3: what `import { output } from "loopx"` costs a TS script

export interface HelperResult {
  channel: string;
  n: number;
  withHelper: number;
  plain: number;
}

export async function measureHelperImport(usable: Channel[], startup: Map<string, Timing>): Promise<HelperResult[]> {
  const results: HelperResult[] = [];
  for (const channel of usable) {
    const probeRun = await run([...channel.loopx, "run", "-n", "1", "tsout"]);
    if (probeRun.code !== 0 || probeRun.stderr) {
      process.stderr.write(`  ${channel.name}: the output() script fails, skipped: ${describeFailure([...channel.loopx, "run", "tsout"], probeRun)}\n`);
      continue;
    }
    const estimate = (await loopxRun(channel, "tsout", 2)).ms / 2;
    const n = Math.max(MIN_N, Math.min(MAX_N, Math.round(BUDGET_MS / estimate)));
    const withHelper: Timing[] = [];
    const plain: Timing[] = [];
    for (let round = 0; round < HELPER_ROUNDS; round++) {
      const steps = [async () => withHelper.push(await loopxRun(channel, "tsout", n)), async () => plain.push(await loopxRun(channel, "tsjson", n))];
      if (round % 2 === 1) steps.reverse();
      for (const step of steps) await step();
    }
    const start = startup.get(channel.name)!;
    results.push({
      channel: channel.name,
      n,
      withHelper: medianTiming(perIteration(withHelper, start, n)).ms,
      plain: medianTiming(perIteration(plain, start, n)).ms,
    });
  }
  return results;
}

export function printHelperImport(helper: HelperResult[]): void {
  console.log('\n== TS script cost of `import { output } from "loopx"` (loopx ms/iter, medians) ==');
  console.log(
    table(
      ["channel", "", "output() via loopx", "same JSON by hand", "import cost"],
      helper.map((h) => [h.channel, "", fmt(h.withHelper), fmt(h.plain), fmt(h.withHelper - h.plain)]),
    ),
  );
}
