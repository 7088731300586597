import type { ServerResponse } from "node:http";
import { SECURITY_HEADERS } from "./security.js";

/** The dashboard's answers: every one carries the security headers (security.ts). */

export function reply(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { ...SECURITY_HEADERS, "content-type": type, "content-length": Buffer.byteLength(body) });
  res.end(res.req?.method === "HEAD" ? undefined : body);
}

export function json(res: ServerResponse, status: number, value: unknown): void {
  reply(res, status, "application/json; charset=utf-8", JSON.stringify(value));
}

export function text(res: ServerResponse, status: number, message: string): void {
  reply(res, status, "text/plain; charset=utf-8", `${message}\n`);
}

/** One server-sent event. */
export function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** An integer query parameter, clamped to [min, max]; `fallback` when absent or not an integer. */
export function clampInt(value: string | null, min: number, max: number, fallback: number): number {
  const n = value === null ? NaN : Number(value);
  return Number.isInteger(n) ? Math.min(max, Math.max(min, n)) : fallback;
}
