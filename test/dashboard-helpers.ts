/**
 * What the dashboard tests share: `loopx runs serve` started under a channel (node, bun, the
 * standalone binary) on a free port, its printed URL, raw HTTP requests with any Host / Origin
 * (fetch cannot set Host), and Debian's Chromium driven by playwright-core with a fresh profile.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { request as httpRequest } from "node:http";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { tempDir } from "./helpers.js";
import { ensureChromium } from "../scripts/chromium.mjs";
import type { Channel } from "./helpers.js";

export { CHANNELS, type Channel } from "./helpers.js";

export interface Served {
  url: string;
  /** http://host:port */
  base: string;
  token: string;
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** SIGTERM, then its exit. */
  stop: () => Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `loopx runs serve --port 0 ...extra` and waits for the URL it prints. */
export function serve(channel: Channel, env: Record<string, string>, extra: string[] = []): Promise<Served> {
  return new Promise((resolve, reject) => {
    const child = spawn(channel.argv[0]!, [...channel.argv.slice(1), "runs", "serve", "--port", "0", ...extra], { cwd: env.HOME, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => child.on("close", (code, signal) => done({ code, signal })));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`no URL from loopx runs serve within 20 s; stderr: ${stderr}`));
    }, 20_000);
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      const line = /^(http:\/\/[^\s]+)\n/.exec(stdout);
      if (!line) return;
      clearTimeout(timer);
      const url = new URL(line[1]!);
      resolve({
        url: line[1]!,
        base: url.origin,
        token: url.searchParams.get("token") ?? "",
        child,
        stdout: () => stdout,
        stderr: () => stderr,
        stop: () => {
          if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
          return exited;
        },
      });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      reject(new Error(`loopx runs serve exited with ${code} before printing a URL; stderr: ${stderr}`));
    });
  });
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP request with exactly these headers (Host included); the body read whole, or `limit` bytes of a stream. */
export function request(url: string, options: { method?: string; headers?: Record<string, string>; limit?: number } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? "GET", headers: options.headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
        if (options.limit !== undefined && body.length >= options.limit) {
          res.destroy();
          resolve({ status: res.statusCode!, headers: res.headers, body });
        }
      });
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

const CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

/** Debian's Chromium (installed when missing) with a fresh profile directory. */
export async function launchBrowser(): Promise<BrowserContext> {
  const executablePath = ensureChromium() as string;
  return chromium.launchPersistentContext(tempDir("loopx-chromium-"), { executablePath, headless: true, args: CHROMIUM_FLAGS, viewport: { width: 1200, height: 900 } });
}

/** A page of the dashboard, ready (its first data drawn); every dialog it opens is kept in `dialogs` and dismissed. */
export async function openPage(browser: BrowserContext, url: string, dialogs: string[]): Promise<Page> {
  const page = await browser.newPage();
  page.on("dialog", (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  await page.goto(url);
  await page.waitForSelector("body[data-ready='1']", { timeout: 15_000 });
  return page;
}
