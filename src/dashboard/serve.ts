import { spawn } from "node:child_process";
import { LoopxError, UsageError } from "../core/errors.js";
import { recordsDir } from "../records/store.js";
import { loadControlChannel } from "./controls.js";
import { isLoopback } from "./security.js";
import { startDashboard } from "./server.js";
import type { Env } from "../core/env.js";

/**
 * `loopx runs serve` (loopx's own extension): the dashboard in this process until SIGINT/SIGTERM.
 * It is a reader of the records like `loopx runs`: no loop waits for it or knows of it.
 */

const DEFAULT_HOST = "127.0.0.1";
const DEFAULT_PORT = 7420;

export interface ServeOptions {
  port?: string;
  host?: string;
  open: boolean;
}


function parsePort(value: string): number {
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) throw new UsageError(`--port must be a port number from 0 to 65535, got ${JSON.stringify(value)}`);
  return Number(value);
}

export async function serveRuns(options: ServeOptions, env: Env, version: string, out: (text: string) => void, warn: (line: string) => void): Promise<number> {
  const port = options.port === undefined ? DEFAULT_PORT : parsePort(options.port);
  const host = options.host ?? DEFAULT_HOST;
  if (host === "") throw new UsageError("--host needs an address");
  const controls = await loadControlChannel(env);
  let dashboard;
  try {
    dashboard = await startDashboard({ dir: recordsDir(env), host, port, version, controls });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE") throw new LoopxError(`cannot serve on ${host}:${port}: the port is in use (--port <n> picks another, --port 0 any free one)`);
    if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND" || code === "EAI_AGAIN") throw new LoopxError(`cannot serve on ${host}: not an address of this machine`);
    if (code === "EACCES") throw new LoopxError(`cannot serve on ${host}:${port}: permission denied`);
    throw error;
  }
  if (!isLoopback(host)) {
    warn(`serving on ${host}, not only on this machine: anyone who can reach it and has the URL's token can watch and steer your runs`);
  }
  out(`${dashboard.url}\n`);
  if (options.open) openBrowser(dashboard.url, warn);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    process.once("SIGHUP", stop);
  });
  await dashboard.close();
  return 0;
}

/** The desktop's opener (xdg-open, or open on macOS); a missing one is a warning, not an error. */
function openBrowser(url: string, warn: (line: string) => void): void {
  const opener = process.platform === "darwin" ? "open" : "xdg-open";
  try {
    const child = spawn(opener, [url], { stdio: "ignore", detached: true });
    child.on("error", () => warn(`--open: cannot start ${opener}; open the URL yourself`));
    child.unref();
  } catch {
    warn(`--open: cannot start ${opener}; open the URL yourself`);
  }
}
