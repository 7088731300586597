import type { IncomingMessage } from "node:http";
import type { Readable } from "node:stream";

/**
 * An HTTP(S) GET for downloads, on node:http/node:https rather than `fetch`: Node's fetch refuses
 * the ports browsers block (6000, 6665-6669, 10080, ...) with a bare "bad port", which means
 * nothing for a CLI fetching from a local mirror or a dev server — Bun's fetch has no such list,
 * and the binary and `bun dist/bin.js` installed from where the npm package could not. What fetch
 * did for loopx is done here: redirects (as many as fetch follows), Content-Encoding decoding
 * (gzip, deflate, br), and an AbortSignal that ends the request and the body.
 */

/** What download.ts reads of a response (the shape of fetch's Response it used). */
export interface HttpResponse {
  ok: boolean;
  status: number;
  statusText: string;
  /** The URL of the final response, after redirects. */
  url: string;
  headers: { get(name: string): string | null };
  /** The body, decoded as its Content-Encoding says. */
  body: AsyncIterable<Uint8Array>;
  /** Stops reading the body and closes the connection. */
  cancel(): void;
}

/** fetch's limit (WHATWG Fetch: more than 20 redirects is a network error). */
const MAX_REDIRECTS = 20;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

function request(url: URL, signal: AbortSignal): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      reject(new Error(`unsupported protocol ${url.protocol}`));
      return;
    }
    void import(url.protocol === "https:" ? "node:https" : "node:http").then(({ get }) => {
      const req = get(url, { headers: { "accept-encoding": "gzip, deflate, br", "user-agent": "loopx" } }, resolve);
      req.on("error", reject);
      const abort = () => req.destroy(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
      if (signal.aborted) abort();
      else signal.addEventListener("abort", abort, { once: true });
      req.on("close", () => signal.removeEventListener("abort", abort));
    }, reject);
  });
}

async function decoded(response: IncomingMessage): Promise<Readable> {
  const encodings = String(response.headers["content-encoding"] ?? "")
    .split(",")
    .map((value) => value.trim().toLowerCase())
    .filter((value) => value !== "" && value !== "identity");
  if (encodings.length === 0) return response;
  const zlib = await import("node:zlib");
  let stream: Readable = response;
  // Applied in the order listed, so decoded in reverse. An unknown coding is passed on as is.
  for (const encoding of encodings.reverse()) {
    const decoder =
      encoding === "gzip" || encoding === "x-gzip"
        ? zlib.createGunzip()
        : encoding === "deflate"
          ? zlib.createInflate()
          : encoding === "br"
            ? zlib.createBrotliDecompress()
            : undefined;
    if (!decoder) break;
    const source = stream;
    source.on("error", (error) => decoder.destroy(error));
    stream = source.pipe(decoder);
  }
  return stream;
}

/** GETs `url`, following redirects; rejects on a network error or when `signal` aborts. */
export async function httpGet(url: string, signal: AbortSignal): Promise<HttpResponse> {
  let current = new URL(url);
  for (let redirects = 0; ; redirects++) {
    const response = await request(current, signal);
    const status = response.statusCode ?? 0;
    const location = response.headers.location;
    if (REDIRECTS.has(status) && location !== undefined) {
      response.destroy();
      if (redirects === MAX_REDIRECTS) throw new Error(`more than ${MAX_REDIRECTS} redirects`);
      current = new URL(location, current);
      continue;
    }
    const body = await decoded(response);
    const abort = () => body.destroy(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
    signal.addEventListener("abort", abort, { once: true });
    body.on("close", () => signal.removeEventListener("abort", abort));
    return {
      ok: status >= 200 && status < 300,
      status,
      statusText: response.statusMessage ?? "",
      url: current.href,
      headers: {
        get: (name) => {
          const value = response.headers[name.toLowerCase()];
          return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
        },
      },
      body,
      cancel: () => {
        body.destroy();
        response.destroy();
      },
    };
  }
}
