/**
 * `loopx runs serve` over HTTP, under node, bun and the standalone binary: it starts on
 * 127.0.0.1 and prints its URL once; the token is required on every request (the page, the JSON,
 * the event stream); a foreign Host is refused (DNS rebinding); a POST from another origin is
 * refused; no CORS; the CSP forbids inline scripts; another --host only with a warning; bad options
 * are one line and exit 1; SIGTERM ends it leaving nothing behind. The JSON answers come from the
 * records, crashed runs included; new events stream to an open /api/events.
 */
import { createServer } from "node:net";
import { Script } from "node:vm";
import { describe, expect, it } from "vitest";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isolatedEnv, processAlive, runCommand, sh, tempDir, waitFor } from "../../helpers.js";
import { CHANNELS, request, serve } from "../../dashboard-helpers.js";
import { appendEvent, syntheticId, writeSyntheticRecord } from "../../fixtures/dashboard/records.js";

describe.each(CHANNELS)("loopx runs serve under $name", (channel) => {
  it("prints one URL on 127.0.0.1 with a token; the token, the Host and the Origin are checked on every request", async () => {
    const env = isolatedEnv();
    const id = syntheticId("served");
    writeSyntheticRecord(env.XDG_STATE_HOME!, { id, iterations: 12, failEvery: 4 });
    const served = await serve(channel, env);
    try {
      expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{32}$/);
      expect(served.stdout()).toBe(`${served.url}\n`);
      expect(served.stderr()).toBe("");
      const { base, token } = served;

      // The page, with its security headers.
      const page = await request(served.url);
      expect(page.status).toBe(200);
      expect(page.headers["content-type"]).toMatch(/^text\/html/);
      const csp = String(page.headers["content-security-policy"]);
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain("unsafe-inline");
      expect(page.headers["access-control-allow-origin"]).toBeUndefined();
      expect(page.body).not.toMatch(/<script>|<script [^>]*>[^<]/); // no inline script
      // The page's script, core's wording functions included, is valid JS in every channel
      // (the binary's are minified).
      const script = await request(`${served.base}/app.js?token=${served.token}`);
      expect(script.status).toBe(200);
      expect(() => new Script(script.body)).not.toThrow();
      // Strict mode for the whole script: the directive is its first statement, before the shared code.
      expect(script.body).toMatch(/^"use strict";\nconst formatElapsed = \(/);
      expect(script.body.match(/"use strict"/g)).toHaveLength(1);

      // Without the token, or with a wrong one: 403, for the page, the JSON and the stream. The
      // wrong one differs in its last character (a random token may end in "x" itself).
      const wrong = `${token.slice(0, -1)}${token.endsWith("x") ? "y" : "x"}`;
      for (const path of ["/", `/runs/${id}`, "/api/runs", `/api/runs/${id}/timeline`, "/api/events", "/app.js"]) {
        expect((await request(`${base}${path}`)).status, path).toBe(403);
        expect((await request(`${base}${path}?token=${wrong}`)).status, path).toBe(403);
      }
      expect((await request(`${base}/api/runs/${id}/stop`, { method: "POST", headers: { origin: base } })).status).toBe(403);

      // A foreign Host (a DNS-rebinding page under its own name) is refused, token or not.
      const rebound = await request(`${base}/api/runs?token=${token}`, { headers: { host: `evil.example:${new URL(base).port}` } });
      expect(rebound.status).toBe(403);
      expect(rebound.body).toContain("Host");
      // localhost and IP addresses under any port pass (ssh -L forwards from another port).
      expect((await request(`${base}/api/runs?token=${token}`, { headers: { host: "localhost:9999" } })).status).toBe(200);

      // JSON over the records.
      const runs = JSON.parse((await request(`${base}/api/runs?token=${token}`)).body);
      expect(runs).toHaveLength(1);
      expect(runs[0]).toMatchObject({ id, state: "stopped", iterations: 12 });
      const timeline = JSON.parse((await request(`${base}/api/runs/${id}/timeline?token=${token}`)).body);
      expect(timeline).toMatchObject({ count: 12, perColumn: 1 });
      expect(timeline.columns.filter((c: number[]) => c[5]! > 0).map((c: number[]) => c[0])).toEqual([4, 8, 12]);

      // State changes: POST from the page's own origin only; a GET never changes anything.
      const foreign = await request(`${base}/api/runs/${id}/stop?token=${token}`, { method: "POST", headers: { origin: "http://evil.example" } });
      expect(foreign.status).toBe(403);
      expect((await request(`${base}/api/runs/${id}/stop?token=${token}`, { method: "POST" })).status).toBe(403);
      expect((await request(`${base}/api/runs/${id}/stop?token=${token}`)).status).toBe(404);
      const own = await request(`${base}/api/runs/${id}/stop?token=${token}`, { method: "POST", headers: { origin: base } });
      expect(own.status).not.toBe(403);
      expect(JSON.parse(own.body).message).toBeTruthy();
      const preflight = await request(`${base}/api/runs/${id}/stop?token=${token}`, { method: "OPTIONS", headers: { origin: "http://evil.example", "access-control-request-method": "POST" } });
      expect(preflight.status).toBe(405);
      expect(preflight.headers["access-control-allow-origin"]).toBeUndefined();
    } finally {
      const { code } = await served.stop();
      expect(code).toBe(0);
    }
    expect(processAlive(served.child.pid!)).toBe(false);
  });

  it("streams a run's new events and notices a crashed run (its process gone without run.end)", async () => {
    const env = isolatedEnv();
    const served = await serve(channel, env);
    try {
      const sleeper = (await import("node:child_process")).spawn("sleep", ["30"], { stdio: "ignore" });
      const id = syntheticId("streamed");
      const path = writeSyntheticRecord(env.XDG_STATE_HOME!, { id, iterations: 2, ended: false, pid: sleeper.pid!, startMs: Date.now() - 500 });
      const events: string[] = [];
      const stream = (await import("node:http")).get(`${served.base}/api/events?token=${served.token}`, (res) => {
        res.setEncoding("utf8").on("data", (chunk: string) => events.push(chunk));
      });
      try {
        expect(await waitFor(() => events.join("").includes(`"id":"${id}"`), 10_000)).toBe(true);
        appendEvent(path, { run: id, type: "iteration.start", time: new Date().toISOString(), n: 3, target: "synthetic:index" });
        expect(await waitFor(() => /"iterations":3,[^\n]*"current":\{"n":3/.test(events.join("")), 10_000)).toBe(true);
        sleeper.kill("SIGKILL");
        expect(await waitFor(() => events.join("").includes(`"id":"${id}","state":"crashed"`), 10_000)).toBe(true);
      } finally {
        stream.destroy();
        sleeper.kill("SIGKILL");
      }
    } finally {
      await served.stop();
    }
  });

  it("another --host only with a warning line; --open opens the URL; bad options are one line and exit 1", async () => {
    const env = isolatedEnv();
    const served = await serve(channel, env, ["--host", "0.0.0.0"]);
    try {
      expect(served.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+\/\?token=/);
      await waitFor(() => served.stderr() !== "", 2000);
      expect(served.stderr()).toMatch(/^loopx: warning: serving on 0\.0\.0\.0, not only on this machine: [^\n]*token[^\n]*\n$/);
    } finally {
      await served.stop();
    }

    // --open hands the URL to the desktop's opener (here a stand-in on PATH; it renames its file
    // into place, so "opened" never exists empty).
    const bin = tempDir("loopx-opener-");
    writeFileSync(join(bin, process.platform === "darwin" ? "open" : "xdg-open"), sh(`echo "$1" > "${bin}/opening" && mv "${bin}/opening" "${bin}/opened"`), { mode: 0o755 });
    const opened = await serve(channel, { ...env, PATH: `${bin}:${env.PATH}` }, ["--open"]);
    try {
      expect(await waitFor(() => existsSync(join(bin, "opened")), 10_000)).toBe(true);
      expect(readFileSync(join(bin, "opened"), "utf8")).toBe(`${opened.url}\n`);
      expect(opened.stdout()).toBe(`${opened.url}\n`);
    } finally {
      await opened.stop();
    }

    const loopx = (args: string[]) => runCommand(channel.argv[0]!, [...channel.argv.slice(1), "runs", "serve", ...args], { cwd: env.HOME!, env });
    for (const args of [["--port", "70000"], ["--port", "abc"], ["--bogus"], ["--host", ""]]) {
      const result = await loopx(args);
      expect(result.code, args.join(" ")).toBe(1);
      expect(result.stdout).toBe("");
      expect(result.stderr.trimEnd().split("\n"), result.stderr).toHaveLength(1);
    }
    expect((await loopx(["--port", "70000"])).stderr).toContain("--port");
    const help = await loopx(["-h"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("loopx runs serve [--port <port>] [--host <address>] [--open]");

    // A port in use: one line naming it.
    const blocker = createServer().listen(0, "127.0.0.1");
    await new Promise((resolve) => blocker.once("listening", resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const busy = await loopx(["--port", String(port)]);
      expect(busy.code).toBe(1);
      expect(busy.stderr).toMatch(new RegExp(`^[^\\n]*127\\.0\\.0\\.1:${port}[^\\n]*in use[^\\n]*\\n$`));
    } finally {
      blocker.close();
    }
  });
});
