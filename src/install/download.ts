import { open } from "node:fs/promises";
import { LoopxError } from "../core/errors.js";
import { displayUrl } from "./source.js";

/** A download fails when the server sends nothing (no headers, no body bytes) for this long. */
export const STALL_TIMEOUT_MS = 15_000;

class Stalled extends Error {}

/** The most specific one-line reason in a fetch error (Node nests the socket error in `cause`). */
function networkReason(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 4; depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    const text = current.message && current.message !== "fetch failed" ? current.message : "";
    const part = code && !text.includes(code) ? (text ? `${text} (${code})` : code) : text;
    if (part && !parts.includes(part)) parts.push(part);
    current = (current as { cause?: unknown }).cause;
  }
  if (parts.length === 0) parts.push(String(error));
  return parts.join(": ").replace(/\s*[\r\n]+\s*/g, " ");
}

/**
 * Downloads `url` to `file` with `fetch`, following redirects. A non-2xx final status, a network
 * error, a body cut short, or a server that goes silent for {@link STALL_TIMEOUT_MS} is an error.
 */
export async function downloadToFile(url: string, file: string): Promise<void> {
  const shown = displayUrl(url);
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => controller.abort(new Stalled()), STALL_TIMEOUT_MS);
  };
  const stalledMessage = `cannot download ${shown}: the server sent no data for ${STALL_TIMEOUT_MS / 1000} s (timed out)`;
  arm();
  const output = await open(file, "wx");
  try {
    let response: Response;
    try {
      response = await fetch(url, { redirect: "follow", signal: controller.signal });
    } catch (error) {
      if (controller.signal.aborted) throw new LoopxError(stalledMessage);
      throw new LoopxError(`cannot download ${shown}: ${networkReason(error)}`);
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      const final = response.url && response.url !== url ? ` (redirected to ${displayUrl(response.url)})` : "";
      throw new LoopxError(`cannot download ${shown}: HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}${final}`);
    }
    arm();
    try {
      if (response.body) {
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          arm();
          try {
            await output.write(chunk);
          } catch (error) {
            throw new LoopxError(`cannot download ${shown}: cannot write ${file}: ${networkReason(error)}`);
          }
        }
      }
    } catch (error) {
      if (error instanceof LoopxError) throw error;
      if (controller.signal.aborted) throw new LoopxError(stalledMessage);
      throw new LoopxError(`cannot download ${shown}: the download was cut short (${networkReason(error)})`);
    }
  } finally {
    clearTimeout(timer);
    await output.close();
  }
}
