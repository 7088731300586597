/**
 * Receipts on the dashboard, in Debian's Chromium driven by playwright-core against a
 * real `loopx runs serve` (node): the runs page's Cost and Tokens columns for an ended run (its
 * run.end's totals) and for a running one (its record added up as it grows); a run's page shows
 * what it used, per-iteration cost bars (billed and estimated apart) and the cumulative lines.
 * Model names come from scripts: no dialog fires.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { BrowserContext, } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { BIN, NODE, isolatedEnv, linuxOnly, makeProject, sh, waitFor } from "../../helpers.js";
import { CHANNELS, launchBrowser, openPage, serve } from "../../dashboard-helpers.js";
import { loopx, recordIds } from "../../fixtures/control/support.js";

let browser: BrowserContext;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

const node = CHANNELS.find((channel) => channel.name === "node")!;

linuxOnly("receipts on the dashboard in Chromium", () => {
  it("runs page Cost / Tokens (ended and running runs); a run's page: what it used, cost bars, cumulative lines", async () => {
    const env = isolatedEnv();
    const project = makeProject({
      ".loopx/b/index.sh": sh(
        [
          '"$LOOPX_BIN" receipt --cost 0.1 --kind billed --input 1000 --output 100 --model "<img src=x onerror=alert(1)>"',
          '"$LOOPX_BIN" receipt --cost 1 --kind estimate',
          // Usage windows: the newest reading of each type is the run's (iteration 3's five_hour replaces 1's and 2's).
          `"$LOOPX_BIN" receipt --json "{\\"window\\":{\\"type\\":\\"five_hour\\",\\"status\\":\\"allowed\\",\\"utilization\\":0.$((LOOPX_ITERATION * 3))}}"`,
          '[ "$LOOPX_ITERATION" = 2 ] && "$LOOPX_BIN" receipt --json \'{"window":{"type":"seven_day","status":"allowed_warning","utilization":0.91,"source":"<b>probe</b>"}}\'',
          "true",
        ].join("\n"),
      ),
      ".loopx/s/index.sh": sh('"$LOOPX_BIN" receipt --cost 0.25 --kind billed --input 5\n: > "$LOOPX_PROJECT_ROOT/sent"\nsleep 60'),
    });
    expect((await loopx(node, ["run", "-n", "3", "b"], project, env)).code).toBe(0);
    const [ended] = recordIds(env);
    const running = spawn(NODE, [BIN, "run", "s"], { cwd: project, env, stdio: "ignore" });
    const served = await serve(node, env);
    const dialogs: string[] = [];
    try {
      expect(await waitFor(() => existsSync(join(project, "sent")), 20_000)).toBe(true);
      const page = await openPage(browser, served.url, dialogs);
      const endedRow = page.locator(`tr[data-run="${ended}"]`);
      expect(await endedRow.locator("td.cost").textContent()).toBe("$0.30 · $3.00 est.");
      expect(await endedRow.locator("td.tokens").textContent()).toBe("3.30k");
      const other = page.locator(`tr[data-run]:not([data-run="${ended}"])`);
      await page.waitForFunction((ended) => document.querySelector(`tr[data-run]:not([data-run="${ended}"]) td.cost`)?.textContent === "$0.25", ended, { timeout: 15_000 });
      expect(await other.locator("[data-state]").textContent()).toBe("running");
      expect(await other.locator("td.tokens").textContent()).toBe("5");

      await endedRow.locator("a").click();
      await page.waitForSelector("body[data-ready='1']");
      await page.locator("#cost-section").waitFor({ state: "visible", timeout: 10_000 });
      expect(await page.locator('[data-fact="used"]').textContent()).toBe("$0.30 · $3.00 est. · 3.30k tokens");
      // The newest reading of each usage window, the record's text shown as text.
      expect(await page.locator('[data-fact="usage windows"]').textContent()).toBe("five_hour allowed 90% · seven_day allowed_warning 91% (<b>probe</b>)");
      expect(await page.locator("#costs rect.cost.billed").count()).toBe(3);
      expect(await page.locator("#costs rect.cost.estimate").count()).toBe(3);
      expect(await page.locator("#costs rect.cost.billed").first().getAttribute("data-usd")).toBe("0.1");
      expect(await page.locator("#costs polyline.cumulative.billed").getAttribute("data-total")).toBe("0.3");
      expect(await page.locator("#costs polyline.cumulative.estimate").getAttribute("data-total")).toBe("3");
      expect(await page.locator("#costs").getAttribute("data-billed")).toBe("0.3");
      expect(await page.locator("#costs text").last().textContent()).toBe("total $0.30 · $3.00 est. · 3.30k tokens");
      // The cumulative line rises to the top of the chart (the larger total) and starts at 0.
      const points = (await page.locator("#costs polyline.cumulative.estimate").getAttribute("points"))!.split(" ");
      expect(points[0]).toBe("0,130");
      // The chart is drawn in its box's pixels: the line ends at the viewBox's right edge.
      const right = (await page.locator("#costs").getAttribute("viewBox"))!.split(" ")[2];
      expect(points.at(-1)).toBe(`${right},14`);
      expect(dialogs).toEqual([]);
    } finally {
      running.kill("SIGINT");
      await served.stop();
    }
  });
});
