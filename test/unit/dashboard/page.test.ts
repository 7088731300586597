/**
 * The dashboard's own logic, in-process: the timeline's columns at 10 and 100,000
 * iterations (one bar per iteration, then shared bars that keep failures / timeouts / gotos / stops
 * visible); the security checks (token, Host against DNS rebinding, Origin); the records watcher
 * reading only what was appended (offsets) and lines cut in two; the generated assets module is
 * up to date with src/dashboard/assets/.
 */
import { appendFileSync, closeSync, openSync, readFileSync, statSync, writeSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { LoopEvent } from "../../../src/core/events.js";
import { FLAG, RunIndex } from "../../../src/dashboard/run-index.js";
import { RecordsWatch } from "../../../src/dashboard/records-watch.js";
import { hostAllowed, hostName, isLoopback, originAllowed, tokenMatches } from "../../../src/dashboard/security.js";
import { tempDir, waitFor } from "../../helpers.js";
import { appendEvent, recordsDirOf, syntheticId, writeSyntheticRecord } from "../../fixtures/dashboard/records.js";
import { GENERATED, dashboardAssetsModule } from "../../../scripts/dashboard-assets.mjs";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");
const at = (ms: number) => new Date(T0 + ms).toISOString();
const base = { v: 1 as const, run: "r1" };

function indexOf(iterations: number, shape: (n: number) => { target?: string; ms?: number; exit?: number; goto?: string; stop?: boolean } = () => ({})): RunIndex {
  const index = new RunIndex();
  const feed = (event: LoopEvent) => index.add(event, 0, 1);
  feed({ ...base, type: "run.start", time: at(0), pid: 1, projectRoot: "/p", target: "a:index", version: "1", runtime: "node", maxIterations: null });
  let t = 0;
  for (let n = 1; n <= iterations; n++) {
    const { target = "a:index", ms = 10, exit = 0, goto, stop } = shape(n);
    feed({ ...base, type: "iteration.start", time: at(t), n, target });
    t += ms;
    const output = exit === 0 ? { ...(goto ? { goto } : {}), ...(stop ? { stop } : {}) } : undefined;
    feed({ ...base, type: "iteration.end", time: at(t), n, target, durationMs: ms, exitCode: exit, signal: null, stdoutBytes: 0, ...(output ? { output } : { error: "exited" }) });
  }
  return index;
}

describe("the timeline", () => {
  it("10 iterations: one column each, with its target, duration and marks", () => {
    const index = indexOf(10, (n) => ({ target: n % 2 ? "a:index" : "a:check", ms: n * 100, exit: n === 7 ? 1 : 0, goto: n === 3 ? "a:check" : undefined, stop: n === 10 }));
    const t = index.timeline(500);
    expect(t).toMatchObject({ count: 10, perColumn: 1, targets: ["a:index", "a:check"], maxMs: 1000 });
    expect(t.columns).toHaveLength(10);
    // first, last, longest, mean, target, failed, timeouts, gotos, stops, running, then billed and
    // estimated USD and tokens from receipts (none here).
    expect(t.columns[2]).toEqual([3, 3, 300, 300, 0, 0, 0, 1, 0, 0, 0, 0, 0]);
    expect(t.columns[6]).toEqual([7, 7, 700, 700, 0, 1, 0, 0, 0, 0, 0, 0, 0]);
    expect(t.columns[9]).toEqual([10, 10, 1000, 1000, 1, 0, 0, 0, 1, 0, 0, 0, 0]);
    expect(index.iteration(7)!.flags & FLAG.FAILED).toBeTruthy();
  });

  it("100,000 iterations: at most the columns asked for, every failure still marked, the longest kept", () => {
    const index = indexOf(100_000, (n) => ({ ms: n === 54_321 ? 9000 : 10 + (n % 7), exit: n % 10_000 === 0 ? 1 : 0 }));
    const t = index.timeline(500);
    expect(t.columns).toHaveLength(500);
    expect(t.perColumn).toBe(200);
    expect(t.maxMs).toBe(9000);
    expect(t.columns.reduce((sum, c) => sum + c[5]!, 0)).toBe(10);
    const longest = t.columns.find((c) => c[2] === 9000)!;
    expect(longest[0]).toBeLessThanOrEqual(54_321);
    expect(longest[1]).toBeGreaterThanOrEqual(54_321);
    expect(longest[3]).toBeLessThan(100); // the mean of its column
    expect(t.columns.at(-1)![1]).toBe(100_000);
  });

  it("the iteration running now counts with its time so far; a time limit's iteration is marked", () => {
    const index = indexOf(3);
    index.add({ ...base, type: "iteration.start", time: at(30), n: 4, target: "a:index" }, 0, 1);
    const t = index.timeline(500, { n: 4, ms: 500 });
    expect(t.columns[3]).toEqual([4, 4, 500, 500, 0, 0, 0, 0, 0, 1, 0, 0, 0]);
    index.add({ ...base, type: "iteration.end", time: at(40), n: 4, target: "a:index", durationMs: 10, exitCode: null, signal: "SIGTERM", stdoutBytes: 0 }, 0, 1);
    index.add({ ...base, type: "run.end", time: at(41), reason: "timed-out", exitCode: 124, iterations: 4, durationMs: 41 }, 0, 1);
    expect(index.timeline(500).columns[3]!.slice(5, 7)).toEqual([1, 1]);
  });
});

describe("the security checks", () => {
  it("the token matches exactly", () => {
    expect(tokenMatches("abc", "abc")).toBe(true);
    for (const given of [null, undefined, "", "ab", "abcd", "ABC"]) expect(tokenMatches(given, "abc")).toBe(false);
  });

  it("Host: IP addresses and localhost under any port, the bound name, nothing else", () => {
    expect(hostName("[::1]:7420")).toBe("::1");
    expect(hostName("Example.COM:80")).toBe("example.com");
    expect(hostName("a:b:c")).toBeUndefined();
    for (const host of ["127.0.0.1:7420", "localhost:9000", "[::1]:1", "10.1.2.3:7420", "127.0.0.1"]) expect(hostAllowed(host, "127.0.0.1"), host).toBe(true);
    for (const host of [undefined, "", "evil.example:7420", "localhost.evil.example", "127.0.0.1.nip.io:7420", "[::1"]) expect(hostAllowed(host, "127.0.0.1"), String(host)).toBe(false);
    expect(hostAllowed("box.lan:7420", "box.lan")).toBe(true);
  });

  it("Origin must be this server, as its Host names it", () => {
    expect(originAllowed("http://127.0.0.1:7420", "127.0.0.1:7420")).toBe(true);
    expect(originAllowed("http://127.0.0.1:7421", "127.0.0.1:7420")).toBe(false);
    expect(originAllowed("null", "127.0.0.1:7420")).toBe(false);
    expect(originAllowed(undefined, "127.0.0.1:7420")).toBe(false);
    expect(isLoopback("127.0.0.1")).toBe(true);
    expect(isLoopback("0.0.0.0")).toBe(false);
  });
});

describe("the records watcher", () => {
  it("reads only what was appended: the record's start may change under it, lines may arrive in halves", async () => {
    const state = tempDir();
    const id = syntheticId("offsets");
    const path = writeSyntheticRecord(state, { id, iterations: 1000, ended: false, pid: process.pid, startMs: Date.now() - 60_000 });
    const watch = new RecordsWatch(recordsDirOf(state), () => true);
    watch.start();
    try {
      expect(watch.run(id)).toMatchObject({ state: "running", iterations: 1000 });
      expect(watch.detail(id)!.count).toBe(1000);
      expect(watch.iterationLines(id, [1000, 1]).ends.get(1000)?.output?.result).toBe("result 1000");
      // Spoil everything read so far: a watcher that re-read the file would lose the run.
      const size = statSync(path).size;
      const fd = openSync(path, "r+");
      writeSync(fd, Buffer.alloc(size - 1, " "), 0, size - 1, 0);
      closeSync(fd);
      const line = JSON.stringify({ v: 1, run: id, type: "iteration.start", time: new Date().toISOString(), n: 1001, target: "synthetic:index" });
      appendFileSync(path, line.slice(0, 30));
      await new Promise((resolve) => setTimeout(resolve, 400));
      appendFileSync(path, `${line.slice(30)}\n`);
      expect(await waitFor(() => watch.run(id)?.iterations === 1001, 5000)).toBe(true);
      expect(watch.run(id)!.current).toMatchObject({ n: 1001 });
      expect(watch.detail(id)!.count).toBe(1001);
    } finally {
      watch.close();
    }
  });
});

describe("the index of a record read whole", () => {
  it("knows the iteration still running though it skips iteration.start lines", () => {
    const state = tempDir();
    const id = syntheticId("openiter");
    const path = writeSyntheticRecord(state, { id, iterations: 3, ended: false, pid: process.pid, startMs: Date.now() - 5000 });
    appendEvent(path, { run: id, type: "iteration.start", time: new Date(Date.now() - 700).toISOString(), n: 4, target: "synthetic:other" });
    const watch = new RecordsWatch(recordsDirOf(state), () => true);
    watch.start();
    try {
      const run = watch.run(id)!;
      expect(run.current).toMatchObject({ n: 4, target: "synthetic:other" });
      const index = watch.detail(id)!;
      expect(index.count).toBe(4);
      expect(index.iteration(4)).toMatchObject({ target: "synthetic:other", durationMs: null });
      const column = index.timeline(500, { n: 4, ms: 700 }).columns[3]!;
      expect([column[0], column[2], column[9]]).toEqual([4, 700, 1]);
      expect(index.timeline(500).targets).toEqual(["synthetic:index", "synthetic:other"]);
    } finally {
      watch.close();
    }
  });
});

describe("records of a newer loopx", () => {
  it("are listed as such, never misread", () => {
    const state = tempDir();
    const id = syntheticId("newer");
    writeSyntheticRecord(state, { id, iterations: 2 });
    appendFileSync(`${recordsDirOf(state)}/${id}.jsonl`, `${JSON.stringify({ v: 2, type: "run.end", time: new Date().toISOString(), run: id })}\n`);
    const watch = new RecordsWatch(recordsDirOf(state), () => true);
    watch.start();
    try {
      expect(watch.run(id)).toMatchObject({ id, state: "unknown", newerVersion: 2 });
    } finally {
      watch.close();
    }
  });
});

it("src/dashboard/assets.generated.ts is generated from src/dashboard/assets/", () => {
  expect(readFileSync(GENERATED, "utf8")).toBe(dashboardAssetsModule());
});
