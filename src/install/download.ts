import { open } from "node:fs/promises";
import { LoopxError } from "../core/errors.js";
import { httpGet, type HttpResponse } from "./http.js";
import { MAX_ARCHIVE_BYTES, TOO_LARGE_DOWNLOAD } from "./limits.js";
import { downloadProgress, type DownloadProgress } from "./progress.js";
import { displayUrl } from "./source.js";

/** A download fails when the server sends nothing (no headers, no body bytes) for this long. */
const STALL_TIMEOUT_MS = 15_000;

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
  return parts
    .join(": ")
    .replace(/\s*For more information, pass `verbose: true` in the second argument to fetch\(\)\.?/g, "") // Bun's advice
    .replace(/\s*[\r\n]+\s*/g, " ");
}

/**
 * Downloads `url` to `file` (http.ts: any port, as Bun's fetch allows), following redirects. A non-2xx final status, a network
 * error, a body cut short, or a server that goes silent for {@link STALL_TIMEOUT_MS} is an error,
 * and so is a body (as decoded, if the server compresses it) past {@link MAX_ARCHIVE_BYTES}: refused
 * from its Content-Length before any of it is read, or as soon as the running total passes it.
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
  let response: HttpResponse | undefined;
  let progress: DownloadProgress | undefined;
  try {
    try {
      response = await httpGet(url, controller.signal);
    } catch (error) {
      if (controller.signal.aborted) throw new LoopxError(stalledMessage);
      throw new LoopxError(`cannot download ${shown}: ${networkReason(error)}`);
    }
    if (!response.ok) {
      response.cancel();
      const final = response.url && response.url !== url ? ` (redirected to ${displayUrl(response.url)})` : "";
      throw new LoopxError(`cannot download ${shown}: HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}${final}`);
    }
    const tooLarge = new LoopxError(`cannot download ${shown}: ${TOO_LARGE_DOWNLOAD}`);
    const announced = Number(response.headers.get("content-length") ?? Number.NaN);
    if (announced > MAX_ARCHIVE_BYTES) {
      response.cancel();
      throw tooLarge;
    }
    arm();
    let received = 0;
    progress = downloadProgress(shown, Number.isNaN(announced) ? undefined : announced);
    try {
      for await (const chunk of response.body) {
        arm();
        received += chunk.byteLength;
        progress.update(received);
        if (received > MAX_ARCHIVE_BYTES) throw tooLarge; // leaving the loop destroys the body
        try {
          await output.write(chunk);
        } catch (error) {
          throw new LoopxError(`cannot download ${shown}: cannot write ${file}: ${networkReason(error)}`);
        }
      }
    } catch (error) {
      if (error instanceof LoopxError) throw error;
      if (controller.signal.aborted) throw new LoopxError(stalledMessage);
      throw new LoopxError(`cannot download ${shown}: the download was cut short (${networkReason(error)})`);
    }
  } finally {
    progress?.done();
    clearTimeout(timer);
    response?.cancel();
    await output.close();
  }
}
