import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Channel } from "../channels.js";
import { fmt, table } from "../report.js";
import { WORK } from "../setup.js";

// ---------------------------------------------------------------------------------------------
// Peak RSS of loopx while one script writes a huge stdout (issue 35 item 5): memory, not time,
// is what this watches (the capture must stay near the output's own size).

export interface HugeStdoutResult {
  channel: string;
  stdoutMb: number;
  peakRssMb: number;
  /** Peak RSS over the output's size. */
  ratio: number;
  exitCode: number | null;
  seconds: number;
}

/** One channel at a time (each holds hundreds of MB); `mb` MB of "a" on stdout, then 300 MB of stderr for contrast is left out. */
export function measureHugeStdout(usable: Channel[], mb: number): HugeStdoutResult[] {
  const project = join(WORK, "huge-stdout");
  mkdirSync(join(project, ".loopx", "huge"), { recursive: true });
  writeFileSync(join(project, ".loopx", "huge", "index.sh"), `#!/bin/bash\nhead -c ${mb * 1_000_000} /dev/zero | tr '\\0' a\n`, { mode: 0o755 });
  return usable.map((channel) => {
    const started = performance.now();
    // GNU time's %M: the peak resident set of loopx (its children are not counted: it waits only for loopx).
    const timed = spawnSync("/usr/bin/time", ["-f", "%M", ...channel.loopx, "run", "-n", "1", "huge"], { cwd: project, encoding: "utf8", env: { ...process.env, LOOPX_RECORD: "0" }, maxBuffer: 1 << 20 });
    const peakKb = Number(timed.stderr.trim().split("\n").pop());
    const peakRssMb = peakKb / 1024;
    return { channel: channel.name, stdoutMb: mb, peakRssMb, ratio: peakRssMb / mb, exitCode: timed.status, seconds: (performance.now() - started) / 1000 };
  });
}

export function printHugeStdout(results: HugeStdoutResult[]): void {
  console.log("\nhuge stdout: peak RSS of loopx while one script writes it (GNU time %M)");
  console.log(table(["channel", "stdout", "peak RSS", "× stdout", "exit", "took"], results.map((r) => [r.channel, `${r.stdoutMb} MB`, `${fmt(r.peakRssMb, 0)} MB`, fmt(r.ratio, 2), String(r.exitCode), `${fmt(r.seconds, 1)} s`])));
}
