import type { IncomingMessage, ServerResponse } from "node:http";
import { applyControl, isControlAction, type ControlChannel } from "./controls.js";
import type { RecordsWatch } from "./records-watch.js";
import { clampInt, json, reply, text } from "./responses.js";
import type { EventStreams } from "./streams.js";

/**
 * What the dashboard answers, as a table: method, path pattern, handler. The server (server.ts)
 * runs a request through the security gate first and then through the first route that matches;
 * none matching is a 404.
 */

/** What a handler gets besides the request: the dashboard's parts. */
export interface RouteContext {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  watch: RecordsWatch;
  streams: EventStreams;
  /** The page, the token in it. */
  html: string;
  assets: Record<string, { type: string; body: string }>;
  info: { version: string; dir: string; controls: ControlChannel | undefined };
}

interface Route {
  method: "GET" | "POST";
  path: RegExp;
  /** `params`: the pattern's groups. */
  handle(context: RouteContext, params: string[]): void | Promise<void>;
}

/** Longest timeline the chart draws column per iteration; longer runs share columns. */
const MAX_COLUMNS = 600;
const MAX_PAGE = 200;
/** Characters of `result` / `error` the table shows (the record keeps the first 4 KiB). */
const TABLE_TEXT = 300;

const ROUTES: Route[] = [
  { method: "POST", path: /^\/api\/runs\/([0-9a-z]+)\/([a-z-]+)$/, handle: control },
  { method: "GET", path: /^\/$/, handle: ({ res, html }) => reply(res, 200, "text/html; charset=utf-8", html) },
  { method: "GET", path: /^\/runs\/([0-9a-z]+)$/, handle: runPage },
  { method: "GET", path: /^(\/app\.js|\/app\.css)$/, handle: ({ res, assets }, [path]) => reply(res, 200, assets[path!]!.type, assets[path!]!.body) },
  { method: "GET", path: /^\/api\/info$/, handle: ({ res, info }) => json(res, 200, { version: info.version, dir: info.dir, controls: info.controls !== undefined }) },
  { method: "GET", path: /^\/api\/runs$/, handle: ({ res, watch }) => json(res, 200, watch.runs()) },
  { method: "GET", path: /^\/api\/events$/, handle: ({ req, res, streams }) => streams.open(req, res) },
  { method: "GET", path: /^\/api\/runs\/([0-9a-z]+)$/, handle: run },
  { method: "GET", path: /^\/api\/runs\/([0-9a-z]+)\/timeline$/, handle: timeline },
  { method: "GET", path: /^\/api\/runs\/([0-9a-z]+)\/iterations$/, handle: iterations },
];

/** Answers the request with the first route of its method (HEAD as GET) that matches its path. */
export async function route(context: RouteContext): Promise<void> {
  const method = context.req.method === "POST" ? "POST" : "GET";
  for (const candidate of ROUTES) {
    if (candidate.method !== method) continue;
    const match = candidate.path.exec(context.url.pathname);
    if (match) return candidate.handle(context, match.slice(1));
  }
  text(context.res, 404, "not found");
}

/** A button of the page: stop, pause, continue or resume the run. */
async function control({ res, watch, info }: RouteContext, [id, action]: string[]): Promise<void> {
  if (!isControlAction(action)) return text(res, 404, "not found");
  if (!watch.run(id!)) return json(res, 404, { ok: false, message: `no run ${id}` });
  const answer = await applyControl(info.controls, action, id!);
  json(res, answer.ok ? 200 : 409, answer);
}

function runPage({ res, watch, html }: RouteContext, [id]: string[]): void {
  reply(res, 200, "text/html; charset=utf-8", html);
  // The page will ask for the run's timeline next: index its record while the browser loads.
  setImmediate(() => watch.run(id!) && watch.detail(id!));
}

function run({ res, watch, info }: RouteContext, [id]: string[]): void {
  const found = watch.run(id!);
  if (!found) return json(res, 404, { message: `no run ${id} in ${info.dir}` });
  json(res, 200, found);
}

/** The run and its iteration index, or a 404 answered. */
function indexed({ res, watch, info }: RouteContext, id: string) {
  const found = watch.run(id);
  const index = found && watch.detail(id);
  if (!found || !index) {
    json(res, 404, { message: `no run ${id} in ${info.dir}` });
    return undefined;
  }
  return { run: found, index };
}

function timeline(context: RouteContext, [id]: string[]): void {
  const found = indexed(context, id!);
  if (!found) return;
  const { run, index } = found;
  const open = run.current && { n: run.current.n, ms: Date.now() - Date.parse(run.current.start) };
  json(context.res, 200, index.timeline(clampInt(context.url.searchParams.get("columns"), 1, MAX_COLUMNS, MAX_COLUMNS), open));
}

/** Iterations, newest first: `from` is the highest n of the page (default: the newest). */
function iterations(context: RouteContext, [id]: string[]): void {
  const found = indexed(context, id!);
  if (!found) return;
  const { index } = found;
  const { searchParams } = context.url;
  const size = clampInt(searchParams.get("size"), 1, MAX_PAGE, 50);
  const from = clampInt(searchParams.get("from"), 1, Math.max(1, index.count), index.count);
  const ns: number[] = [];
  for (let n = from; n >= 1 && ns.length < size; n--) ns.push(n);
  const { ends, notes } = context.watch.iterationLines(id!, ns);
  const rows = ns.map((n) => {
    const row = index.iteration(n)!;
    const end = ends.get(n);
    return {
      n,
      target: row.target,
      durationMs: row.durationMs,
      flags: row.flags,
      // As `runs show` has them: the try a resume ran again, the resume above a sitting's first row, the receipts.
      retry: row.retry,
      resumed: index.resumes.filter((resume) => resume.n === n).map(({ time, target, pid }) => ({ n, time, target, pid })),
      billed: row.billed,
      estimate: row.estimate,
      tokens: row.tokens,
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
  json(context.res, 200, { count: index.count, from, size, rows });
}
