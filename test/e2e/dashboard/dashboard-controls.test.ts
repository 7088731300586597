/**
 * The dashboard's controls against the control-channel interface (src/dashboard/controls.ts), in
 * Chromium: each button calls the channel's matching function for its run and shows the answer;
 * a page of another origin that POSTs to the dashboard (a CSRF attempt, with the token even)
 * reaches nothing; the buttons a run's state does not allow are disabled. The server runs in this
 * process, with a recording channel in place of the real one (tests of the real channel belong
 * with it).
 */
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { BrowserContext } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { ControlChannel } from "../../../src/dashboard/controls.js";
import { startDashboard, type Dashboard } from "../../../src/dashboard/server.js";
import { launchBrowser } from "../../dashboard-helpers.js";
import { appendEvent, recordsDirOf, syntheticId, writeSyntheticRecord } from "../../fixtures/dashboard/records.js";
import { linuxOnly, sleep, tempDir } from "../../helpers.js";

const calls: string[] = [];
const channel: ControlChannel = {
  async stop(id, { now }) {
    calls.push(`stop ${id} now=${now}`);
    return now ? `run ${id} stopped now` : `run ${id} will stop after this iteration`;
  },
  async pause(id) {
    calls.push(`pause ${id}`);
    return `run ${id} paused after iteration 3`;
  },
  async continue(id) {
    calls.push(`continue ${id}`);
    return `run ${id} continues`;
  },
  async resume(id) {
    calls.push(`resume ${id}`);
    throw new Error(`run ${id} cannot be resumed: its project is gone`);
  },
};

let browser: BrowserContext;
let dashboard: Dashboard;
const sleeper = spawn("sleep", ["60"], { stdio: "ignore" });
const running = syntheticId("ctlrun");
const crashed = syntheticId("ctlcrash");
const killed = syntheticId("ctlkilled");
const stopped = syntheticId("ctlstopped");
let runningRecord: string;

beforeAll(async () => {
  const state = tempDir();
  runningRecord = writeSyntheticRecord(state, { id: running, iterations: 3, ended: false, pid: sleeper.pid!, startMs: Date.now() - 1000 });
  writeSyntheticRecord(state, { id: crashed, iterations: 2, ended: false, pid: 999_999 });
  writeSyntheticRecord(state, { id: stopped, iterations: 2 });
  const killedRecord = writeSyntheticRecord(state, { id: killed, iterations: 2, ended: false, pid: 999_999 });
  appendEvent(killedRecord, { type: "run.end", time: new Date().toISOString(), run: killed, reason: "killed", signal: "SIGKILL", exitCode: 137, iterations: 2, durationMs: 500 });
  dashboard = await startDashboard({ dir: recordsDirOf(state), host: "127.0.0.1", port: 0, version: "test", controls: channel });
  browser = await launchBrowser();
});
afterAll(async () => {
  sleeper.kill("SIGKILL");
  await browser?.close();
  await dashboard?.close();
});

// Debian's Chromium and /proc memory readings: Linux only.
linuxOnly("the dashboard's controls", () => {
  it("each button calls the control channel for its run and shows the answer", async () => {
    const page = await browser.newPage();
    const base = new URL(dashboard.url);
    await page.goto(`${base.origin}/runs/${running}${base.search}`);
    await page.waitForSelector("body[data-ready='1']");
    expect(await page.locator("button[data-action='resume']").isDisabled()).toBe(true);
    const press = async (action: string, answer: string) => {
      await page.locator(`button[data-action='${action}']`).click();
      await page.waitForFunction((answer) => document.querySelector("#control-answer")?.textContent === answer, answer, { timeout: 10_000 });
    };
    await press("stop", `run ${running} will stop after this iteration`);
    await press("stop-now", `run ${running} stopped now`);
    await press("pause", `run ${running} paused after iteration 3`);
    // Continue applies to a paused run only: the record says it is paused now (the stand-in does not write).
    expect(await page.locator("button[data-action='continue']").isDisabled()).toBe(true);
    appendEvent(runningRecord, { type: "run.pause", time: new Date().toISOString(), run: running });
    await page.waitForFunction(() => document.querySelector("#run-state [data-state]")?.textContent === "paused", undefined, { timeout: 10_000 });
    expect(await page.locator("button[data-action='pause']").isDisabled()).toBe(true);
    await press("continue", `run ${running} continues`);
    expect(calls).toEqual([`stop ${running} now=false`, `stop ${running} now=true`, `pause ${running}`, `continue ${running}`]);

    // A crashed run: only Resume; the channel's refusal is shown as it said it.
    await page.goto(`${base.origin}/runs/${crashed}${base.search}`);
    await page.waitForSelector("body[data-ready='1']");
    expect(await page.locator("button[data-action='stop']").isDisabled()).toBe(true);
    await press("resume", `run ${crashed} cannot be resumed: its project is gone`);
    expect(calls.at(-1)).toBe(`resume ${crashed}`);

    // Resume follows the resume rule: a run killed by a signal (the guardian's ending) can be
    // resumed; one that was stopped cannot (nothing to resume); no other button applies to either.
    for (const [id, resumable] of [[killed, true], [stopped, false]] as const) {
      await page.goto(`${base.origin}/runs/${id}${base.search}`);
      await page.waitForSelector("body[data-ready='1']");
      await page.waitForFunction(() => document.querySelector("#run-state [data-state]") !== null);
      expect(await page.locator("button[data-action='resume']").isDisabled()).toBe(!resumable);
      for (const action of ["stop", "stop-now", "pause", "continue"]) expect(await page.locator(`button[data-action='${action}']`).isDisabled()).toBe(true);
    }
  });

  it("a page of another origin cannot make the dashboard act, even knowing the token", async () => {
    const target = `${dashboard.url.replace("/?", `/api/runs/${running}/stop?`)}`;
    const evil = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(
        `<!doctype html><form id=f method=POST action="${target}"></form><script>` +
          `fetch(${JSON.stringify(target)}, { method: "POST", mode: "no-cors" }).finally(() => document.getElementById("f").submit());</script>`,
      );
    }).listen(0, "127.0.0.1");
    await new Promise((resolve) => evil.once("listening", resolve));
    try {
      const before = calls.length;
      const page = await browser.newPage();
      const refused = page.waitForResponse((res) => res.url().startsWith(target.split("?")[0]!) && res.request().method() === "POST" && res.request().resourceType() === "document");
      await page.goto(`http://localhost:${(evil.address() as AddressInfo).port}/`);
      expect((await refused).status()).toBe(403);
      await sleep(200);
      expect(calls.length).toBe(before);
    } finally {
      evil.close();
    }
  });
});
