/**
 * The run session: ids, LOOPX_ITERATION counting, the event stream and how every ending reaches the
 * run's parts — driven through the real engine with a fake host (no processes).
 */
import { describe, expect, it } from "vitest";
import { LoopxError, ScriptFailedError } from "../../../src/core/errors.js";
import { runLoop, type LoopHost } from "../../../src/core/loop.js";
import type { LoopEvent } from "../../../src/core/events.js";
import { outputForEvent } from "../../../src/core/run-events.js";
import type { RunEnd, RunPart } from "../../../src/core/run-part.js";
import { RunSession } from "../../../src/core/run-session.js";
import { createRunId } from "../../../src/engine/index.js";
import { memoryHost, MemoryTree } from "./memory-host.js";

const TREE = [".loopx/a/index.sh", ".loopx/a/next.sh", ".loopx/b/index.sh"];

type Reply = string | (() => string | Promise<string>);
function host(replies: Record<string, Reply[]>): { host: LoopHost; envs: Array<Record<string, string | undefined>> } {
  const { host } = memoryHost(replies, { tree: new MemoryTree(TREE) });
  const envs: Array<Record<string, string | undefined>> = [];
  return { envs, host: { ...host, runScript: (step) => (envs.push({ ...step.env }), host.runScript(step)) } };
}

/** A host whose every script is `runScript`. */
function scriptHost(runScript: LoopHost["runScript"]): LoopHost {
  return { ...memoryHost({}, { tree: new MemoryTree(TREE) }).host, runScript };
}

function recorder(): { part: RunPart; events: LoopEvent[]; ends: RunEnd[]; log: string[] } {
  const events: LoopEvent[] = [];
  const ends: RunEnd[] = [];
  const log: string[] = [];
  return {
    events,
    ends,
    log,
    part: {
      begin: () => {
        log.push("begin");
        return { PART_VAR: "from-part", LOOPX_WORKFLOW: "not-this" };
      },
      onEvent: (event) => {
        events.push(event);
        log.push(event.type);
      },
      end: (end) => {
        ends.push(end);
        log.push(`end:${end.reason}`);
      },
    },
  };
}

function session(parts: RunPart[], terminate: (signal: NodeJS.Signals) => Promise<void> = async () => {}): RunSession {
  return new RunSession({ id: createRunId(), pid: 4242, terminate, warn: () => {}, parts, runtime: "node", version: "9.9.9", argv: ["run", "a"] });
}

async function drain(loop: AsyncGenerator<unknown>): Promise<unknown> {
  try {
    for await (const _ of loop);
    return undefined;
  } catch (error) {
    return error;
  }
}

const request = (target: string, extra: object = {}) => ({ target, projectRoot: "/project", baseEnv: { LOOPX_ITERATION: "user", LOOPX_RUN_ID: "user" }, loopxBin: "/x", ...extra });

describe("run ids", () => {
  it("are 15 URL-safe characters that sort by start time", () => {
    const early = createRunId(Date.UTC(2026, 0, 1));
    const late = createRunId(Date.UTC(2026, 0, 1) + 1);
    expect(early).toMatch(/^[0-9a-z]{15}$/);
    expect(early < late).toBe(true);
    expect(createRunId()).not.toBe(createRunId());
  });

  it("of runs started in the same second differ within 8 characters, and sort after the older 9-digit ids", () => {
    const second = Date.UTC(2026, 10, 25, 14, 0, 0);
    const ids = [3, 41, 977].map((ms) => createRunId(second + ms));
    for (const [i, id] of ids.entries()) for (const other of ids.slice(i + 1)) expect(id.slice(0, 8)).not.toBe(other.slice(0, 8));
    expect([...ids].sort()).toEqual(ids);
    // What loopx made before: the time padded to 9 digits ("0" first), 6 random digits.
    const older = `${(second + 5000).toString(36).padStart(9, "0")}zzzzzz`;
    expect(older < ids[0]!).toBe(true);
  });
});

