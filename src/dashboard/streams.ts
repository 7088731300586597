import type { IncomingMessage, ServerResponse } from "node:http";
import type { Change, RecordsWatch } from "./records-watch.js";
import { SECURITY_HEADERS } from "./security.js";
import { sse, text } from "./responses.js";

const MAX_STREAMS = 64;
/** A stream whose client stops reading is dropped before it holds more than this. */
const STREAM_BACKLOG = 1024 * 1024;

/**
 * The pages' live updates (`/api/events`): server-sent events, one stream per open page, fed by the
 * records watch; a heartbeat every 15 s keeps proxies from closing an idle stream.
 */
export class EventStreams {
  private readonly streams = new Set<ServerResponse>();
  private readonly unsubscribe: () => void;
  private readonly heartbeat: ReturnType<typeof setInterval>;

  constructor(private readonly watch: RecordsWatch) {
    this.unsubscribe = watch.onChange((change: Change) => {
      const message = change.kind === "run" ? sse("run", change.run) : sse("removed", change.id);
      for (const stream of this.streams) this.send(stream, message);
    });
    this.heartbeat = setInterval(() => {
      for (const stream of this.streams) this.send(stream, ": ping\n\n");
    }, 15_000);
    this.heartbeat.unref();
  }

  /** Opens a stream on `res`: the runs as they are now, then every change. */
  open(req: IncomingMessage, res: ServerResponse): void {
    if (this.streams.size >= MAX_STREAMS) return text(res, 503, "too many open dashboard pages");
    res.writeHead(200, { ...SECURITY_HEADERS, "content-type": "text/event-stream; charset=utf-8", connection: "keep-alive" });
    res.write(`retry: 1000\n${sse("runs", this.watch.runs())}`);
    this.streams.add(res);
    const forget = () => this.streams.delete(res);
    req.on("close", forget);
    res.on("close", forget);
  }

  close(): void {
    clearInterval(this.heartbeat);
    this.unsubscribe();
    for (const stream of this.streams) stream.destroy();
    this.streams.clear();
  }

  private send(stream: ServerResponse, message: string): void {
    if (stream.writableLength > STREAM_BACKLOG) {
      this.streams.delete(stream);
      stream.destroy();
      return;
    }
    stream.write(message);
  }
}
