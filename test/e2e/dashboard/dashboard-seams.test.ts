/**
 * The dashboard where it fell short of `runs show` and of a phone, in Chromium:
 * - no page logs an error for /favicon.ico (a browser asks for it without the token: 204, and
 *   the token gate holds for every other path);
 * - a resumed run's table shows the `── resumed ──` line and `(retry)`, and COST / TOKENS per
 *   iteration, as `runs show` does for the same record;
 * - on the run page no mark of the timeline covers an iteration number;
 * - at 390 px the charts are drawn to scale (x and y alike: no squashed text), and the runs list
 *   shows short ids, so a project path is not broken one character per line;
 * - a plain `chromium --headless` with `--virtual-time-budget` (the README's screenshot recipe)
 *   gets the drawn page, not "connecting…", with `live=0` in the URL.
 */
import { execFile } from "node:child_process";
import type { BrowserContext, Page } from "playwright-core";
import { ensureChromium } from "../../../scripts/chromium.mjs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { isolatedEnv, linuxOnly, runLoopx, RUNTIMES } from "../../helpers.js";
import { CHANNELS, launchBrowser, request, serve } from "../../dashboard-helpers.js";
import { appendEvent, syntheticId, writeSyntheticRecord } from "../../fixtures/dashboard/records.js";

const node = CHANNELS.find((channel) => channel.name === "node")!;

let browser: BrowserContext;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

/** A page of the dashboard, ready, at `width`; every console error and failed response is kept. */
async function open(url: string, width: number, problems: string[]): Promise<Page> {
  const page = await browser.newPage();
  await page.setViewportSize({ width, height: 844 });
  page.on("console", (message) => void (message.type() === "error" && problems.push(message.text())));
  page.on("response", (response) => void (response.status() >= 400 && problems.push(`${response.status()} ${new URL(response.url()).pathname}`)));
  await page.goto(url);
  await page.waitForSelector("body[data-ready='1']", { timeout: 15_000 });
  return page;
}

/** A run of 3 iterations killed in its 4th, resumed, the 4th run again with a receipt, then stopped. */
function resumedRun(state: string, id: string, project: string): void {
  const t0 = Date.now() - 60_000;
  const path = writeSyntheticRecord(state, { id, iterations: 3, ended: false, pid: 999_999, project, targets: ["w:index"], startMs: t0 });
  const at = (s: number) => new Date(t0 + s * 1000).toISOString();
  appendEvent(path, { type: "iteration.start", time: at(10), run: id, n: 4, target: "w:index" });
  appendEvent(path, { type: "run.resume", time: at(20), run: id, pid: 999_998, projectRoot: project, target: "w:index", iterations: 3, maxIterations: null, version: "0.0.0", runtime: "node" });
  appendEvent(path, { type: "iteration.start", time: at(21), run: id, n: 4, target: "w:index" });
  appendEvent(path, { type: "receipt", time: at(22), run: id, n: 4, cost: { usd: 0.25, kind: "billed" }, tokens: { input: 1000, output: 500 }, model: "m" });
  appendEvent(path, { type: "iteration.end", time: at(23), run: id, n: 4, target: "w:index", durationMs: 2000, exitCode: 0, signal: null, stdoutBytes: 13, output: { stop: true } });
  appendEvent(path, { type: "run.end", time: at(24), run: id, reason: "stopped", exitCode: 0, iterations: 4, durationMs: 24_000, target: "w:index" });
}

