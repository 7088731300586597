/**
 * The run session: ids, LOOPX_ITERATION counting, the event stream and how every ending reaches the
 * run's parts — driven through the real engine with a fake host (no processes).
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoopxError, ScriptFailedError } from "../../src/core/errors.js";
import { runLoop, type LoopHost } from "../../src/core/loop.js";
import type { LoopEvent } from "../../src/records/events.js";
import { newRunId, outputForEvent, RunSession, type RunEnd, type RunPart } from "../../src/core/run-session.js";

let root: string;
let xdg: string;
let savedXdg: string | undefined;
beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "loopx-unit-session-")));
  for (const rel of [".loopx/a/index.sh", ".loopx/a/next.sh", ".loopx/b/index.sh"]) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), "");
  }
  savedXdg = process.env.XDG_CONFIG_HOME;
  xdg = join(root, "xdg");
  process.env.XDG_CONFIG_HOME = xdg;
});
afterAll(() => {
  if (savedXdg === undefined) delete process.env.XDG_CONFIG_HOME;
  else process.env.XDG_CONFIG_HOME = savedXdg;
  rmSync(root, { recursive: true, force: true });
});

type Reply = string | (() => string | Promise<string>);
function host(replies: Record<string, Reply[]>): { host: LoopHost; envs: Array<Record<string, string | undefined>> } {
  const envs: Array<Record<string, string | undefined>> = [];
  const used = new Map<string, number>();
  return {
    envs,
    host: {
      async runScript({ label, env }) {
        envs.push({ ...env });
        const i = used.get(label) ?? 0;
        used.set(label, i + 1);
        const reply = replies[label]?.[i];
        if (reply === undefined) throw new Error(`no reply for ${label} #${i}`);
        const stdout = typeof reply === "function" ? await reply() : reply;
        return { stdout, stdoutBytes: Buffer.byteLength(stdout) };
      },
      warn: () => {},
    },
  };
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
  return new RunSession({ terminate, warn: () => {}, parts, runtime: "node", version: "9.9.9", argv: ["run", "a"] });
}

async function drain(loop: AsyncGenerator<unknown>): Promise<unknown> {
  try {
    for await (const _ of loop);
    return undefined;
  } catch (error) {
    return error;
  }
}

const request = (target: string, extra: object = {}) => ({ target, projectRoot: root, baseEnv: { LOOPX_ITERATION: "user", LOOPX_RUN_ID: "user" }, loopxBin: "/x", ...extra });

describe("run ids", () => {
  it("are 15 URL-safe characters that sort by start time", () => {
    const early = newRunId(Date.UTC(2026, 0, 1));
    const late = newRunId(Date.UTC(2026, 0, 1) + 1);
    expect(early).toMatch(/^[0-9a-z]{15}$/);
    expect(early < late).toBe(true);
    expect(newRunId()).not.toBe(newRunId());
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
    const h: LoopHost = {
      runScript: async () => {
        throw new ScriptFailedError("script a:index exited with code 3", { exitCode: 3, signal: null, stdoutBytes: 5 });
      },
      warn: () => {},
    };
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
    const h: LoopHost = {
      runScript: () =>
        new Promise((_, reject) => {
          failScript = () => reject(new ScriptFailedError("script a:index was killed by SIGINT", { exitCode: null, signal: "SIGINT", stdoutBytes: 0 }));
        }),
      warn: () => {},
    };
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
    const s = new RunSession({ terminate: async () => {}, warn: (m) => warnings.push(m), runtime: "bun", version: "1", parts: [{ onEvent: () => { throw new Error("observer broke"); } }] });
    const { host: h } = host({ "a:index": ["", '{"stop":true}'] });
    expect(await drain(runLoop(request("a"), h, s))).toBeUndefined();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("observer broke");
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
