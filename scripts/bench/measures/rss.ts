import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { RSS_FIRST, RSS_ITERATIONS, rssFile } from "../setup.js";
import type { Channel } from "../channels.js";
import { describeFailure, run, shortPath, sleep } from "../harness.js";
import { fmt, table } from "../report.js";

// ---------------------------------------------------------------------------------------------
// Phase 5: RSS and open fds over a long bash loop

export interface RssResult {
  channel: string;
  iterations: number;
  rssFirstKb: number;
  rssLastKb: number;
  fdsFirst: number;
  fdsLast: number;
  msPerIteration: number;
}

export function procStatus(pid: number): { rssKb: number; fds: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const rssKb = Number(status.match(/^VmRSS:\s+(\d+)\s+kB/m)?.[1] ?? NaN);
  return { rssKb, fds: readdirSync(`/proc/${pid}/fd`).length };
}

export async function waitForFile(path: string, timeoutMs: number, alive: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(path)) {
    if (!alive()) throw new Error(`loopx exited before ${shortPath(path)} appeared`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${shortPath(path)}`);
    await sleep(10);
  }
}

/**
 * One long loop per channel, all channels at once (RSS and fds do not depend on timing much, and
 * 10,000 iterations per channel one after the other would dominate the bench's run time).
 */
export async function measureRss(usable: Channel[]): Promise<RssResult[]> {
  return Promise.all(usable.map((channel) => measureRssOne(channel)));
}

export async function measureRssOne(channel: Channel): Promise<RssResult> {
  const file = (name: string) => rssFile(channel.name, name);
  for (const name of ["counter", `at-${RSS_FIRST}`, `release-${RSS_FIRST}`, `at-${RSS_ITERATIONS}`, `release-${RSS_ITERATIONS}`]) {
    rmSync(file(name), { force: true });
  }
  let pid = -1;
  let finished = false;
  const command = [...channel.loopx, "run", "-n", String(RSS_ITERATIONS), `rss-${channel.name}`];
  const running = run(command, { timeoutMs: 60_000 + RSS_ITERATIONS * 50, onSpawn: (p) => (pid = p) }).finally(() => (finished = true));
  const alive = () => !finished;
  try {
    await waitForFile(file(`at-${RSS_FIRST}`), 120_000, alive);
    const first = procStatus(pid);
    const t0 = performance.now();
    writeFileSync(file(`release-${RSS_FIRST}`), "");
    await waitForFile(file(`at-${RSS_ITERATIONS}`), 60_000 + RSS_ITERATIONS * 40, alive);
    const elapsed = performance.now() - t0;
    const last = procStatus(pid);
    writeFileSync(file(`release-${RSS_ITERATIONS}`), "");
    const result = await running;
    if (result.code !== 0) throw new Error(describeFailure(command, result));
    return {
      channel: channel.name,
      iterations: RSS_ITERATIONS,
      rssFirstKb: first.rssKb,
      rssLastKb: last.rssKb,
      fdsFirst: first.fds,
      fdsLast: last.fds,
      msPerIteration: elapsed / (RSS_ITERATIONS - RSS_FIRST),
    };
  } catch (error) {
    writeFileSync(file(`release-${RSS_FIRST}`), "");
    writeFileSync(file(`release-${RSS_ITERATIONS}`), "");
    await running.catch(() => undefined);
    throw error;
  }
}

export function printRss(rss: RssResult[]): void {
  console.log(`\n== loopx memory and fds over a ${RSS_ITERATIONS}-iteration bash loop ==`);
  console.log(
    table(
      ["channel", "", `RSS @${RSS_FIRST} MB`, `RSS @${RSS_ITERATIONS} MB`, "growth MB", "<5 MB", `fds @${RSS_FIRST}`, `fds @${RSS_ITERATIONS}`, "fd growth", "ms/iter (concurrent)"],
      rss.map((r) => [
        r.channel,
        "",
        fmt(r.rssFirstKb / 1024, 1),
        fmt(r.rssLastKb / 1024, 1),
        fmt((r.rssLastKb - r.rssFirstKb) / 1024, 1),
        (r.rssLastKb - r.rssFirstKb) / 1024 < 5 ? "yes" : "NO",
        String(r.fdsFirst),
        String(r.fdsLast),
        String(r.fdsLast - r.fdsFirst),
        fmt(r.msPerIteration),
      ]),
    ),
  );
}
