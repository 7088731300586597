/**
 * The dashboard, `loopx runs serve` under node with Debian's Chromium driven by
 * playwright-core:
 * - a 100,000-iteration record: time from navigation to the run's page being interactive (chart
 *   and first table page drawn: body[data-ready]), cold (the server indexes the record on first
 *   open) and warm; the server's RSS before and after, and its peak (VmHWM). Target: < 1 s.
 * - live latency: an event appended to a running run's record (as a loop writes it) until the open
 *   runs page shows it (a MutationObserver in the page notes the time). Target: < 500 ms.
 *
 * Run alone: `node --import tsx/esm scripts/bench/measures/dashboard.ts [--quick]` (dist/ built),
 * or `npm run bench -- --only dashboard`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { syntheticId, writeSyntheticRecord } from "../../../test/fixtures/dashboard/records.js";
import { ensureChromium } from "../../chromium.mjs";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const DIST_BIN = join(ROOT, "dist", "bin.js");
const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

export interface DashboardResult {
  iterations: number;
  recordMb: number;
  coldOpenMs: number;
  /** The server's CPU time for the cold open (indexing the record): what load on the machine does not inflate. */
  coldServerCpuMs: number;
  warmOpenMs: number;
  rssBeforeMb: number;
  rssAfterMb: number;
  peakMb: number;
  liveSamples: number;
  liveMedianMs: number;
  liveMaxMs: number;
  met: { open: boolean; live: boolean };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

function memoryMb(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? 0);
  return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
}

/** CPU time (user + system) of process `pid` so far, in ms (USER_HZ 100). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function startServer(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [DIST_BIN, "runs", "serve", "--port", "0"], { env, stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      const line = /^(http:\S+)\n/.exec(out);
      if (line) resolve({ child, url: line[1]! });
    });
    child.on("close", (code) => reject(new Error(`loopx runs serve exited with ${code}`)));
  });
}

export async function benchDashboard(options: { quick?: boolean } = {}): Promise<DashboardResult> {
  const iterations = 100_000;
  const samples = options.quick ? 10 : 30;
  const work = realpathSync(mkdtempSync(join(tmpdir(), "loopx-bench-dashboard-")));
  const state = join(work, "state");
  const env = { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: work, XDG_STATE_HOME: state, LANG: "C.UTF-8" };
  const big = syntheticId("benchbig");
  const bigPath = writeSyntheticRecord(state, { id: big, iterations, targets: ["big:index", "big:check"], failEvery: 997 });
  const liveId = syntheticId("benchlive");
  const livePath = writeSyntheticRecord(state, { id: liveId, iterations: 1, ended: false, pid: process.pid, startMs: Date.now() - 1000 });
  const { child, url } = await startServer(env);
  const browser = await chromium.launchPersistentContext(join(work, "profile"), { executablePath: ensureChromium(), headless: true, args: FLAGS });
  try {
    const page = await browser.newPage();
    const base = new URL(url);
    const before = memoryMb(child.pid!);
    const open = async () => {
      const t0 = performance.now();
      await page.goto(`${base.origin}/runs/${big}${base.search}`);
      await page.waitForSelector("body[data-ready='1']", { timeout: 30_000 });
      return performance.now() - t0;
    };
    // The browser's own first navigation (renderer start-up) is not the record's cost.
    await page.goto(url);
    await page.waitForSelector("body[data-ready='1']");
    const cpu = cpuMs(child.pid!);
    const coldOpenMs = await open();
    const coldServerCpuMs = cpuMs(child.pid!) - cpu;
    const warm: number[] = [];
    for (let i = 0; i < 5; i++) warm.push(await open());
    const after = memoryMb(child.pid!);

    // Live latency, measured in the page.
    await page.goto(url);
    await page.waitForSelector(`tr[data-run="${liveId}"]`);
    await page.evaluate((id) => {
      const seen: Record<number, number> = {};
      (window as unknown as { seen: Record<number, number> }).seen = seen;
      new MutationObserver(() => {
        const n = Number(document.querySelector(`tr[data-run="${id}"]`)?.getAttribute("data-iterations"));
        if (n && !seen[n]) seen[n] = Date.now();
      }).observe(document.getElementById("runs")!, { subtree: true, childList: true, attributes: true });
    }, liveId);
    const latencies: number[] = [];
    for (let n = 2; n < 2 + samples; n++) {
      const written = Date.now();
      appendFileSync(livePath, `${JSON.stringify({ v: 1, run: liveId, type: "iteration.start", time: new Date(written).toISOString(), n, target: "synthetic:index" })}\n`);
      await page.waitForFunction((n) => (window as unknown as { seen: Record<number, number> }).seen[n] !== undefined, n, { timeout: 10_000 });
      latencies.push((await page.evaluate((n) => (window as unknown as { seen: Record<number, number> }).seen[n]!, n)) - written);
      await new Promise((resolve) => setTimeout(resolve, 150 + Math.random() * 200));
    }
    const warmOpenMs = median(warm);
    const liveMedianMs = median(latencies);
    return {
      iterations,
      recordMb: readFileSync(bigPath).length / 1024 / 1024,
      coldOpenMs,
      coldServerCpuMs,
      warmOpenMs,
      rssBeforeMb: before.rss,
      rssAfterMb: after.rss,
      peakMb: after.peak,
      liveSamples: latencies.length,
      liveMedianMs,
      liveMaxMs: Math.max(...latencies),
      met: { open: coldOpenMs < 1000 && warmOpenMs < 1000, live: Math.max(...latencies) < 500 },
    };
  } finally {
    await browser.close();
    child.kill("SIGTERM");
    rmSync(work, { recursive: true, force: true });
  }
}

export function formatDashboard(r: DashboardResult): string {
  const f = (n: number) => n.toFixed(0);
  return (
    `== dashboard (loopx runs serve under node, Chromium) ==\n` +
    `  ${r.iterations.toLocaleString("en")}-iteration record (${r.recordMb.toFixed(1)} MB): page interactive in ${f(r.coldOpenMs)} ms cold (server CPU ${f(r.coldServerCpuMs)} ms), ${f(r.warmOpenMs)} ms warm (< 1 s: ${r.met.open ? "yes" : "NO"})\n` +
    `  server RSS ${f(r.rssBeforeMb)} MB before, ${f(r.rssAfterMb)} MB after 6 opens, peak ${f(r.peakMb)} MB\n` +
    `  live event to open page: median ${f(r.liveMedianMs)} ms, max ${f(r.liveMaxMs)} ms over ${r.liveSamples} events (< 500 ms: ${r.met.live ? "yes" : "NO"})`
  );
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (!existsSync(DIST_BIN)) {
    console.error(`bench: ${DIST_BIN} is missing: build first (npm run build)`);
    process.exit(1);
  }
  console.log(formatDashboard(await benchDashboard({ quick: process.argv.includes("--quick") })));
}
