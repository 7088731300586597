import { connect, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";

/**
 * The fenced network: inside, a script has only its own loopback. loopx relays what the policy
 * allows across the fence through Unix sockets in the sandbox's directory (bound into the fence):
 * - `127.0.0.1:<port>` / `localhost:<port>`: the relay inside (relay.ts) listens on that port of
 *   its loopback; each connection is carried to the same port of the host's 127.0.0.1;
 * - any other `host:port`: through an HTTP proxy (HTTPS_PROXY, HTTP_PROXY inside) whose far end
 *   here connects only to the allowed hosts and ports; a refused one is a 403 and is reported.
 * Everything else fails inside: there is no route and no name resolution.
 */

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** Where the relay inside listens, and the socket it carries each connection through. */
interface Forward {
  port: number;
  socket: string;
}

interface BridgePlan {
  forwards: Forward[];
  /** The proxy's port inside, when the policy allows hosts beyond the loopback. */
  proxyPort?: number;
}

/** Both ways, each end's end passed on once what came before it is written (an error ends both at once). */
const pipeBoth = (a: Socket, b: Socket): void => {
  a.on("error", () => b.destroy());
  b.on("error", () => a.destroy());
  a.pipe(b);
  b.pipe(a);
};

function listenOn(server: Server, path: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => resolve(server));
  });
}

const HEAD_LIMIT = 16 * 1024;

/** The proxy's far end: one request head, then a tunnel to an allowed host, or a 403. */
function proxyConnection(client: Socket, allowed: Set<string>, denied: (target: string) => void): void {
  let head = Buffer.alloc(0);
  client.on("error", () => client.destroy());
  const onData = (chunk: Buffer): void => {
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf("\r\n\r\n");
    if (end < 0) {
      if (head.length > HEAD_LIMIT) client.destroy();
      return;
    }
    client.off("data", onData);
    const [method = "", url = ""] = head.subarray(0, head.indexOf("\r\n")).toString("latin1").split(" ");
    const connectMethod = method.toUpperCase() === "CONNECT";
    let target: { host: string; port: number } | undefined;
    try {
      const parsed = new URL(connectMethod ? `http://${url}` : url);
      target = { host: parsed.hostname.toLowerCase(), port: Number(parsed.port || (parsed.protocol === "https:" ? 443 : 80)) };
    } catch {
      target = undefined;
    }
    const name = target ? `${target.host.includes(":") ? `[${target.host}]` : target.host}:${target.port}` : url;
    if (!target || !allowed.has(name)) {
      denied(name);
      client.end("HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nloopx sandbox: not allowed by the policy\n");
      return;
    }
    const upstream = connect(target.port, target.host.replace(/^\[|\]$/g, ""));
    upstream.once("connect", () => {
      if (connectMethod) client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      const rest = connectMethod ? head.subarray(end + 4) : head;
      if (rest.length > 0) upstream.write(rest);
      pipeBoth(client, upstream);
    });
    upstream.once("error", () => client.end("HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n"));
  };
  client.on("data", onData);
}

/** The far ends, listening on Unix sockets in `dir`, until `close()`. */
export class NetworkBridge {
  private constructor(
    readonly plan: BridgePlan,
    private readonly servers: Server[],
  ) {
    for (const server of servers) {
      server.on("connection", (socket: Socket) => {
        this.sockets.add(socket);
        socket.on("close", () => this.sockets.delete(socket));
      });
    }
  }

  private readonly sockets = new Set<Socket>();

  static async start(dir: string, network: readonly string[], denied: (target: string) => void): Promise<NetworkBridge> {
    const servers: Server[] = [];
    const forwards: Forward[] = [];
    const remote = new Set<string>();
    for (const entry of network) {
      const colon = entry.lastIndexOf(":");
      const host = entry.slice(0, colon).toLowerCase();
      const port = Number(entry.slice(colon + 1));
      if (!LOOPBACK.has(host)) {
        remote.add(`${host}:${port}`);
        continue;
      }
      if (forwards.some((forward) => forward.port === port)) continue;
      const socket = join(dir, `port-${port}.sock`);
      const server = createServer((inner) => pipeBoth(inner, connect(port, host === "[::1]" ? "::1" : "127.0.0.1")));
      servers.push(await listenOn(server, socket));
      forwards.push({ port, socket });
    }
    let proxyPort: number | undefined;
    if (remote.size > 0) {
      proxyPort = [3128, 3129, 8118, 18080].find((port) => !forwards.some((forward) => forward.port === port))!;
      const socket = join(dir, "proxy.sock");
      servers.push(await listenOn(createServer((client) => proxyConnection(client, remote, denied)), socket));
      forwards.push({ port: proxyPort, socket });
    }
    return new NetworkBridge({ forwards, ...(proxyPort !== undefined ? { proxyPort } : {}) }, servers);
  }

  /** The proxy variables a fenced script gets (the loopback ports are reached directly). */
  proxyEnv(): Record<string, string> {
    if (this.plan.proxyPort === undefined) return {};
    const url = `http://127.0.0.1:${this.plan.proxyPort}`;
    const local = "127.0.0.1,localhost,::1";
    return { HTTPS_PROXY: url, HTTP_PROXY: url, https_proxy: url, http_proxy: url, ALL_PROXY: url, NO_PROXY: local, no_proxy: local };
  }

  close(): void {
    for (const server of this.servers) server.close();
    for (const socket of this.sockets) socket.destroy();
  }
}
