import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { FINISHED_REASONS } from "../control/resume-point.js";
import { GOING_STATES, RUN_STATES } from "../core/run-states.js";
import { formatElapsed, formatLocalTime } from "../records/wording.js";
import { addUsd, formatTokens, formatUsd, windowWords } from "../core/receipts.js";
import { ASSETS } from "./assets.generated.js";
import type { ControlChannel } from "./controls.js";
import { RecordsWatch } from "./records-watch.js";
import { text } from "./responses.js";
import { route } from "./routes.js";
import { SECURITY_HEADERS, hostAllowed, isFaviconAsk, originAllowed, tokenMatches, urlHost } from "./security.js";
import { EventStreams } from "./streams.js";

/**
 * The dashboard's HTTP server: node:http, which Bun implements too (the same code serves under
 * Node, Bun and the standalone binary). It keeps the security gate (the checks of security.ts,
 * before anything else) and the lifecycle; what it answers — the page, JSON over the run records,
 * server-sent events — is the route table of routes.ts.
 */

export interface DashboardOptions {
  dir: string;
  host: string;
  port: number;
  version: string;
  controls?: ControlChannel;
  /** Fixed token (tests of this module); by default a random one. */
  token?: string;
}

export interface Dashboard {
  url: string;
  token: string;
  server: Server;
  watch: RecordsWatch;
  close(): Promise<void>;
}

/**
 * The browser's copies of core's wording, the run states and the resume rule: the same functions
 * and lists, shipped as their source. The page's "use strict" comes first, so it holds for all of it.
 */
const SHARED_JS =
  `"use strict";\nconst formatElapsed = (${formatElapsed.toString()});\nconst formatLocalTime = (${formatLocalTime.toString()});\n` +
  `const formatUsd = (${formatUsd.toString()});\nconst formatTokens = (${formatTokens.toString()});\nconst addUsd = (${addUsd.toString()});\n` +
  `const windowWords = (${windowWords.toString()});\n` +
  `const FINISHED = ${JSON.stringify(FINISHED_REASONS)};\nconst STATES = ${JSON.stringify(RUN_STATES)};\nconst GOING = ${JSON.stringify(GOING_STATES)};\n`;

/** A browser's own ask for a page icon, without the page's token: "no icon" (it tells nothing), not a 403. */
function answeredFavicon(req: IncomingMessage, res: ServerResponse, url: URL): boolean {
  if (!isFaviconAsk(req, url)) return false;
  res.writeHead(204, SECURITY_HEADERS).end();
  return true;
}

export async function startDashboard(options: DashboardOptions): Promise<Dashboard> {
  const token = options.token ?? randomBytes(24).toString("base64url");
  const watch = new RecordsWatch(options.dir);
  watch.start();
  const streams = new EventStreams(watch);
  const html = ASSETS["index.html"]!.replaceAll("{{TOKEN}}", token);
  const assets: Record<string, { type: string; body: string }> = {
    "/app.js": { type: "text/javascript; charset=utf-8", body: SHARED_JS + ASSETS["app.js"]! },
    "/app.css": { type: "text/css; charset=utf-8", body: ASSETS["app.css"]! },
  };
  const info = { version: options.version, dir: options.dir, controls: options.controls };

  /** The security gate (security.ts): every request passes it before any route sees it. */
  const gate = (req: IncomingMessage, res: ServerResponse, url: URL): boolean => {
    let refusal: string | undefined;
    if (!hostAllowed(req.headers.host, options.host)) refusal = `refused: Host ${JSON.stringify(req.headers.host ?? "")} does not name this server`;
    else if (answeredFavicon(req, res, url)) return false;
    else if (!tokenMatches(url.searchParams.get("token"), token)) refusal = "refused: the token of the URL printed by 'loopx runs serve' is missing or wrong";
    else if (req.method === "POST" && !originAllowed(req.headers.origin, req.headers.host)) refusal = "refused: a request that changes a run must come from the dashboard's own page";
    if (refusal !== undefined) text(res, 403, refusal);
    else if (req.method !== "GET" && req.method !== "HEAD" && req.method !== "POST") {
      res.setHeader("allow", "GET, HEAD, POST");
      text(res, 405, "method not allowed");
    } else return true;
    return false;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://dashboard.invalid");
    if (gate(req, res, url)) await route({ req, res, url, watch, streams, html, assets, info });
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((error) => {
      if (!res.headersSent) text(res, 500, error instanceof Error ? error.message : String(error));
      else res.destroy();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${urlHost(options.host)}:${port}/?token=${token}`,
    token,
    server,
    watch,
    close: () =>
      new Promise<void>((resolve) => {
        streams.close();
        watch.close();
        server.close(() => resolve());
        server.closeAllConnections?.();
      }),
  };
}
