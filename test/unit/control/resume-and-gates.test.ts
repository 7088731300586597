/**
 * The pure halves of steering and resuming: where a run goes on (control/resume-point.ts, as a table over
 * records) and the session's gate before each script (a part that returns nothing costs no await;
 * a held script is released by a cancellation; a resumed session counts on and says run.resume).
 */
import { describe, expect, it } from "vitest";
import { decideResume } from "../../../src/control/resume-point.js";
import { runLoop } from "../../../src/core/loop.js";
import type { RunPart } from "../../../src/core/run-part.js";
import { RunSession } from "../../../src/core/run-session.js";
import type { RecordEvent } from "../../../src/core/events.js";
import { memoryHost, MemoryTree } from "../core/memory-host.js";

const T0 = Date.parse("2026-11-23T10:00:00Z");
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
const base = (type: string, s: number) => ({ v: 1, type, time: at(s), run: "r1" });
const start = (extra: object = {}) => ({ ...base("run.start", 0), pid: 10, projectRoot: "/p", target: "w:index", version: "1", runtime: "node", maxIterations: 5, ...extra });
const itStart = (n: number, target: string, s: number) => ({ ...base("iteration.start", s), n, target });
const itEnd = (n: number, target: string, s: number, output?: object, error?: string) => ({
  ...base("iteration.end", s), n, target, durationMs: 1000, exitCode: error ? 3 : 0, signal: null, stdoutBytes: 0, ...(output ? { output } : {}), ...(error ? { error } : {}),
});
const end = (reason: string, s: number, iterations: number, durationMs = s * 1000) => ({ ...base("run.end", s), reason, exitCode: 1, iterations, durationMs });
const dead = () => false;
const decide = (events: object[], alive = dead, more?: number) => decideResume("r1", events as RecordEvent[], alive, more);

describe("where a run goes on", () => {
  const gotoBig = { goto: "b", result: "x".repeat(4096), resultBytes: 10_000 };
  it.each([
    ["killed while b ran, after a's goto with a big result: b again, same n, input from the kept copy", [start(), itStart(1, "w:index", 1), itEnd(1, "w:index", 2, gotoBig), itStart(2, "w:b", 2)], { target: "w:b", n: 2, stdinBytes: 10_000 }, ["stdin"]],
    ["failed at b after a small goto result: b again with the result the record holds", [start(), itStart(1, "w:index", 1), itEnd(1, "w:index", 2, { goto: "b", result: "héllo", resultBytes: 6 }), itStart(2, "w:b", 2), itEnd(2, "w:b", 3, undefined, "b exited 3"), end("failed", 3, 2)], { target: "w:b", n: 2, stdinBytes: 6, stdin: "héllo" }],
    ["the last script completed without goto: back to the starting target, next n, no input", [start(), itStart(1, "w:index", 1), itEnd(1, "w:index", 2, { result: "r", resultBytes: 1 }), end("interrupted", 3, 1)], { target: "w:index", n: 2 }, ["stdin", "stdinBytes"]],
    ["completed with a cross-workflow goto: its target, with its result", [start(), itStart(1, "w:index", 1), itEnd(1, "w:index", 2, { goto: "o:x", result: "", resultBytes: 0 }), end("timed-out", 3, 1)], { target: "o:x", n: 2, stdinBytes: 0, stdin: "" }],
    ["no script ever started: from the start", [start(), end("failed", 1, 0)], { target: "w:index", n: 1 }],
    ["an ending of another loopx (a guardian's): resumable", [start(), itStart(1, "w:index", 1), end("killed", 2, 1)], { target: "w:index", n: 1 }],
  ])("%s", (_name, events, expected, absent: string[] = []) => {
    const decision = decide(events);
    expect(decision.ok).toBe(true);
    if (decision.ok) expect(decision.point).toMatchObject(expected);
    for (const key of absent) expect(decision).not.toHaveProperty(`point.${key}`);
  });

  it("counts the time of every sitting (a crashed one up to its last event)", () => {
    const events = [start(), itStart(1, "w:index", 1), end("interrupted", 4, 1, 4000), { ...base("run.resume", 100), pid: 11, projectRoot: "/p", target: "w:index", iterations: 0, maxIterations: 5, version: "1", runtime: "node" }, itStart(1, "w:index", 101), itEnd(1, "w:index", 103, { result: "r", resultBytes: 1 })];
    const decision = decide(events);
    expect(decision.ok && decision.point.elapsedMs).toBe(4000 + 3000);
    expect(decision.ok && decision.point.n).toBe(2);
  });

  it.each([
    ["a live run", [start(), itStart(1, "w:index", 1)], () => true, undefined, "run r1 is still running (pid 10): nothing to resume"],
    ["a run stopped by a script", [start(), itStart(1, "w:index", 1), itEnd(1, "w:index", 2, { stop: true }), { ...end("stopped", 2, 1), target: "w:index" }], dead, undefined, "run r1 was stopped by w:index: nothing to resume"],
    ["a run stopped on request", [start(), itStart(1, "w:index", 1), end("stopped-on-request", 2, 1)], dead, undefined, "run r1 was stopped on request: nothing to resume"],
    ["-n reached", [start({ maxIterations: 1 }), itStart(1, "w:index", 1), itEnd(1, "w:index", 2, {}), end("limit", 2, 1)], dead, undefined, "run r1 reached -n 1: nothing to resume (give -n <count> for more iterations)"],
    ["-n 0 given", [start(), itStart(1, "w:index", 1), end("interrupted", 2, 1)], dead, 0, "run r1: -n 0 leaves nothing to resume"],
    ["a record without run.start", [itStart(1, "w:index", 1)], dead, undefined, "run r1 has no run.start in its record: it cannot be resumed"],
  ])("refused: %s", (_name, events, alive, more, message) => {
    expect(decide(events, alive, more)).toEqual({ ok: false, message });
  });

  it("a new -n after -n reached: that many more iterations, counted on", () => {
    const decision = decide([start({ maxIterations: 1 }), itStart(1, "w:index", 1), itEnd(1, "w:index", 2, {}), end("limit", 2, 1)], dead, 3);
    expect(decision.ok && decision.point).toMatchObject({ n: 2, maxIterations: 4 });
  });
});

