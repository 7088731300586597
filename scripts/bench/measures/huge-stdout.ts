import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Channel } from "../channels.js";
import { withBefore } from "../before.js";
import { fmt, table } from "../report.js";
import { WORK } from "../setup.js";

// ---------------------------------------------------------------------------------------------
// Peak RSS of loopx while one script writes a huge stdout: memory, not time, is
// what this watches. Target: at most ~1.2× the output's size (loopx's own ~50 MB included) on every
// channel — the output is kept in one buffer whose pages are taken as they are written, and never
// decoded by the CLI (runtime/stdout-capture.ts). Two such iterations in a row must cost about the
// same (the first one's bytes are let go before the second is read). The same size on stderr,
// which loopx relays without keeping it, is measured beside it: it must stay near loopx's own size.
// A structured stdout of that size — `{"goto":"sink","result":"<lines, \n escaped>"}`, its result
// piped to the next script — is read without a full decoded copy (core/json-fields.ts): target
// 1.5× its size, measured for the --before build too in the same round.

export interface HugeStdoutResult {
  channel: string;
  /** Where the script writes: its stdout (kept by loopx), a structured stdout (its result piped on), or its stderr (relayed). */
  stream: "stdout" | "structured" | "stderr";
  build: "now" | "before";
  /** Iterations of the run (`-n`), each writing that much. */
  iterations: number;
  stdoutMb: number;
  peakRssMb: number;
  /** Peak RSS over the output's size. */
  ratio: number;
  /** Whether one iteration's stdout is within the target (always true for the other rows, which have none). */
  met: boolean;
  exitCode: number | null;
  seconds: number;
}

/** The target for a stdout: peak RSS at most this many times its size. */
const TARGET_RATIO = 1.2;
/** The target for a structured stdout whose result goes to the next script's stdin. */
const STRUCTURED_TARGET_RATIO = 1.5;

/** A line of agent output, as JSON writes it (its newline escaped), and how many fill `mb` MB. */
const LINE = "an agent wrote this line of its answer, with a tab\\t and a quote \\\" in it\\n";

/** One channel at a time (each holds hundreds of MB): `mb` MB of "a" on stdout (one iteration, then two), then on stderr. */
export function measureHugeStdout(usable: Channel[], mb: number): HugeStdoutResult[] {
  const project = join(WORK, "huge-stdout");
  for (const stream of ["stdout", "stderr"] as const) {
    mkdirSync(join(project, ".loopx", stream), { recursive: true });
    const redirect = stream === "stderr" ? " >&2" : "";
    writeFileSync(join(project, ".loopx", stream, "index.sh"), `#!/bin/bash\nhead -c ${mb * 1_000_000} /dev/zero | tr '\\0' a${redirect}\n`, { mode: 0o755 });
  }
  mkdirSync(join(project, ".loopx", "structured"), { recursive: true });
  const lines = Math.round((mb * 1_000_000) / LINE.length);
  writeFileSync(join(project, ".loopx", "structured", "index.sh"), `#!/bin/bash\nprintf '{"goto":"sink","result":"'\nyes '${LINE}' | head -n ${lines} | tr -d '\\n'\nprintf '"}'\n`, { mode: 0o755 });
  writeFileSync(join(project, ".loopx", "structured", "sink.sh"), `#!/bin/bash\ncat > /dev/null\n"$LOOPX_BIN" output --stop\n`, { mode: 0o755 });
  const runs = [
    ["stdout", 1],
    ["stdout", 2],
    ["structured", 2],
    ["stderr", 1],
  ] as const;
  return withBefore(usable).flatMap(({ build, channel }) =>
    runs.filter(([stream]) => build === "now" || stream === "structured").map(([stream, iterations]) => {
      const started = performance.now();
      // GNU time's %M: the peak resident set of loopx (its children are not counted: it waits only
      // for loopx), written to a file: the script's stderr goes to /dev/null.
      const timeFile = join(project, "time");
      const timed = spawnSync("/usr/bin/time", ["-o", timeFile, "-f", "%M", ...channel.loopx, "run", "-n", String(iterations), stream], { cwd: project, env: { ...process.env, LOOPX_RECORD: "0" }, stdio: "ignore" });
      const peakRssMb = Number(readFileSync(timeFile, "utf8").trim().split("\n").pop()) / 1024;
      const ratio = peakRssMb / mb;
      const met = stream === "structured" ? ratio <= STRUCTURED_TARGET_RATIO : stream === "stderr" || iterations > 1 || ratio <= TARGET_RATIO;
      return { channel: channel.name, build, stream, iterations, stdoutMb: mb, peakRssMb, ratio, met, exitCode: timed.status, seconds: (performance.now() - started) / 1000 };
    }),
  );
}

export function printHugeStdout(results: HugeStdoutResult[]): void {
  console.log(
    `\nhuge output: peak RSS of loopx while one script writes it (GNU time %M); target for one stdout <= ${TARGET_RATIO} x its size (two in a row: about the same); ` +
      `for a structured one whose result goes to the next script's stdin <= ${STRUCTURED_TARGET_RATIO} x`,
  );
  console.log(
    table(
      ["channel", "build", "stream", "size", "peak RSS", "× size", "target", "met", "exit", "took"],
      results.map((r) => {
        const target = r.stream === "structured" ? STRUCTURED_TARGET_RATIO : r.stream === "stdout" && r.iterations === 1 ? TARGET_RATIO : undefined;
        const size = r.stream === "structured" ? `${r.stdoutMb} MB, piped on` : `${r.iterations > 1 ? `${r.iterations} × ` : ""}${r.stdoutMb} MB`;
        return [r.channel, r.build, r.stream, size, `${fmt(r.peakRssMb, 0)} MB`, fmt(r.ratio, 2), target === undefined ? "" : `<= ${target}`, target === undefined ? "" : r.met ? "yes" : "NO", String(r.exitCode), `${fmt(r.seconds, 1)} s`];
      }),
    ),
  );
}