describe("the engine reports a run to its session", () => {
  it("LOOPX_ITERATION counts like -n across goto hops and resets; LOOPX_RUN_ID is the session's", async () => {
    const rec = recorder();
    const s = session([rec.part]);
    const { host: h, envs } = host({
      "a:index": ['{"goto":"next"}', '{"goto":"b:index"}'],
      "a:next": [""],
      "b:index": ['{"stop":true}'],
    });
    expect(await drain(runLoop(request("a"), h, s))).toBeUndefined();
    expect(envs.map((e) => e.LOOPX_ITERATION)).toEqual(["1", "2", "3", "4"]);
    expect(new Set(envs.map((e) => e.LOOPX_RUN_ID))).toEqual(new Set([s.id]));
    expect(envs[0]!.PART_VAR).toBe("from-part");
    expect(envs[3]!.LOOPX_WORKFLOW).toBe("b"); // loopx's own variables win over a part's
    expect(rec.log).toEqual([
      "run.start", "begin",
      "iteration.start", "iteration.end", "iteration.start", "iteration.end",
      "iteration.start", "iteration.end", "iteration.start", "iteration.end",
      "end:stopped", "run.end",
    ]);
    const start = rec.events[0]!;
    expect(start).toMatchObject({ v: 1, type: "run.start", run: s.id, target: "a:index", argv: ["run", "a"], version: "9.9.9", runtime: "node", maxIterations: null });
    expect(rec.events[4]).toMatchObject({ type: "iteration.end", n: 2, target: "a:next", exitCode: 0, signal: null, stdoutBytes: 0, output: {} });
    expect(rec.events.at(-1)).toMatchObject({ type: "run.end", reason: "stopped", exitCode: 0, iterations: 4, target: "b:index" });
    for (const event of rec.events) expect(Number.isNaN(Date.parse(event.time))).toBe(false);
  });

  it("-n reached ends as limit; a consumer leaving after the last output does not turn it into returned", async () => {
    const rec = recorder();
    const { host: h } = host({ "a:index": ["", ""] });
    const loop = runLoop(request("a", { maxIterations: 2 }), h, session([rec.part]));
    let seen = 0;
    for await (const _ of loop) if (++seen === 2) break;
    expect(rec.ends.map((e) => e.reason)).toEqual(["limit"]);
    expect(rec.events.at(-1)).toMatchObject({ type: "run.end", reason: "limit", iterations: 2, exitCode: 0 });
  });

  it("break before the end is returned", async () => {
    const rec = recorder();
    const { host: h } = host({ "a:index": ["", ""] });
    for await (const _ of runLoop(request("a"), h, session([rec.part]))) break;
    expect(rec.ends.map((e) => e.reason)).toEqual(["returned"]);
  });

  it("a failing script ends the run as failed, with the exit in iteration.end", async () => {
    const rec = recorder();
    const h = scriptHost(async () => {
      throw new ScriptFailedError("script a:index exited with code 3", { exitCode: 3, signal: null, stdoutBytes: 5 });
    });
    const error = await drain(runLoop(request("a"), h, session([rec.part])));
    expect(error).toBeInstanceOf(ScriptFailedError);
    expect(rec.events[2]).toMatchObject({ type: "iteration.end", n: 1, exitCode: 3, signal: null, stdoutBytes: 5, error: "script a:index exited with code 3" });
    expect(rec.events[2]).not.toHaveProperty("output");
    expect(rec.ends[0]).toMatchObject({ reason: "failed", exitCode: 1, target: "a:index", message: "script a:index exited with code 3" });
  });

  it("an invalid goto fails the run after the iteration ended", async () => {
    const rec = recorder();
    const { host: h } = host({ "a:index": ['{"goto":"nope"}'] });
    const error = await drain(runLoop(request("a"), h, session([rec.part])));
    expect(error).toBeInstanceOf(LoopxError);
    expect(rec.ends[0]).toMatchObject({ reason: "failed", message: expect.stringContaining("invalid goto from a:index") });
  });

  it("validation failures and -n 0 never begin a run: no events, no parts", async () => {
    for (const extra of [{ maxIterations: 0 }, { target: "missing" }]) {
      const rec = recorder();
      const { host: h } = host({});
      await drain(runLoop({ ...request("a"), ...extra }, h, session([rec.part])));
      expect(rec.log).toEqual([]);
    }
  });

  it("a part that cannot begin fails the run before any script; parts already begun are ended", async () => {
    const first = recorder();
    const broken: RunPart = { begin: () => { throw new LoopxError("cannot create the run's scratch directory"); }, end: () => { throw new Error("never begun, never ended"); } };
    const { host: h, envs } = host({ "a:index": [""] });
    const error = await drain(runLoop(request("a"), h, session([first.part, broken])));
    expect((error as Error).message).toBe("cannot create the run's scratch directory");
    expect(envs).toEqual([]);
    expect(first.log).toEqual(["run.start", "begin", "end:failed", "run.end"]);
  });

  it("a cancellation decides the ending, and parts end only after the group is gone", async () => {
    const rec = recorder();
    let release!: () => void;
    const gone = new Promise<void>((resolve) => (release = resolve));
    const s = session([rec.part], () => gone);
    let failScript!: () => void;
    const h = scriptHost(
      () =>
        new Promise((_, reject) => {
          failScript = () => reject(new ScriptFailedError("script a:index was killed by SIGINT", { exitCode: null, signal: "SIGINT", stdoutBytes: 0 }));
        }),
    );
    const done = drain(runLoop(request("a"), h, s));
    await new Promise((r) => setTimeout(r, 10));
    void s.cancel({ reason: "interrupted", signal: "SIGINT", exitCode: 130 });
    failScript();
    await new Promise((r) => setTimeout(r, 10));
    expect(rec.ends).toEqual([]); // the group is not gone yet
    release();
    await done;
    expect(rec.ends).toEqual([expect.objectContaining({ reason: "interrupted", exitCode: 130, signal: "SIGINT" })]);
    expect(rec.events.at(-1)).toMatchObject({ type: "run.end", reason: "interrupted", exitCode: 130, iterations: 1, signal: "SIGINT" });
  });

  it("a throwing observer is warned once and the loop goes on", async () => {
    const warnings: string[] = [];
    const s = new RunSession({ id: createRunId(), pid: 1, terminate: async () => {}, warn: (m) => warnings.push(m), runtime: "bun", version: "1", parts: [{ onEvent: () => { throw new Error("observer broke"); } }] });
    const { host: h } = host({ "a:index": ["", '{"stop":true}'] });
    expect(await drain(runLoop(request("a"), h, s))).toBeUndefined();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("observer broke");
  });
});

