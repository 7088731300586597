/**
 * The dashboard's controls on real runs (with the control channel): Debian's
 * Chromium driven by playwright-core against a real `loopx runs serve`, real loops in temp
 * projects. "Stop after this iteration" lets the running script finish and starts no other (the
 * run ends `stopped-on-request`, `loopx runs --json` agrees); "Stop now" ends it as Ctrl-C does
 * (exit 130, no process left with its LOOPX_RUN_ID); Pause holds the next script until Continue;
 * Resume continues a run whose loopx was SIGKILLed (its guardian ends it `killed`), with the same
 * id and new iterations. Each button's answer line says what happened, and the page follows the
 * run's state live.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { BIN, BUN, NODE, carriersOf, isolatedEnv, linuxOnly, makeProject, processAlive, sh, sleep, taggedSurvivors, waitFor } from "../../helpers.js";
import { launchBrowser, serve, type Channel as ServeChannel, type Served } from "../../dashboard-helpers.js";
import { events, loopx, startLoopx, trace, waitForEvent, type Background, type Env, type Event } from "../../fixtures/control/support.js";

const node: ServeChannel = { name: "node", argv: [NODE, BIN] };
const bun: ServeChannel = { name: "bun", argv: [BUN, BIN] };

const WORKFLOWS = {
  // Each iteration: trace, its run id and pid for the test, as many seconds of work as the file
  // `sleep` says (3 by default), then waits while the file `hold` exists, a result.
  ".loopx/w/index.sh": sh(
    [
      'echo "start $LOOPX_ITERATION" >> "$LOOPX_PROJECT_ROOT/trace.log"',
      'echo "$LOOPX_RUN_ID" > "$LOOPX_PROJECT_ROOT/run.id"',
      'echo $$ > "$LOOPX_PROJECT_ROOT/script.pid"',
      'sleep "$(cat "$LOOPX_PROJECT_ROOT/sleep" 2>/dev/null || echo 3)"',
      'while [ -e "$LOOPX_PROJECT_ROOT/hold" ]; do sleep 0.1; done',
      'echo "end $LOOPX_ITERATION" >> "$LOOPX_PROJECT_ROOT/trace.log"',
      'echo "{\\"result\\":\\"iteration $LOOPX_ITERATION\\"}"',
    ].join("\n"),
  ),
};

let browser: BrowserContext;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

/** Live processes whose environment holds LOOPX_RUN_ID=<id>: the run's scripts and whatever they started. */
const runCarriers = (id: string) => carriersOf("LOOPX_RUN_ID", id);

interface Scene {
  env: Env;
  cwd: string;
  served: Served;
  page: Page;
  /** The loop, once started. */
  loop?: Background;
}

/**
 * A project, an isolated user (XDG dirs), `loopx runs serve` under `channel` and a browser page.
 * Everything started carries HARDENING_TAG, so whatever is left at the end (a detached resume
 * included) is found and killed.
 */
