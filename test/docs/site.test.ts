/**
 * The docs site: `vitepress build` of docs/ works offline, and the built site, served from
 * 127.0.0.1, opens in Debian's Chromium — the home page, a guide, a reference page — and its own
 * search (built into the site, no network) finds "max-cost".
 */
import { execFileSync } from "node:child_process";
import { createReadStream, existsSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { extname, join, normalize } from "node:path";
import type { BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser } from "../dashboard-helpers.js";
import { ROOT, tempDir } from "../helpers.js";

const TYPES: Record<string, string> = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".json": "application/json", ".svg": "image/svg+xml", ".png": "image/png", ".woff2": "font/woff2" };

let site: string;
let server: Server;
let base: string;
let browser: BrowserContext;

beforeAll(async () => {
  site = tempDir("loopx-docs-site-");
  execFileSync(process.execPath, [join(ROOT, "node_modules", "vitepress", "bin", "vitepress.js"), "build", "docs", "--outDir", site], { cwd: ROOT, stdio: "pipe" });
  server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname));
    let file = join(site, path);
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, "index.html");
    if (!existsSync(file)) return void res.writeHead(404).end("not found");
    res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchBrowser();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  server?.close();
});

describe("the docs site in Chromium", () => {
  it("the home page, a guide and a reference page open", { timeout: 60_000 }, async () => {
    const page = await browser.newPage();
    await page.goto(`${base}/`);
    await expect.poll(() => page.textContent(".VPHero .name")).toContain("loopx");
    await page.goto(`${base}/guide/first-loop.html`);
    expect(await page.textContent("h1")).toContain("Your first loop");
    await page.goto(`${base}/reference/run-options.html`);
    expect(await page.textContent("main")).toContain("--max-cost");
    await page.close();
  });

  it("the site's own search finds max-cost, offline", { timeout: 60_000 }, async () => {
    const page = await browser.newPage();
    await page.goto(`${base}/guide/first-loop.html`);
    await page.click(".DocSearch-Button, .VPNavBarSearchButton");
    await page.fill("#localsearch-input", "max-cost");
    await expect.poll(async () => (await page.locator(".VPLocalSearchBox .result").count()) > 0, { timeout: 15_000 }).toBe(true);
    // The pages that document --max-cost: the run options' reference and the budgets guide.
    const found = await page.textContent(".VPLocalSearchBox .results");
    expect(found).toContain("Run options");
    expect(found).toContain("Receipts and budgets");
    await page.close();
  });
});
