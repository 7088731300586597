import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { FINISHED_REASONS } from "../control/resume-point.js";
import { formatElapsed, formatLocalTime } from "../records/report.js";
import { addUsd, formatTokens, formatUsd } from "../core/receipts.js";
import { ASSETS } from "./assets.generated.js";
import { applyControl, isControlAction, type ControlChannel } from "./controls.js";
import { RecordsWatch, type Change } from "./records-watch.js";
import { SECURITY_HEADERS, hostAllowed, originAllowed, tokenMatches, urlHost } from "./security.js";

/**
 * The dashboard's HTTP server: node:http, which Bun implements too (the same code serves under
 * Node, Bun and the standalone binary), answering with the page, JSON over the run records, and
 * server-sent events for live updates. Every request passes the checks of security.ts first.
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

/** Longest timeline the chart draws column per iteration; longer runs share columns. */
const MAX_COLUMNS = 600;
const MAX_PAGE = 200;
const MAX_STREAMS = 64;
/** A stream whose client stops reading is dropped before it holds more than this. */
const STREAM_BACKLOG = 1024 * 1024;
/** Characters of `result` / `error` the table shows (the record keeps the first 4 KiB). */
const TABLE_TEXT = 300;

/** The browser's copies of core's wording and of the resume rule: the same functions and list, shipped as their source. */
const SHARED_JS =
  `const formatElapsed = (${formatElapsed.toString()});\nconst formatLocalTime = (${formatLocalTime.toString()});\n` +
  `const formatUsd = (${formatUsd.toString()});\nconst formatTokens = (${formatTokens.toString()});\nconst addUsd = (${addUsd.toString()});\n` +
  `const FINISHED = ${JSON.stringify(FINISHED_REASONS)};\n`;