async function withScene(channel: ServeChannel, test: (scene: Scene) => Promise<void>): Promise<void> {
  const tag = `dashboard-steer-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const env = isolatedEnv({ HARDENING_TAG: tag });
  const cwd = makeProject(WORKFLOWS);
  const served = await serve(channel, env);
  const page = await browser.newPage();
  const scene: Scene = { env, cwd, served, page };
  try {
    await test(scene);
  } finally {
    await page.close();
    await served.stop();
    for (const pid of taggedSurvivors(tag)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone between the listing and the kill
      }
    }
    scene.loop?.child.kill("SIGKILL");
  }
}

/** Starts `loopx run w ...args` (node) and waits for its iteration 1 to start; returns the run id. */
async function startRun(scene: Scene, args: string[] = []): Promise<string> {
  scene.loop = startLoopx(node, ["run", ...args, "w"], scene.cwd, scene.env);
  return waitForEvent(scene.env, (event) => event.type === "iteration.start" && event.n === 1);
}

async function openRun(scene: Scene, id: string): Promise<void> {
  await scene.page.goto(`${scene.served.base}/runs/${id}?token=${scene.served.token}`);
}

/** Clicks a control (once it is enabled) and returns the answer line the page shows for it. */
async function press(page: Page, action: string): Promise<string> {
  await page.locator(`button[data-action='${action}']`).click({ timeout: 10_000 });
  await page.waitForFunction(() => {
    const text = document.querySelector("#control-answer")?.textContent ?? "";
    return text !== "" && !text.endsWith("…");
  }, undefined, { timeout: 15_000 });
  return (await page.locator("#control-answer").textContent())!;
}

/** Waits for the run's page to show `state` (live, no reload). */
async function pageState(page: Page, state: string, timeout = 15_000): Promise<void> {
  await page.waitForFunction((state) => document.querySelector("#run-state [data-state]")?.textContent === state, state, { timeout });
}

const fact = (page: Page, name: string) => page.locator(`[data-fact="${name}"]`).textContent();

/** The run's line of `loopx runs --json`. */
async function listed(scene: Scene, id: string): Promise<Event> {
  const result = await loopx(node, ["runs", "--json"], scene.cwd, scene.env);
  expect(result.code).toBe(0);
  const runs = result.stdout.trim().split("\n").map((line) => JSON.parse(line) as Event);
  expect(runs.map((run) => run.id)).toEqual([id]);
  return runs[0]!;
}


// Debian's Chromium, /proc: Linux only.
linuxOnly("the dashboard steers real runs", () => {
  it("stop after this iteration: the running script completes, the next never starts, the run ends stopped-on-request", async () => {
    await withScene(node, async (scene) => {
      const { page } = scene;
      const id = await startRun(scene);
      await openRun(scene, id);
      await page.locator("#current").waitFor({ state: "visible", timeout: 10_000 });
      expect(await page.locator("button[data-action='continue']").isDisabled()).toBe(true);
      expect(await press(page, "stop")).toBe(`run ${id} stops after w:index finishes`);
      await pageState(page, "stopping", 5000);
      expect(trace(scene.cwd)).toEqual(["start 1"]); // the script is still running

      await pageState(page, "stopped-on-request");
      expect(await fact(page, "ended")).toBe("stopped on request");
      for (const button of await page.locator(".controls button").all()) expect(await button.isDisabled()).toBe(true);
      const result = await scene.loop!.result;
      expect(result.code).toBe(0);
      expect(trace(scene.cwd)).toEqual(["start 1", "end 1"]);
      const record = events(scene.env, id);
      expect(record.filter((event) => event.type === "iteration.start")).toHaveLength(1);
      expect(record.find((event) => event.type === "iteration.end")).toMatchObject({ n: 1, exitCode: 0, output: { result: "iteration 1" } });
      expect(record.at(-1)).toMatchObject({ type: "run.end", reason: "stopped-on-request", exitCode: 0, iterations: 1 });
      expect(await listed(scene, id)).toMatchObject({ state: "stopped-on-request", exitCode: 0, iterations: 1, ending: "stopped on request" });
      // The table shows the finished iteration's result.
      await page.waitForFunction(() => document.querySelector("#iterations tr[data-n='1'] .result")?.textContent === "iteration 1");
    });
  });

  it("stop now: the loop ends as Ctrl-C ends it (exit 130), nothing with the run's LOOPX_RUN_ID is left", async () => {
    await withScene(node, async (scene) => {
      const { page } = scene;
      writeFileSync(join(scene.cwd, "sleep"), "30");
      const id = await startRun(scene);
      await openRun(scene, id);
      expect(await waitFor(() => runCarriers(id).length >= 2, 10_000)).toBe(true); // the script and its sleep
      const script = Number(readFileSync(join(scene.cwd, "script.pid"), "utf8"));

      const asked = Date.now();
      expect(await press(page, "stop-now")).toBe(`run ${id} is interrupted now (w:index gets SIGINT)`);
      const result = await scene.loop!.result;
      expect(Date.now() - asked).toBeLessThan(10_000);
      expect(result.code).toBe(130);
      expect(runCarriers(id)).toEqual([]);
      expect(processAlive(script)).toBe(false);
      expect(trace(scene.cwd)).toEqual(["start 1"]);
      expect(events(scene.env, id).at(-1)).toMatchObject({ type: "run.end", reason: "interrupted", exitCode: 130 });

      await pageState(page, "interrupted");
      expect(await fact(page, "ended")).toBe("interrupted by SIGINT");
      expect(await listed(scene, id)).toMatchObject({ state: "interrupted", exitCode: 130 });
    });
  });

  it("pause holds the next script until continue; the page shows paused, then running again", async () => {
    await withScene(node, async (scene) => {
      const { page } = scene;
      writeFileSync(join(scene.cwd, "sleep"), "0");
      writeFileSync(join(scene.cwd, "hold"), ""); // iteration 1 ends only once pause was pressed
      const id = await startRun(scene);
      await openRun(scene, id);
      await page.locator("#current").waitFor({ state: "visible", timeout: 10_000 });
      expect(await press(page, "pause")).toBe(`run ${id} pauses after w:index finishes (loopx runs continue ${id})`);
      rmSync(join(scene.cwd, "hold"));
      await pageState(page, "paused");
      expect(await page.locator("button[data-action='pause']").isDisabled()).toBe(true);

      // Iteration 1 finishes; 2 s later the next script has still not started.
      await waitForEvent(scene.env, (event) => event.type === "iteration.end" && event.n === 1);
      await sleep(2000);
      expect(trace(scene.cwd)).toEqual(["start 1", "end 1"]);
      expect(await listed(scene, id)).toMatchObject({ state: "paused" });
      expect(await page.locator("#run-state [data-state]").textContent()).toBe("paused");

      // Iteration 2 holds until the page has shown it running (without the hold, a loaded machine's
      // page can see iteration 5 first).
      writeFileSync(join(scene.cwd, "hold"), "");
      expect(await press(page, "continue")).toBe(`run ${id} continues`);
      await pageState(page, "running");
      await waitForEvent(scene.env, (event) => event.type === "iteration.start" && event.n === 2);
      const record = events(scene.env, id);
      const continued = record.find((event) => event.type === "run.continue")!;
      const second = record.find((event) => event.type === "iteration.start" && event.n === 2)!;
      expect(Date.parse(second.time)).toBeGreaterThanOrEqual(Date.parse(continued.time));
      expect(Date.parse(continued.time) - Date.parse(record.find((event) => event.type === "iteration.end")!.time)).toBeGreaterThanOrEqual(2000);
      expect(record.map((event) => event.type).filter((type) => type.startsWith("run."))).toEqual(["run.start", "run.pause", "run.continue"]);
      await page.waitForFunction(() => /^Iteration 2 · w:index · running for /.test(document.querySelector("#current")?.textContent ?? ""), undefined, { timeout: 30_000 });

      // Done: stop it from the page.
      expect(await press(page, "stop")).toBe(`run ${id} stops after w:index finishes`);
      rmSync(join(scene.cwd, "hold"));
      expect((await scene.loop!.result).code).toBe(0);
      expect(trace(scene.cwd)).toEqual(["start 1", "end 1", "start 2", "end 2"]);
      await pageState(page, "stopped-on-request");
    });
  });

  it("resume of a run whose loopx was SIGKILLed (its guardian ended it: killed): from the page, same id, new iterations; stop now ends the resumed loopx", async () => {
    await withScene(node, async (scene) => {
      const { page } = scene;
      writeFileSync(join(scene.cwd, "sleep"), "30");
      const id = await startRun(scene, ["-n", "1000"]);
      await openRun(scene, id);
      await page.locator("#current").waitFor({ state: "visible", timeout: 10_000 });
      expect(await page.locator("button[data-action='resume']").isDisabled()).toBe(true);

      // Kill loopx mid-iteration: its guardian ends the script and the run ("killed"), live on the page.
      scene.loop!.child.kill("SIGKILL");
      await pageState(page, "killed", 20_000);
      expect(await fact(page, "ended")).toMatch(/^killed/);
      expect(runCarriers(id)).toEqual([]);

      writeFileSync(join(scene.cwd, "sleep"), "0.3");
      const answer = await press(page, "resume");
      const resumed = Number(new RegExp(`^run ${id} resumed at w:index, iteration 1 \\(pid (\\d+), detached\\)$`).exec(answer)?.[1]);
      expect(resumed, answer).toBeGreaterThan(0);
      await pageState(page, "running");
      expect(await fact(page, "process")).toMatch(new RegExp(`^pid ${resumed} · `));
      expect(await fact(page, "resumed")).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d at iteration 1 · w:index$/);
      // New iterations appear on the open page.
      await page.waitForSelector("#iterations tr[data-n='3']", { timeout: 15_000 });
      expect(readFileSync(join(scene.cwd, "run.id"), "utf8").trim()).toBe(id);
      expect(trace(scene.cwd).slice(0, 3)).toEqual(["start 1", "start 1", "end 1"]);
      expect(await listed(scene, id)).toMatchObject({ state: "running", pid: resumed });

      // The resumed loopx is steerable from the page too: stop now ends it and everything it ran.
      expect(await press(page, "stop-now")).toMatch(new RegExp(`^run ${id} is interrupted now( \\(w:index gets SIGINT\\))?$`));
      expect(await waitFor(() => !processAlive(resumed), 10_000)).toBe(true);
      expect(runCarriers(id)).toEqual([]);
      await pageState(page, "interrupted");
      const record = events(scene.env, id);
      expect(record.filter((event) => event.type === "run.resume")).toMatchObject([{ pid: resumed, iterations: 0 }]);
      expect(record.at(-1)).toMatchObject({ type: "run.end", reason: "interrupted", exitCode: 130 });
    });
  });

  it("under bun too: stop after this iteration from the page ends the run stopped-on-request", async () => {
    await withScene(bun, async (scene) => {
      const { page } = scene;
      // Iteration 1 is held until the stop is pressed: a loaded machine cannot let it end first.
      writeFileSync(join(scene.cwd, "sleep"), "0");
      writeFileSync(join(scene.cwd, "hold"), "");
      const id = await startRun(scene);
      await openRun(scene, id);
      expect(await press(page, "stop")).toBe(`run ${id} stops after w:index finishes`);
      rmSync(join(scene.cwd, "hold"));
      expect((await scene.loop!.result).code).toBe(0);
      await pageState(page, "stopped-on-request");
      expect(trace(scene.cwd)).toEqual(["start 1", "end 1"]);
    });
  });
});