const TREE = [".loopx/w/index.sh", ".loopx/w/b.sh"];

function session(parts: RunPart[], resume?: { iterations: number; elapsedMs: number }): RunSession {
  return new RunSession({ id: "r1", pid: 1, terminate: async () => {}, warn: () => {}, parts, runtime: "node", version: "1", ...(resume ? { resume } : {}) });
}

describe("the gate before each script", () => {
  it("a part that returns nothing is asked before every script and costs no await", async () => {
    const seen: object[] = [];
    const s = session([{ beforeScript: (next) => void seen.push(next) }]);
    expect(s.beforeScript({ target: "w:b", stdin: "x" })).toBeUndefined();
    const { host } = memoryHost({ "w:index": ['{"goto":"b","result":"in"}'], "w:b": ['{"stop":true}'] }, { tree: new MemoryTree(TREE) });
    for await (const _ of runLoop({ target: "w", projectRoot: "/project", baseEnv: {}, loopxBin: "/x" }, host, s));
    expect(seen).toEqual([{ target: "w:b", n: 1, stdin: "x" }, { target: "w:index", n: 1, stdin: undefined }, { target: "w:b", n: 2, stdin: "in" }]);
  });

  it("a held script is released by a cancellation, and never starts", async () => {
    let started = 0;
    const s = session([{ beforeScript: () => new Promise(() => {}) }]);
    const { host } = memoryHost({ "w:index": [() => (started++, "")] }, { tree: new MemoryTree(TREE) });
    const loop = runLoop({ target: "w", projectRoot: "/project", baseEnv: {}, loopxBin: "/x" }, host, s);
    const first = loop.next();
    await new Promise((resolve) => setTimeout(resolve, 20));
    void s.cancel({ reason: "stopped-on-request", exitCode: 0 });
    expect(await first).toEqual({ done: true, value: undefined });
    expect(started).toBe(0);
    expect(await s.end({ reason: "returned", exitCode: null })).toMatchObject({ reason: "stopped-on-request", exitCode: 0 });
  });

  it("a resumed session says run.resume, counts on from the iterations done, starts at the resume target with its input", async () => {
    const events: RecordEvent[] = [];
    const s = session([{ onEvent: (event) => void events.push(event) }], { iterations: 3, elapsedMs: 60_000 });
    const stdins: Array<string | undefined> = [];
    const { host: memory } = memoryHost({ "w:b": ['{"stop":true}'] }, { tree: new MemoryTree(TREE) });
    const host = { ...memory, runScript: (step: Parameters<typeof memory.runScript>[0]) => (stdins.push(step.stdin as string | undefined), memory.runScript(step)) };
    for await (const _ of runLoop({ target: "w", projectRoot: "/project", baseEnv: {}, loopxBin: "/x", resume: { target: "w:b", stdin: "kept" } }, host, s));
    expect(stdins).toEqual(["kept"]);
    expect(events.map((event) => event.type)).toEqual(["run.resume", "iteration.start", "iteration.end", "run.end"]);
    expect(events[0]).toMatchObject({ target: "w:b", iterations: 3 });
    expect(events[1]).toMatchObject({ n: 4, target: "w:b" });
    expect((events[3] as { durationMs: number }).durationMs).toBeGreaterThanOrEqual(60_000);
  });
});
