/**
 * What receipts cost, in this process against dist/: a script's `receipt()` (one
 * checked event appended to the run's record, and to the run's receipts file when a budget or
 * the progress line reads them); the run's live reader after each script, with one receipt and
 * with none; and a bash script's `loopx receipt` (a process start, paid by the script). A run
 * with neither a budget nor a progress line has no live reader at all: nothing per iteration.
 * Target: a receipt costs ≤ 0.2 ms per iteration (send + read).
 *
 * Run alone: `node --import tsx/esm scripts/bench/measures/receipts.ts [--quick]` (dist/ built).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { BUN, DIST_BIN, ROOT } from "../setup.js";

export interface ReceiptsResult {
  iterations: number;
  /** receipt() appending to the record only, ms per call. */
  sendRecordMs: number;
  /** receipt() appending to the record and the receipts file (a budget), ms per call. */
  sendBothMs: number;
  /** The live reader after a script that sent one receipt, ms. */
  readOneMs: number;
  /** The live reader after a script that sent none, ms (only a run with a budget or progress pays it). */
  readNoneMs: number;
  /** `bun dist/bin.js receipt …` from a script, ms wall per call (the script's own cost). */
  cliMs: number;
  met: boolean;
}

const dist = (path: string) => pathToFileURL(join(ROOT, "dist", path)).href;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function benchReceipts(options: { quick?: boolean } = {}): Promise<ReceiptsResult> {
  const iterations = options.quick ? 2000 : 20_000;
  const { receipt } = (await import(dist("receipts/send.js"))) as typeof import("../../../src/receipts/send.js");
  const { LiveReceipts } = (await import(dist("receipts/part.js"))) as typeof import("../../../src/receipts/part.js");
  const work = mkdtempSync(join(tmpdir(), "loopx-bench-receipts-"));
  try {
    const run = "0000benchrcpt0";
    const record = join(work, `${run}.jsonl`);
    writeFileSync(record, "");
    mkdirSync(join(work, "tmp"));
    const live = new LiveReceipts(() => join(work, "tmp"), { maxCost: 1e9 });
    const controls = { id: run, cancel: async () => {}, warn: () => {}, emit: () => {}, runEnv: {}, progress: () => ({ iterations: 0, durationMs: 0 }), scriptExited: () => false };
    const vars = live.begin(controls) ?? {};
    const given = { cost: { usd: 0.0123, kind: "billed" }, tokens: { input: 1200, output: 340, cacheRead: 5000 }, model: "claude-sonnet-4-5" };
    const env = { LOOPX_RUN_ID: run, LOOPX_RUN_RECORD: record, LOOPX_ITERATION: "1", LOOPX_WORKFLOW: "w" };
    const time = (body: () => void, count: number) => {
      const start = performance.now();
      for (let i = 0; i < count; i++) body();
      return (performance.now() - start) / count;
    };
    time(() => receipt(given, env), Math.min(iterations, 1000)); // warm-up: the first calls compile
    const sendRecordMs = time(() => receipt(given, env), iterations);
    const both = { ...env, ...vars };
    let readOneMs = 0;
    const sendBothMs = time(() => receipt(given, both), iterations);
    // One receipt, then the reader's turn: as after each script of a run with a budget.
    const rounds = Math.min(iterations, 5000);
    for (let i = 0; i < rounds; i++) {
      receipt(given, both);
      const start = performance.now();
      live.onEvent({ type: "iteration.end" });
      readOneMs += performance.now() - start;
    }
    readOneMs /= rounds;
    const readNoneMs = time(() => live.onEvent({ type: "iteration.end" }), iterations);
    live.end();
    const cli: number[] = [];
    for (let i = 0; i < (options.quick ? 5 : 15); i++) {
      const start = performance.now();
      const result = spawnSync(BUN, [DIST_BIN, "receipt", "--cost", "0.0123", "--kind", "billed", "--input", "1200"], { env: { PATH: process.env.PATH ?? "", ...env } });
      if (result.status !== 0) throw new Error(`loopx receipt exited ${result.status}: ${result.stderr}`);
      cli.push(performance.now() - start);
    }
    return { iterations, sendRecordMs, sendBothMs, readOneMs, readNoneMs, cliMs: median(cli), met: sendBothMs + readOneMs <= 0.2 };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export function formatReceipts(r: ReceiptsResult): string {
  const us = (ms: number) => `${(ms * 1000).toFixed(1)} µs`;
  return (
    `== receipts (in-process, ${process.versions.bun ? "bun" : "node"}, ${r.iterations} calls) ==\n` +
    `  receipt(): record only ${us(r.sendRecordMs)}, record + receipts file (a budget) ${us(r.sendBothMs)}\n` +
    `  the run's live reader after a script: one receipt ${us(r.readOneMs)}, none ${us(r.readNoneMs)} (no budget, no progress line: no reader)\n` +
    `  per iteration with one receipt and a budget: ${us(r.sendBothMs + r.readOneMs)} (≤ 0.2 ms: ${r.met ? "yes" : "NO"})\n` +
    `  a bash script's \`loopx receipt\` (bun, a process start, the script's own time): ${r.cliMs.toFixed(1)} ms`
  );
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (!existsSync(DIST_BIN)) {
    console.error(`bench: ${DIST_BIN} is missing: build first (npm run build)`);
    process.exit(1);
  }
  console.log(formatReceipts(await benchReceipts({ quick: process.argv.includes("--quick") })));
}
