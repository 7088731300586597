/**
 * The dashboard in a real browser: Debian's Chromium driven by playwright-core against
 * a real `loopx runs serve` (node). A loop started after the page opened appears and its count
 * rises; its page shows the current iteration, an elapsed time that ticks, the timeline and the
 * table, and is what docs/dashboard.png shows (LOOPX_UPDATE_SCREENSHOT=1 rewrites it). Record texts
 * with markup or terminal escapes render as text and fire no dialog. A 100,000-iteration record
 * opens with a bounded chart and a paged table, and the server's memory stays bounded. The runs
 * page filters by project and state. (Timings: `npm run bench -- --only dashboard`.)
 */
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { BrowserContext, } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { BIN, NODE, ROOT, isolatedEnv, linuxOnly, makeProject, sh, tempDir } from "../../helpers.js";
import { CHANNELS, launchBrowser, openPage, serve, type Served } from "../../dashboard-helpers.js";
import { appendEvent, syntheticId, writeSyntheticRecord } from "../../fixtures/dashboard/records.js";

let browser: BrowserContext;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

function rssKb(pid: number): number {
  return Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]);
}

const node = CHANNELS.find((channel) => channel.name === "node")!;

// Debian's Chromium and /proc memory readings: Linux only.
linuxOnly("the dashboard in Chromium", () => {
  it("a loop started after the page opened appears and counts up; its page is live", async () => {
    const env = isolatedEnv();
    const served = await serve(node, env);
    const dialogs: string[] = [];
    const project = makeProject({
      ".loopx/demo/index.sh": sh('sleep 0.2\necho \'{"result":"planned the next step","goto":"demo:work"}\''),
      ".loopx/demo/work.sh": sh(
        'sleep 0.$(( (LOOPX_ITERATION * 37) % 5 + 2 ))\n' +
          '"$LOOPX_BIN" note "reviewed item $LOOPX_ITERATION"\n' +
          'if [ "$LOOPX_ITERATION" = 23 ]; then echo "tests failed" >&2; exit 1; fi\n' +
          'echo "{\\"result\\":\\"worked on item $LOOPX_ITERATION\\",\\"goto\\":\\"demo:check\\"}"',
      ),
      ".loopx/demo/check.sh": sh('sleep 0.1\necho \'{"result":"checked: not done yet"}\''),
    });
    let loop: ReturnType<typeof spawn> | undefined;
    try {
      const page = await openPage(browser, served.url, dialogs);
      expect(await page.locator("#runs tr").count()).toBe(0);

      // A loop started now: its row appears and its iteration count rises on the open page.
      loop = spawn(NODE, [BIN, "run", "demo"], { cwd: project, env, stdio: "ignore" });
      const row = page.locator("#runs tr[data-run]");
      await row.first().waitFor({ timeout: 15_000 });
      const id = (await row.first().getAttribute("data-run"))!;
      await page.waitForFunction((id) => Number(document.querySelector(`tr[data-run="${id}"]`)?.getAttribute("data-iterations")) >= 1, id, { timeout: 15_000 });
      const first = Number(await page.locator(`tr[data-run="${id}"]`).getAttribute("data-iterations"));
      await page.waitForFunction(([id, first]) => Number(document.querySelector(`tr[data-run="${id}"]`)?.getAttribute("data-iterations")) >= Number(first) + 2, [id, first] as const, { timeout: 20_000 });
      expect(await page.locator(`tr[data-run="${id}"] [data-state]`).textContent()).toBe("running");
      expect(page.url()).toBe(served.url); // no reload happened

      // Its page: the current iteration, an elapsed time that ticks, the chart and the table fill in.
      await page.locator(`tr[data-run="${id}"] a`).click();
      await page.waitForSelector("body[data-ready='1']");
      await page.locator("#current").waitFor({ state: "visible", timeout: 10_000 });
      expect(await page.locator("#current").textContent()).toMatch(/^Iteration \d+ · demo:(index|work|check) · running for /);
      const elapsed = page.locator('[data-fact="elapsed"]');
      const before = await elapsed.textContent();
      await page.waitForFunction((before) => document.querySelector('[data-fact="elapsed"]')?.textContent !== before, before, { timeout: 5000 });
      // (Its buttons steer it for real through the control channel: test/e2e/dashboard/dashboard-steer.test.ts.)

      // The run fails at iteration 23 (work's exit 1): the page shows how it ended, live.
      await page.waitForFunction(() => document.querySelector("#run-state [data-state]")?.textContent === "failed", undefined, { timeout: 40_000 });
      await page.waitForFunction(() => document.querySelector("#iterations tr")?.getAttribute("data-n") === "23");
      expect(await page.locator('[data-fact="ended"]').textContent()).toBe("demo:work exited with code 1");
      expect(await page.locator("#current").isHidden()).toBe(true);
      expect(await page.locator("#timeline").getAttribute("data-columns")).toBe("23");
      expect(await page.locator("#iterations tr.failed").getAttribute("data-n")).toBe("23");
      expect(await page.locator("#timeline [data-mark='failed']").count()).toBe(1);
      expect(await page.locator("#timeline [data-mark='goto']").count()).toBe(15);
      expect(await page.locator("#legend").textContent()).toContain("demo:work");
      // The notes the script added, under their iteration.
      expect(await page.locator('#iterations tr[data-n="20"] .note').textContent()).toMatch(/^note \d\d:\d\d:\d\d · reviewed item 20$/);

      // The screenshot of a real run's page, for the README.
      const shot = join(tempDir("loopx-shot-"), "dashboard.png");
      await page.screenshot({ path: shot, fullPage: false });
      expect(statSync(shot).size).toBeGreaterThan(10_000);
      if (process.env.LOOPX_UPDATE_SCREENSHOT === "1") {
        mkdirSync(join(ROOT, "docs"), { recursive: true });
        copyFileSync(shot, join(ROOT, "docs", "dashboard.png"));
      }
      expect(dialogs).toEqual([]);
    } finally {
      loop?.kill("SIGINT");
      await served.stop();
    }
  });

  it("record texts with markup or terminal escapes are shown as text; no dialog fires", async () => {
    const env = isolatedEnv();
    const id = syntheticId("hostile");
    const hostile = ["<img src=x onerror=alert(1)>", "\u001b[2J\u001b[31mred", "<script>alert(2)</script>", "<svg onload=alert(3)>"];
    const path = writeSyntheticRecord(env.XDG_STATE_HOME!, { id, iterations: 4, targets: ["x:<b>bold</b>"], project: "/p/<img src=y onerror=alert(4)>", result: (n) => hostile[n - 1]! });
    appendEvent(path, { run: id, type: "note", time: new Date().toISOString(), n: 2, workflow: "x", text: "<img src=z onerror=alert(5)>" });
    const served = await serve(node, env);
    const dialogs: string[] = [];
    try {
      const list = await openPage(browser, served.url, dialogs);
      expect(await list.locator(`tr[data-run="${id}"] td`).nth(2).textContent()).toBe("/p/<img src=y onerror=alert(4)>");
      const page = await openPage(browser, `${served.base}/runs/${id}?token=${served.token}`, dialogs);
      const results = await page.locator("#iterations td.result").evaluateAll((cells) => cells.map((cell) => cell.firstChild?.textContent));
      expect(results).toEqual(["<svg onload=alert(3)>", "<script>alert(2)</script>", "␛[2J␛[31mred", "<img src=x onerror=alert(1)>"]);
      expect(await page.locator("#iterations td").nth(1).textContent()).toBe("x:<b>bold</b>");
      expect(await page.locator('#iterations tr[data-n="2"] .note').textContent()).toMatch(/ · <img src=z onerror=alert\(5\)>$/);
      // Nothing from a record became an element.
      expect(await page.evaluate(() => document.querySelectorAll("main img, main script, main b, main svg svg, #iterations svg").length)).toBe(0);
      await page.waitForTimeout(300);
      await list.waitForTimeout(10);
      expect(dialogs).toEqual([]);
    } finally {
      await served.stop();
    }
  });

  it("a 100,000-iteration record: a bounded chart, a paged table, bounded server memory", async () => {
    const env = isolatedEnv();
    const id = syntheticId("hundredk");
    writeSyntheticRecord(env.XDG_STATE_HOME!, { id, iterations: 100_000, targets: ["big:index", "big:check"], failEvery: 997 });
    const served = await serve(node, env);
    const dialogs: string[] = [];
    try {
      const baseline = rssKb(served.child.pid!);
      const page = await openPage(browser, `${served.base}/runs/${id}?token=${served.token}`, dialogs);
      expect(await page.locator("#timeline").getAttribute("data-count")).toBe("100000");
      const columns = Number(await page.locator("#timeline").getAttribute("data-columns"));
      expect(columns).toBeGreaterThan(100);
      expect(columns).toBeLessThanOrEqual(500);
      expect(await page.locator("#timeline rect.bar").count()).toBe(columns);
      expect(await page.locator("#timeline [data-mark='failed']").count()).toBeGreaterThan(50);
      expect(await page.locator("#iterations tr").count()).toBe(50);
      expect(await page.locator("#iterations tr").first().getAttribute("data-n")).toBe("100000");
      expect(await page.locator("#page-range").textContent()).toBe("100000–99951 of 100000");

      // Paging and a click on the chart move the table.
      await page.getByRole("button", { name: "older ›" }).click();
      await page.waitForFunction(() => document.querySelector("#iterations tr")?.getAttribute("data-n") === "99950");
      await page.locator("#timeline rect.bar").first().click();
      await page.waitForFunction(() => document.querySelector("#iterations tr")?.getAttribute("data-n") === "200"); // 200 per bar

      // Bounded memory: the index of 100,000 iterations is a few MB; pages reopen without growth.
      for (let i = 0; i < 3; i++) {
        await page.reload();
        await page.waitForSelector("body[data-ready='1']");
      }
      const growthMb = (rssKb(served.child.pid!) - baseline) / 1024;
      expect(growthMb).toBeLessThan(200);
      expect(dialogs).toEqual([]);
    } finally {
      await served.stop();
    }
  });

  it("the runs page filters by project and by state", async () => {
    const env = isolatedEnv();
    const a = syntheticId("filtera");
    const b = syntheticId("filterb");
    const c = syntheticId("filterc");
    writeSyntheticRecord(env.XDG_STATE_HOME!, { id: a, iterations: 2, project: "/work/alpha" });
    writeSyntheticRecord(env.XDG_STATE_HOME!, { id: b, iterations: 3, project: "/work/beta" });
    writeSyntheticRecord(env.XDG_STATE_HOME!, { id: c, iterations: 1, project: "/work/beta", ended: false, pid: 999_999 });
    const served: Served = await serve(node, env);
    try {
      const page = await openPage(browser, served.url, []);
      const ids = () => page.locator("#runs tr").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-run")));
      expect(await ids()).toEqual([c, b, a]); // newest first
      await page.selectOption("#filter-project", "/work/beta");
      expect(await ids()).toEqual([c, b]);
      await page.selectOption("#filter-state", "crashed");
      expect(await ids()).toEqual([c]);
      await page.selectOption("#filter-project", "");
      await page.selectOption("#filter-state", "stopped");
      expect(await ids()).toEqual([b, a]);
    } finally {
      await served.stop();
    }
  });
});
