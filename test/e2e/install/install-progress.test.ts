/**
 * `loopx install` of a slow download: on a terminal, a progress line once the
 * download takes over a second (bytes, of how many, the rate), cleared when it ends; off a
 * terminal nothing. A real HTTP server on 127.0.0.1 that sends the archive over ~2 s; the terminal
 * is a real pseudo-terminal (`script`). On node, bun and the binary (their HTTP clients differ).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CHANNELS, makeProject } from "../../helpers.js";
import { onPty } from "../../fixtures/channels.js";
import { installEnv, startServer, tarGzOfTree, type TestServer } from "../../fixtures/install/support.js";

const FLOW = { "index.sh": "#!/bin/bash\necho '{\"stop\":true}'\n", "padding.txt": "x".repeat(4096) };
const body = tarGzOfTree(FLOW, "flow-main");
const servers: TestServer[] = [];
afterAll(async () => {
  for (const server of servers) await server.stop();
});

/** Sends `body` in 10 pieces, 200 ms apart, with its Content-Length. */
async function slowServer(): Promise<TestServer> {
  const server = await startServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/gzip", "content-length": body.length });
    const piece = Math.ceil(body.length / 10);
    let sent = 0;
    const timer = setInterval(() => {
      res.write(body.subarray(sent, sent + piece));
      sent += piece;
      if (sent >= body.length) {
        clearInterval(timer);
        res.end();
      }
    }, 200);
  });
  servers.push(server);
  return server;
}

describe("install: a slow download", () => {
  it.concurrent.each(CHANNELS)("$name: a progress line on a terminal, cleared at the end", async (channel) => {
    const server = await slowServer();
    const cwd = makeProject();
    const { env } = installEnv({ TERM: "xterm" });
    const tty = await onPty([...channel.argv, "install", `${server.origin}/flow.tar.gz`], cwd, env);
    expect(tty.code, tty.stdout).toBe(0);
    expect(tty.stdout).toMatch(/\r\x1b\[Kloopx: downloading http:\/\/127\.0\.0\.1:\d+\/flow\.tar\.gz · \d+\.\d MB of \d+\.\d MB \(\d+%\) · [\d.]+ MB\/s/);
    expect(tty.stdout).toMatch(/\/s\r\x1b\[K/); // cleared before loopx says anything else
    expect(existsSync(join(cwd, ".loopx", "flow", "index.sh"))).toBe(true);

    // Off a terminal nothing is said (install-tarball.test.ts: stderr stays empty).
  });
});