export async function startDashboard(options: DashboardOptions): Promise<Dashboard> {
  const token = options.token ?? randomBytes(24).toString("base64url");
  const watch = new RecordsWatch(options.dir);
  watch.start();
  const streams = new Set<ServerResponse>();
  const html = ASSETS["index.html"]!.replaceAll("{{TOKEN}}", token);
  const assets: Record<string, { type: string; body: string }> = {
    "/app.js": { type: "text/javascript; charset=utf-8", body: SHARED_JS + ASSETS["app.js"]! },
    "/app.css": { type: "text/css; charset=utf-8", body: ASSETS["app.css"]! },
  };

  const unsubscribe = watch.onChange((change: Change) => {
    const message = change.kind === "run" ? sse("run", change.run) : sse("removed", change.id);
    for (const stream of streams) send(stream, message);
  });
  const send = (stream: ServerResponse, text: string) => {
    if (stream.writableLength > STREAM_BACKLOG) {
      streams.delete(stream);
      stream.destroy();
      return;
    }
    stream.write(text);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error) => {
      if (!res.headersSent) reply(res, 500, "text/plain; charset=utf-8", `${error instanceof Error ? error.message : String(error)}\n`);
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!hostAllowed(req.headers.host, options.host)) return refuse(res, `refused: Host ${JSON.stringify(req.headers.host ?? "")} does not name this server`);
    const url = new URL(req.url ?? "/", "http://dashboard.invalid");
    if (!tokenMatches(url.searchParams.get("token"), token)) return refuse(res, "refused: the token of the URL printed by 'loopx runs serve' is missing or wrong");
    const path = url.pathname;
    if (req.method === "POST") {
      if (!originAllowed(req.headers.origin, req.headers.host)) return refuse(res, "refused: a request that changes a run must come from the dashboard's own page");
      const match = /^\/api\/runs\/([0-9a-z]+)\/([a-z-]+)$/.exec(path);
      if (!match || !isControlAction(match[2])) return reply(res, 404, "text/plain; charset=utf-8", "not found\n");
      if (!watch.run(match[1]!)) return json(res, 404, { ok: false, message: `no run ${match[1]}` });
      const answer = await applyControl(options.controls, match[2], match[1]!);
      return json(res, answer.ok ? 200 : 409, answer);
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.setHeader("allow", "GET, HEAD, POST");
      return reply(res, 405, "text/plain; charset=utf-8", "method not allowed\n");
    }
    if (path === "/") return reply(res, 200, "text/html; charset=utf-8", html);
    const page = /^\/runs\/([0-9a-z]+)$/.exec(path);
    if (page) {
      reply(res, 200, "text/html; charset=utf-8", html);
      // The page will ask for the run's timeline next: index its record while the browser loads.
      setImmediate(() => watch.run(page[1]!) && watch.detail(page[1]!));
      return;
    }
    const asset = assets[path];
    if (asset) return reply(res, 200, asset.type, asset.body);
    if (path === "/api/info") return json(res, 200, { version: options.version, dir: options.dir, controls: options.controls !== undefined });
    if (path === "/api/runs") return json(res, 200, watch.runs());
    if (path === "/api/events") return stream(req, res);
    const match = /^\/api\/runs\/([0-9a-z]+)(\/timeline|\/iterations)?$/.exec(path);
    if (!match) return reply(res, 404, "text/plain; charset=utf-8", "not found\n");
    const id = match[1]!;
    const run = watch.run(id);
    if (!run) return json(res, 404, { message: `no run ${id} in ${options.dir}` });
    if (!match[2]) return json(res, 200, run);
    const index = watch.detail(id);
    if (!index) return json(res, 404, { message: `no run ${id} in ${options.dir}` });
    if (match[2] === "/timeline") {
      const open = run.current && { n: run.current.n, ms: Date.now() - Date.parse(run.current.start) };
      return json(res, 200, index.timeline(clampInt(url.searchParams.get("columns"), 1, MAX_COLUMNS, MAX_COLUMNS), open));
    }
    // Iterations, newest first: `from` is the highest n of the page (default: the newest).
    const size = clampInt(url.searchParams.get("size"), 1, MAX_PAGE, 50);
    const from = clampInt(url.searchParams.get("from"), 1, Math.max(1, index.count), index.count);
    const ns: number[] = [];
    for (let n = from; n >= 1 && ns.length < size; n--) ns.push(n);
    const { ends, notes } = watch.iterationLines(id, ns);
    const rows = ns.map((n) => {
      const row = index.iteration(n)!;
      const end = ends.get(n);
      return {
        n,
        target: row.target,
        durationMs: row.durationMs,
        flags: row.flags,
        exitCode: end ? end.exitCode : null,
        signal: end?.signal ?? null,
        goto: end?.output?.goto,
        stop: end?.output?.stop === true,
        result: end?.output?.result?.slice(0, TABLE_TEXT),
        resultBytes: end?.output?.resultBytes,
        error: end?.error?.slice(0, TABLE_TEXT),
        notes: notes.get(n)?.map((note) => ({ time: note.time, text: note.text.slice(0, TABLE_TEXT) })),
      };
    });
    return json(res, 200, { count: index.count, from, size, rows });
  }

  function stream(req: IncomingMessage, res: ServerResponse): void {
    if (streams.size >= MAX_STREAMS) return reply(res, 503, "text/plain; charset=utf-8", "too many open dashboard pages\n");
    res.writeHead(200, { ...SECURITY_HEADERS, "content-type": "text/event-stream; charset=utf-8", connection: "keep-alive" });
    res.write(`retry: 1000\n${sse("runs", watch.runs())}`);
    streams.add(res);
    const forget = () => streams.delete(res);
    req.on("close", forget);
    res.on("close", forget);
  }

  const heartbeat = setInterval(() => {
    for (const stream of streams) send(stream, ": ping\n\n");
  }, 15_000);
  heartbeat.unref();

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
        clearInterval(heartbeat);
        unsubscribe();
        watch.close();
        for (const stream of streams) stream.destroy();
        streams.clear();
        server.close(() => resolve());
        server.closeAllConnections?.();
      }),
  };
}

function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

function reply(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { ...SECURITY_HEADERS, "content-type": type, "content-length": Buffer.byteLength(body) });
  res.end(res.req?.method === "HEAD" ? undefined : body);
}

function json(res: ServerResponse, status: number, value: unknown): void {
  reply(res, status, "application/json; charset=utf-8", JSON.stringify(value));
}

function refuse(res: ServerResponse, message: string): void {
  reply(res, 403, "text/plain; charset=utf-8", `${message}\n`);
}

function clampInt(value: string | null, min: number, max: number, fallback: number): number {
  const n = value === null ? NaN : Number(value);
  return Number.isInteger(n) ? Math.min(max, Math.max(min, n)) : fallback;
}
