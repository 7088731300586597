import { timingSafeEqual } from "node:crypto";
import { isIP } from "node:net";

/**
 * The dashboard's security model (pure decisions; the server applies them): a local developer
 * tool that can see and steer every loop of its user.
 * - It listens on 127.0.0.1 unless another address is given explicitly.
 * - Every request carries the random token printed in the URL (`?token=`), streams included; the
 *   page passes it on to every request it makes. No cookies: a cookie would reach every other
 *   server on 127.0.0.1, whatever its port.
 * - The Host header names the server by an IP address, `localhost`, or the address given with
 *   --host: a DNS-rebinding page (evil.example resolving to 127.0.0.1) sends its own name.
 * - Requests that change state are POSTs whose Origin is this server; no CORS headers are ever
 *   sent, so other origins can neither read answers nor send non-simple requests.
 * - The one exception to the token: a browser's own `GET /favicon.ico` (no query), answered 204
 *   with no body; nothing else is reachable without the token.
 * - The page runs only its own script (CSP, no inline script) and shows every text of a record as
 *   text (textContent, never HTML).
 */

/** The security headers of every answer. */
export const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cache-control": "no-store",
  "cross-origin-resource-policy": "same-origin",
};

/** True for the browser's own request for a page icon: GET or HEAD of exactly `/favicon.ico`, no query. */
export function isFaviconAsk(req: { method?: string }, url: URL): boolean {
  return (req.method === "GET" || req.method === "HEAD") && url.pathname === "/favicon.ico" && url.search === "";
}

/** True if `given` is the token (constant time). */
export function tokenMatches(given: string | null | undefined, token: string): boolean {
  if (typeof given !== "string") return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The host name of a Host header (`[::1]:8080` → `::1`), lower-cased; undefined if malformed. */
export function hostName(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const value = header.trim().toLowerCase();
  if (value.startsWith("[")) {
    const close = value.indexOf("]");
    if (close < 0) return undefined;
    const rest = value.slice(close + 1);
    if (rest !== "" && !/^:\d{1,5}$/.test(rest)) return undefined;
    return value.slice(1, close);
  }
  const match = /^([^:]+)(?::\d{1,5})?$/.exec(value);
  return match?.[1];
}

/**
 * True if a request naming `header` as its Host may be answered: an IP address (no DNS involved),
 * `localhost`, or the address the server was explicitly bound to. Any port: `ssh -L 9000:...`
 * forwards to this server under another port.
 */
export function hostAllowed(header: string | undefined, boundHost: string): boolean {
  const name = hostName(header);
  if (name === undefined) return false;
  if (isIP(name) !== 0 || name === "localhost") return true;
  return name === boundHost.toLowerCase().replace(/^\[(.*)\]$/, "$1");
}

/** True if a state-changing request's Origin is this very server (as named by its Host). */
export function originAllowed(origin: string | undefined, host: string | undefined): boolean {
  if (!origin || !host) return false;
  return origin === `http://${host}`;
}

/** True for addresses only this machine can reach. */
export function isLoopback(host: string): boolean {
  const name = host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  return name === "localhost" || name === "::1" || /^127\.\d+\.\d+\.\d+$/.test(name);
}

/** `host` as it stands in a URL (IPv6 in brackets). */
export function urlHost(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host;
}