describe("parts that hold back the next script (the seam for steering a run)", () => {
  it("beforeScript runs before every script, goto hops included, and may delay it", async () => {
    const seen: string[] = [];
    let releaseFirst!: () => void;
    const gate: RunPart = {
      beforeScript: ({ target }) => {
        seen.push(`gate:${target}`);
        if (seen.length === 1) return new Promise<void>((resolve) => (releaseFirst = resolve));
      },
      onEvent: (event) => event.type === "iteration.start" && seen.push(`start:${event.target}`),
    };
    const { host: h } = host({ "a:index": ['{"goto":"next"}'], "a:next": ['{"stop":true}'] });
    const done = drain(runLoop(request("a"), h, session([gate])));
    await new Promise((r) => setTimeout(r, 10));
    expect(seen).toEqual(["gate:a:index"]); // held back: the script has not started
    releaseFirst();
    expect(await done).toBeUndefined();
    expect(seen).toEqual(["gate:a:index", "start:a:index", "gate:a:next", "start:a:next"]);
  });

  it("a cancellation from beforeScript starts no further script; the cancellation ends the run", async () => {
    const rec = recorder();
    let gates = 0;
    const stopper: RunPart = {
      beforeScript: async (_next, controls) => {
        if (++gates === 2) await controls.cancel({ reason: "interrupted", signal: "SIGTERM", exitCode: 143 });
      },
    };
    const { host: h, envs } = host({ "a:index": ["", ""] });
    expect(await drain(runLoop(request("a"), h, session([rec.part, stopper])))).toBeUndefined();
    expect(envs).toHaveLength(1);
    expect(rec.ends).toEqual([expect.objectContaining({ reason: "interrupted", exitCode: 143 })]);
    expect(rec.events.filter((event) => event.type === "iteration.start")).toHaveLength(1);
  });

  it("a run without such a part is not gated", () => {
    expect(session([recorder().part]).gated).toBe(false);
    expect(session([{ beforeScript: () => {} }]).gated).toBe(true);
  });
});

describe("iteration output in events", () => {
  it("cuts result to 4 KiB on a character boundary and counts its bytes", () => {
    const long = "é".repeat(3000); // 6000 bytes
    const event = outputForEvent({ result: long, goto: "x", stop: false });
    expect(event.resultBytes).toBe(6000);
    expect(Buffer.byteLength(event.result!)).toBeLessThanOrEqual(4096);
    expect(long.startsWith(event.result!)).toBe(true);
    expect(event).toMatchObject({ goto: "x", stop: false });
  });
});
