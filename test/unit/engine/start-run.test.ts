/**
 * The engine's run handle (src/engine/index.ts), in process, over real bash scripts: every ending
 * becomes one outcome value, errors come from next() and never from startRun, and a cancellation
 * from outside the loop (what a control channel or a guardian will send) ends the run like a
 * signal does. Runs the built engine (dist/), whose runtime finds the script launcher there.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import type { LoopEvent } from "../../../src/core/events.js";
import type * as Engine from "../../../src/engine/index.js";
import { isolatedEnv, makeProject, ROOT } from "../../helpers.js";

let engine: typeof Engine;
let errors: typeof import("../../../src/core/errors.js");
beforeAll(async () => {
  engine = (await import(pathToFileURL(join(ROOT, "dist/engine/index.js")).href)) as typeof Engine;
  errors = (await import(pathToFileURL(join(ROOT, "dist/core/errors.js")).href)) as typeof errors;
});

const PROJECT = {
  ".loopx/w/index.sh": '#!/bin/bash\nprintf \'{"result":"%s","goto":"next"}\' "$LOOPX_ITERATION"\n',
  ".loopx/w/next.sh": '#!/bin/bash\nprintf \'{"stop":true}\'\n',
  ".loopx/w/sleep.sh": "#!/bin/bash\nprintf ready > \"$READY\"; sleep 30\n",
};

function request(target: string, options: Engine.RunRequest["options"] = {}, extra: Partial<Engine.RunRequest> = {}): Engine.RunRequest {
  const projectRoot = makeProject(PROJECT);
  return { target, options, projectRoot, baseEnv: isolatedEnv({ READY: join(projectRoot, "ready") }), ...extra };
}

async function waitForFile(path: string): Promise<void> {
  const { existsSync } = await import("node:fs");
  for (let i = 0; i < 200 && !existsSync(path); i++) await new Promise((r) => setTimeout(r, 25));
}

describe("startRun → RunHandle", () => {
  it("outputs as they come, then the outcome of a stop", async () => {
    const events: LoopEvent[] = [];
    const handle = engine.startRun(request("w", {}, { parts: [{ onEvent: (event) => void events.push(event) }] }));
    const outputs = [];
    for await (const output of handle) outputs.push(output);
    expect(outputs).toEqual([{ result: "1", goto: "next" }, { stop: true }]);
    expect(await handle.outcome).toEqual({ reason: "stopped", exitCode: 0, target: "w:next" });
    expect(events.map((event) => event.type)).toEqual(["run.start", "iteration.start", "iteration.end", "iteration.start", "iteration.end", "run.end"]);
  });

  it("-n reached and -n 0 end as limit (a run that never began has no events)", async () => {
    expect(await engine.startRun(request("w", { maxIterations: 1 })).complete()).toEqual({ reason: "limit", exitCode: 0 });
    const events: LoopEvent[] = [];
    expect(await engine.startRun(request("w", { maxIterations: 0 }, { parts: [{ onEvent: (e) => void events.push(e) }] })).complete()).toEqual({ reason: "limit", exitCode: 0 });
    expect(events).toEqual([]);
  });

  it("a bad request never throws from startRun: next() rejects and the outcome is failed with that error", async () => {
    const handle = engine.startRun(request("w", { maxIterations: -1 }));
    const error = await handle.next().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(errors.LoopxError);
    expect((error as Error).message).toBe("maxIterations must be a non-negative integer, got -1");
    expect(await handle.outcome).toMatchObject({ reason: "failed", exitCode: 1, error });
    expect(await handle.next()).toEqual({ done: true, value: undefined });
  });

  it("a failing script: outcome failed, exit code 1, the script's error", async () => {
    const outcome = await engine.startRun(request("w:missing")).complete();
    expect(outcome).toMatchObject({ reason: "failed", exitCode: 1 });
    expect((outcome.error as Error).message).toMatch(/script "missing" not found in workflow "w"/);
  });

  it("cancel() mid-script (as a control request would): the group is ended, then the cancellation is the outcome", async () => {
    const req = request("w:sleep");
    const handle = engine.startRun(req);
    const pending = handle.next();
    await waitForFile(join(req.projectRoot as string, "ready"));
    const started = Date.now();
    await handle.cancel({ reason: "interrupted", signal: "SIGTERM", exitCode: 143, message: "stopped from elsewhere" });
    expect(Date.now() - started).toBeLessThan(4000);
    expect(await pending).toEqual({ done: true, value: undefined });
    expect(await handle.outcome).toEqual({ reason: "interrupted", exitCode: 143, signal: "SIGTERM", message: "stopped from elsewhere" });
  });

  it("an abort: next() rejects with the abort reason after the group is gone; outcome aborted", async () => {
    const controller = new AbortController();
    const req = request("w:sleep", { signal: controller.signal });
    const handle = engine.startRun(req);
    const pending = handle.next().catch((e: unknown) => e);
    await waitForFile(join(req.projectRoot as string, "ready"));
    const reason = new Error("enough");
    controller.abort(reason);
    expect(await pending).toBe(reason);
    expect(await handle.outcome).toMatchObject({ reason: "aborted", exitCode: null, error: reason });
  });

  it("a time limit: outcome timed-out, exit code 124, a TimeoutError naming the script", async () => {
    const outcome = await engine.startRun(request("w:sleep", { timeout: 300 })).complete();
    expect(outcome).toMatchObject({ reason: "timed-out", exitCode: 124, target: "w:sleep" });
    expect(outcome.error).toBeInstanceOf(errors.TimeoutError);
    expect((outcome.error as Error).message).toBe("script w:sleep timed out after 300ms");
  });

  it("return() mid-script: outcome returned; before the first next(): nothing ran", async () => {
    const req = request("w:sleep");
    const handle = engine.startRun(req);
    void handle.next();
    await waitForFile(join(req.projectRoot as string, "ready"));
    await handle.return();
    expect(await handle.outcome).toMatchObject({ reason: "returned", exitCode: null });
    const unstarted = engine.startRun(request("w"));
    await unstarted.return();
    expect(await unstarted.outcome).toEqual({ reason: "returned", exitCode: null });
  });
});
