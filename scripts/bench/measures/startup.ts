import { BASE_ENV, EMPTY_JS, STARTUP_RUNS } from "../setup.js";
import type { Channel } from "../channels.js";
import { median, runOk } from "../harness.js";
import { fmt, table } from "../report.js";

// ---------------------------------------------------------------------------------------------
// Phase 2: start-up of `loopx version` / `loopx output` per channel

export interface StartupResult {
  channel: string;
  version: number;
  output: number;
  runtimeEmpty: number;
}

export async function measureStartup(usable: Channel[]): Promise<StartupResult[]> {
  const samples = new Map<string, { version: number[]; output: number[]; empty: number[] }>();
  for (const channel of usable) samples.set(channel.name, { version: [], output: [], empty: [] });
  for (let i = 0; i < STARTUP_RUNS; i++) {
    for (const channel of usable) {
      const s = samples.get(channel.name)!;
      s.version.push((await runOk([...channel.loopx, "version"])).ms);
      s.output.push((await runOk([...channel.loopx, "output", "--result", "x", "--goto", "y"])).ms);
      s.empty.push((await runOk([...channel.driver, EMPTY_JS], { env: { ...BASE_ENV, ...channel.rawEnv } })).ms);
    }
  }
  return usable.map((channel) => {
    const s = samples.get(channel.name)!;
    return { channel: channel.name, version: median(s.version), output: median(s.output), runtimeEmpty: median(s.empty) };
  });
}

export function printStartup(startup: StartupResult[]): void {
  console.log("\n== Start-up (median wall ms) ==");
  console.log(
    table(
      ["channel", "", "loopx version", "loopx output", "runtime, empty script", "version overhead"],
      startup.map((s) => [s.channel, "", fmt(s.version, 1), fmt(s.output, 1), fmt(s.runtimeEmpty, 1), fmt(s.version - s.runtimeEmpty, 1)]),
    ),
  );
}
