/**
 * "the dashboard on a phone": at 390×844 in Chromium the runs page and a run's page (1,
 * 100 and 100,000 iterations) never scroll sideways — the tables scroll inside their own box —
 * and the controls are on screen, large enough to tap, and not covered. The phone screenshot in
 * the README comes from here (LOOPX_UPDATE_SCREENSHOT=1).
 */
import { copyFileSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ROOT, isolatedEnv, linuxOnly, tempDir } from "../../helpers.js";
import { CHANNELS, launchBrowser, serve } from "../../dashboard-helpers.js";
import { syntheticId, writeSyntheticRecord } from "../../fixtures/dashboard/records.js";

const PHONE = { width: 390, height: 844 };
/** The smallest tap target the controls get (Apple's and Google's guidance: 44 / 48 px). */
const TAP = 40;

let browser: BrowserContext;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

async function phonePage(url: string): Promise<Page> {
  const page = await browser.newPage();
  await page.setViewportSize(PHONE);
  await page.goto(url);
  await page.waitForSelector("body[data-ready='1']", { timeout: 15_000 });
  return page;
}

const pageWidth = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth);

/** The page's width, and what sticks out of the screen (for the failure message). */
async function expectFits(page: Page): Promise<void> {
  const wide = await page.evaluate((width) => {
    const out: string[] = [];
    for (const node of document.querySelectorAll("body *")) {
      const r = node.getBoundingClientRect();
      if (r.right > width + 0.5 && out.length < 8) out.push(`${node.tagName.toLowerCase()}${node.id ? `#${node.id}` : ""}.${node.className} right=${Math.round(r.right)}`);
    }
    return out.join("; ");
  }, PHONE.width);
  expect(await pageWidth(page), wide).toBeLessThanOrEqual(PHONE.width);
}

/** Each element of `selector` is inside the screen's width, at least TAP px tall, and the one hit at its centre. */
async function expectTappable(page: Page, selector: string): Promise<number> {
  const boxes = await page.locator(selector).evaluateAll((nodes) =>
    nodes.map((node) => {
      const r = node.getBoundingClientRect();
      const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2 - window.scrollY + window.scrollY);
      return { left: r.left, right: r.right, height: r.height, width: r.width, hit: hit === node || node.contains(hit) };
    }),
  );
  for (const box of boxes) {
    expect(box.left).toBeGreaterThanOrEqual(0);
    expect(box.right).toBeLessThanOrEqual(PHONE.width);
    expect(box.height).toBeGreaterThanOrEqual(TAP);
    expect(box.width).toBeGreaterThanOrEqual(TAP);
  }
  return boxes.length;
}

const node = CHANNELS.find((channel) => channel.name === "node")!;

linuxOnly("the dashboard on a phone (390×844, Chromium)", () => {
  it("no sideways scroll on the runs page and on runs of 1, 100 and 100,000 iterations; controls on screen and tappable", { timeout: 120_000 }, async () => {
    const env = isolatedEnv();
    const state = env.XDG_STATE_HOME!;
    const one = syntheticId("phoneone");
    const hundred = syntheticId("phonehundred");
    const big = syntheticId("phonebig");
    const long = "/home/somebody/projects/a-rather-long-project-directory-name/that-goes-on-and-on";
    writeSyntheticRecord(state, { id: one, iterations: 1, failEvery: 1, project: long, targets: ["ralph-with-a-long-workflow-name:index"] });
    writeSyntheticRecord(state, { id: hundred, iterations: 100, failEvery: 23, targets: ["ralph:index", "ralph:check"], result: (n) => `worked on item ${n}: ${"a long result without any space ".repeat(4).replace(/ /g, "_")}` });
    writeSyntheticRecord(state, { id: big, iterations: 100_000, failEvery: 997, targets: ["big:index", "big:check"] });
    const served = await serve(node, env);
    try {
      const runs = await phonePage(served.url);
      expect(await runs.locator("#runs tr").count()).toBe(3);
      await expectFits(runs);
      // The filters work by touch.
      const oneState = (await runs.locator(`#runs tr[data-run="${one}"] [data-state]`).getAttribute("data-state"))!;
      await runs.locator("#filter-state").selectOption(oneState);
      await runs.waitForFunction((state) => [...document.querySelectorAll("#runs [data-state]")].every((badge) => badge.getAttribute("data-state") === state), oneState);
      await runs.locator("#filter-state").selectOption("");
      await expectTappable(runs, "#filter-state, #filter-project");
      await runs.locator(`#runs tr[data-run="${hundred}"] a`).click();
      await runs.waitForSelector("body[data-ready='1'] #timeline[data-count='100']");
      await expectFits(runs);

      for (const [id, count] of [[one, 1], [hundred, 100], [big, 100_000]] as const) {
        const page = await phonePage(`${served.base}/runs/${id}?token=${served.token}`);
        await page.waitForSelector(`#timeline[data-count='${count}']`);
        await page.waitForSelector("#facts dd");
        await expectFits(page);
        expect(await expectTappable(page, ".controls button")).toBe(5);
        expect(await expectTappable(page, ".pager button")).toBe(4);
        if (count > 50) {
          // The pager pages by touch, and the page still fits.
          await page.getByRole("button", { name: "older ›" }).click();
          await page.waitForFunction((n) => document.querySelector("#iterations tr")?.getAttribute("data-n") === String(n), count - 50);
          await expectFits(page);
          await page.getByRole("button", { name: "« newest" }).click();
          await page.waitForFunction((n) => document.querySelector("#iterations tr")?.getAttribute("data-n") === String(n), count);
        }
        if (count === 100) {
          const shot = join(tempDir("loopx-shot-"), "dashboard-phone.png");
          await page.screenshot({ path: shot, fullPage: false });
          expect(statSync(shot).size).toBeGreaterThan(10_000);
          if (process.env.LOOPX_UPDATE_SCREENSHOT === "1") {
            mkdirSync(join(ROOT, "docs"), { recursive: true });
            copyFileSync(shot, join(ROOT, "docs", "dashboard-phone.png"));
          }
        }
        await page.close();
      }
    } finally {
      await served.stop();
    }
  });
});