linuxOnly("the dashboard's seams (Chromium)", () => {
  it("favicon: no error on any page, a 204 without the token; the gate holds elsewhere", { timeout: 90_000 }, async () => {
    const env = isolatedEnv();
    const id = syntheticId("favicon");
    writeSyntheticRecord(env.XDG_STATE_HOME!, { id, iterations: 3 });
    const served = await serve(node, env);
    try {
      const problems: string[] = [];
      const list = await open(served.url, 1200, problems);
      const run = await open(`${served.base}/runs/${id}?token=${served.token}`, 1200, problems);
      await run.waitForSelector("#iterations tr");
      await run.waitForTimeout(300);
      expect(problems).toEqual([]);
      await Promise.all([list.close(), run.close()]);
      expect((await request(`${served.base}/favicon.ico`)).status).toBe(204);
      expect((await request(`${served.base}/favicon.ico`)).body).toBe("");
      for (const path of ["/favicon.ico?x=1", "/favicon.ico/", "/favicon.icon", "/", "/app.js", "/api/runs", `/runs/${id}`]) expect((await request(`${served.base}${path}`)).status, path).toBe(403);
      expect((await request(`${served.base}/favicon.ico`, { headers: { host: "evil.example" } })).status).toBe(403);
    } finally {
      await served.stop();
    }
  });

  it("a resumed run: the resumed line, (retry) and COST / TOKENS, as runs show has them", { timeout: 90_000 }, async () => {
    const env = isolatedEnv();
    const id = syntheticId("resumed");
    resumedRun(env.XDG_STATE_HOME!, id, env.HOME!);
    const shown = await runLoopx(RUNTIMES[0]!, ["runs", "show", id], { cwd: env.HOME!, env });
    expect(shown.stdout).toMatch(/── resumed .* at w:index · pid 999998 ──/);
    expect(shown.stdout).toMatch(/^4 +w:index \(retry\) .*\$0\.25 +1\.50k/m);
    const served = await serve(node, env);
    try {
      const page = await open(`${served.base}/runs/${id}?token=${served.token}`, 1200, []);
      await page.waitForSelector("#iterations tr[data-n='4']");
      const head = await page.locator("thead th").allTextContents();
      expect(head).toEqual(["#", "Target", "Duration", "Exit", "Next", "Cost", "Tokens", "Result"]);
      const rows = await page.locator("#iterations tr").evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
      expect(rows[0]).toEqual(["4", "w:index (retry)", "2.0s", "0", "stop", "$0.25", "1.50k", ""]);
      expect(rows[1]).toHaveLength(1);
      expect(rows[1]![0]).toMatch(/^── resumed \d{4}-\d\d-\d\d \d\d:\d\d:\d\d at w:index · pid 999998 ──$/);
      expect(rows.slice(2).map((row) => row[0])).toEqual(["3", "2", "1"]);
      expect(rows[2]![1]).toBe("w:index");
    } finally {
      await served.stop();
    }
  });

  it("timeline marks clear of the iteration numbers; at 390 px charts to scale and short ids in the runs list", { timeout: 90_000 }, async () => {
    const env = isolatedEnv();
    const id = syntheticId("marks");
    const long = "/home/somebody/projects/a-rather-long-project-directory-name/that-goes-on-and-on";
    // Iteration 5 says goto (every 5th), every 4th fails; the resumed run has a stop and a receipt.
    writeSyntheticRecord(env.XDG_STATE_HOME!, { id, iterations: 12, failEvery: 4, project: long, targets: ["a:index", "a:check"] });
    const resumed = syntheticId("marksresumed");
    resumedRun(env.XDG_STATE_HOME!, resumed, long);
    const served = await serve(node, env);
    try {
      for (const width of [1200, 390]) {
        for (const run of [id, resumed]) {
          const page = await open(`${served.base}/runs/${run}?token=${served.token}`, width, []);
          await page.waitForSelector("#timeline .mark");
          const overlaps = await page.evaluate(() => {
            const boxes = (selector: string) => [...document.querySelectorAll(selector)].map((node) => node.getBoundingClientRect());
            const numbers = boxes("#timeline text").filter((box) => box.top > document.querySelector("#timeline .bar")!.getBoundingClientRect().top);
            const hits = boxes("#timeline .mark").filter((mark) => numbers.some((n) => mark.left < n.right && n.left < mark.right && mark.top < n.bottom && n.top < mark.bottom));
            return { numbers: numbers.length, hits: hits.length };
          });
          expect(overlaps.numbers, `${run} at ${width}`).toBeGreaterThan(0);
          expect(overlaps.hits, `${run} at ${width}`).toBe(0);
          // One user unit is as wide as it is tall: text keeps its shape.
          for (const chart of ["#timeline", ...(run === resumed ? ["#costs"] : [])]) {
            const scale = await page.locator(chart).evaluate((node) => {
              const m = (node as SVGSVGElement).getScreenCTM()!;
              return { x: m.a, y: m.d };
            });
            expect(Math.abs(scale.x - scale.y), `${chart} of ${run} at ${width}: ${JSON.stringify(scale)}`).toBeLessThan(0.01);
          }
          await page.close();
        }
      }
      const list = await open(served.url, 390, []);
      for (const run of [id, resumed]) {
        const link = list.locator(`#runs tr[data-run="${run}"] a`);
        const text = (await link.textContent())!;
        expect(run.startsWith(text) && text.length < run.length, text).toBe(true);
        expect(await link.getAttribute("title")).toBe(run);
        // The project path wraps in lines of at least 10 characters.
        const lines = await list.locator(`#runs tr[data-run="${run}"] td.project`).evaluate((cell) => Math.round(cell.getBoundingClientRect().height / parseFloat(getComputedStyle(cell).lineHeight)));
        expect(lines, `${run}: ${lines} lines`).toBeLessThanOrEqual(Math.ceil(long.length / 10));
      }
    } finally {
      await served.stop();
    }
  });

  it("chromium --headless --virtual-time-budget on a page with live=0: the page as drawn, not connecting…", { timeout: 120_000 }, async () => {
    const env = isolatedEnv();
    const id = syntheticId("headless");
    writeSyntheticRecord(env.XDG_STATE_HOME!, { id, iterations: 7 });
    const served = await serve(node, env);
    try {
      const chromium = ensureChromium() as string;
      const flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", `--user-data-dir=${env.HOME}/chromium`, "--virtual-time-budget=5000", "--dump-dom"];
      const dom = await new Promise<string>((resolve, reject) =>
        execFile(chromium, [...flags, `${served.base}/runs/${id}?token=${served.token}&live=0`], { timeout: 100_000, maxBuffer: 16 << 20 }, (error, stdout) => (error ? reject(error) : resolve(stdout))),
      );
      expect(dom).toContain('<body data-ready="1">');
      expect(dom).not.toContain("connecting…");
      expect(dom).toContain('<tr data-n="7"');
    } finally {
      await served.stop();
    }
  });
});
