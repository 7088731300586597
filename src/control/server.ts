import { chmodSync, lstatSync, readdirSync, unlinkSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { fsReason, LoopxError } from "../core/errors.js";
import { controlDirs, fitsSocketAddress, privateDir, socketName } from "./paths.js";
import { MAX_REQUEST_BYTES, type ControlReply, type ControlRequest } from "./protocol.js";

/**
 * The socket side of a run's control channel: where it listens, the one-line protocol
 * (control/protocol.ts), and the sockets of dead runs swept away. What a request does is
 * control/steering.ts; control/part.ts ties the two to the run.
 */

/**
 * A connection's handler: one request line in, one reply line out, then the connection ends.
 * `going`: whether the run takes requests at all (not before it begins nor after it ends).
 */
export function lineServer(handle: (request: ControlRequest) => ControlReply, going: () => boolean): (socket: Socket) => void {
  return (socket) => {
    let data = "";
    socket.setEncoding("utf8");
    socket.on("error", () => undefined);
    socket.on("data", (chunk: string) => {
      data += chunk;
      const newline = data.indexOf("\n");
      if (newline < 0) {
        if (data.length > MAX_REQUEST_BYTES) socket.destroy();
        return;
      }
      let reply: ControlReply;
      try {
        reply = going() ? handle(JSON.parse(data.slice(0, newline)) as ControlRequest) : { ok: false, message: "the run is not going" };
      } catch {
        reply = { ok: false, message: "not a control request" };
      }
      socket.end(`${JSON.stringify(reply)}\n`);
    });
  };
}

/**
 * Listens on `<dir>/<run id>.sock` in the first private directory whose path fits (a socket left
 * there by the same run — it died and is resumed — is replaced); unref'd. Sockets of runs that died
 * in the same directory are removed in passing.
 */
export async function listen(env: Record<string, string | undefined>, runId: string, serve: (socket: Socket) => void): Promise<{ server: Server; path: string; made: string | undefined }> {
  const problems: string[] = [];
  for (const dir of controlDirs(env)) {
    const path = join(dir, socketName(runId));
    if (!fitsSocketAddress(path)) {
      problems.push(`${path} is too long for a socket`);
      continue;
    }
    let made: string | undefined;
    try {
      made = privateDir(dir);
    } catch (error) {
      problems.push(error instanceof Error ? error.message : String(error));
      continue;
    }
    try {
      if (lstatSync(path).isSocket()) unlinkSync(path);
    } catch {
      // Not there: the usual case.
    }
    const server = createServer(serve);
    const listening = () =>
      new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(path, () => {
          server.off("error", reject);
          resolve();
        });
      });
    try {
      await listening().catch((error: NodeJS.ErrnoException) => {
        // Another run's end removed the directory, empty, between our mkdir and listen: again.
        if (error.code !== "ENOENT") throw error;
        made = privateDir(dir) ?? made;
        return listening();
      });
    } catch (error) {
      problems.push(`cannot listen on ${path}: ${fsReason(error)}`);
      continue;
    }
    server.on("error", () => undefined);
    server.unref();
    try {
      chmodSync(path, 0o600);
    } catch {
      // The directory is what keeps others out.
    }
    sweepDeadSockets(dir, path);
    return { server, path, made };
  }
  throw new LoopxError(problems.join("; "));
}

/** Removes sockets nobody listens on any more (runs that were killed), without waiting for it. */
function sweepDeadSockets(dir: string, own: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  const old = Date.now() - 60_000;
  for (const name of names.slice(0, 64)) {
    const path = join(dir, name);
    if (path === own || !name.endsWith(".sock")) continue;
    try {
      // A socket made this minute may belong to a run that is just starting to listen.
      if (lstatSync(path).mtimeMs > old) continue;
    } catch {
      continue;
    }
    const probe = connect(path);
    probe.unref();
    probe.on("connect", () => probe.destroy());
    probe.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ECONNREFUSED") {
        try {
          unlinkSync(path);
        } catch {
          // Gone meanwhile.
        }
      }
    });
  }
}
