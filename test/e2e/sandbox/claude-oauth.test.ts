/**
 * The real Claude Code CLI inside `loopx run --sandbox` with an expired OAuth login: it refreshes
 * the token, and the credentials file it rotates, ~/.claude/.credentials.json, is written back to
 * the real home (ralph's policy keeps ~/.claude writable). Offline: Claude's token endpoint is
 * fixed in its bundle (2.1.x: TOKEN_URL https://platform.claude.com/v1/oauth/token;
 * CLAUDE_CODE_CUSTOM_OAUTH_URL takes only three approved https origins, and the environment that
 * would read CLAUDE_LOCAL_OAUTH_API_BASE is never chosen), so the test reaches it the way a
 * corporate proxy would: Claude's own settings (~/.claude/settings.json `env`) name a local HTTPS
 * proxy, allowed on the command line, that answers `CONNECT platform.claude.com:443` with the
 * token endpoint's stand-in under a certificate of a test CA (NODE_EXTRA_CA_CERTS). The Messages
 * API stand-in takes only the rotated token. The shipped policies name the token endpoint the
 * CONNECT asked for, so loopx's own proxy lets a real refresh through.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { join } from "node:path";
import { describe, expect, it, type TestContext } from "vitest";
import { CLIS, RUNTIMES, runCli, runLoopx, tempDir } from "../../helpers.js";
import { FakeAgents, workflowEnv, workflowProject } from "../../fixtures/agents/support.js";
import { readJsonBody } from "../../fixtures/local-server.js";
import { realClaudeBin, realClaudeEnv, startMessagesApi } from "../../fixtures/agents/messages-api.js";
import { recordEvents } from "./support.js";

const COMPLETE = "<promise>COMPLETE</promise>";
const TOKEN_HOST = "platform.claude.com";
const ROTATED = { access_token: "sk-ant-oat01-rotated-by-the-stand-in", refresh_token: "sk-ant-ort01-rotated-by-the-stand-in", expires_in: 28_800 };

/** A test CA and a certificate it signed for the token endpoint's host (openssl, one day). */
function certificates(): { ca: string; key: string; cert: string } {
  const dir = tempDir("loopx-oauth-ca-");
  const openssl = (args: string[]) => {
    const result = spawnSync("openssl", args, { cwd: dir, encoding: "utf8" });
    if (result.status !== 0) throw new Error(`openssl ${args[0]} failed (the test makes its certificates with it): ${result.error?.message ?? result.stderr}`);
  };
  openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-subj", "/CN=loopx test CA", "-days", "1"]);
  openssl(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "leaf.key", "-out", "leaf.csr", "-subj", `/CN=${TOKEN_HOST}`]);
  writeFileSync(join(dir, "san.ext"), `subjectAltName=DNS:${TOKEN_HOST}\n`);
  openssl(["x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "leaf.pem", "-days", "1", "-extfile", "san.ext"]);
  const read = (name: string) => readFileSync(join(dir, name), "utf8");
  return { ca: read("ca.pem"), key: read("leaf.key"), cert: read("leaf.pem") };
}

/**
 * The token endpoint's stand-in behind a local HTTPS proxy: CONNECT to TOKEN_HOST:443 is
 * answered by it (POST /v1/oauth/token: the ROTATED tokens), any other CONNECT is refused.
 */
async function tokenEndpoint(context: TestContext, tls: { key: string; cert: string }) {
  const refreshes: Array<Record<string, any>> = [];
  const tunnels: string[] = [];
  const endpoint = createHttpsServer(tls, (req, res) =>
    readJsonBody(req, (body) => {
      const token = req.method === "POST" && req.url === "/v1/oauth/token";
      if (token) refreshes.push(body);
      res.writeHead(token ? 200 : 404, { "content-type": "application/json" });
      res.end(JSON.stringify(token ? { ...ROTATED, scope: "user:inference user:profile", token_type: "Bearer" } : { error: "not_found" }));
    }),
  );
  const proxy = createHttpServer((_req, res) => res.writeHead(403).end());
  proxy.on("connect", (req, socket) => {
    tunnels.push(String(req.url));
    socket.on("error", () => {});
    if (req.url !== `${TOKEN_HOST}:443`) return void socket.end("HTTP/1.1 403 Forbidden\r\n\r\n");
    socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    endpoint.emit("connection", socket);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  context.onTestFinished(() => {
    proxy.closeAllConnections();
    proxy.close();
    endpoint.close();
  });
  return { port: (proxy.address() as { port: number }).port, refreshes, tunnels };
}

describe("the real Claude Code inside --sandbox, logged in with OAuth", () => {
  it.runIf(process.platform === "linux")("refreshes an expired token; the rotated credentials are written back to the real ~/.claude", async (context) => {
    const tls = certificates();
    const token = await tokenEndpoint(context, tls);
    const api = await startMessagesApi(() => ({ text: `Planned.\n${COMPLETE}` }), { bearer: ROTATED.access_token });
    context.onTestFinished(() => api.stop());
    const project = workflowProject(["ralph", "converge"]);
    const env = workflowEnv(new FakeAgents());
    const claudeDir = join(env.HOME!, ".claude");
    // The test CA in the project (readable inside the fence).
    writeFileSync(join(project, "test-ca.pem"), tls.ca);
    Object.assign(env, realClaudeEnv(api, env.HOME!), { PATH: `${realClaudeBin()}:${env.PATH}`, NODE_EXTRA_CA_CERTS: join(project, "test-ca.pem") });
    delete env.CLAUDE_CODE_OAUTH_TOKEN; // the login is the credentials file's
    mkdirSync(claudeDir, { recursive: true });
    const proxy = `http://127.0.0.1:${token.port}`;
    writeFileSync(join(claudeDir, "settings.json"), JSON.stringify({ env: { HTTPS_PROXY: proxy, https_proxy: proxy } }));
    const expired = { accessToken: "sk-ant-oat01-expired", refreshToken: "sk-ant-ort01-before", expiresAt: Date.now() - 3_600_000, scopes: ["user:inference", "user:profile"], subscriptionType: "max" };
    const credentials = join(claudeDir, ".credentials.json");
    writeFileSync(credentials, JSON.stringify({ claudeAiOauth: expired }), { mode: 0o600 });
    const allow = [`127.0.0.1:${new URL(api.origin).port}`, `127.0.0.1:${token.port}`].flatMap((rule) => ["--sandbox-allow", rule]);
    const result = await runLoopx(RUNTIMES[0]!, ["run", "--sandbox", ...allow, "ralph:plan"], { cwd: project, env, timeoutMs: 120_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(recordEvents(env).find((event) => event.type === "run.start")?.sandbox).toMatchObject({ kind: "bwrap" });
    // Claude refreshed with the old refresh token, and called the API with the new access token only.
    expect(token.refreshes).toEqual([expect.objectContaining({ grant_type: "refresh_token", refresh_token: expired.refreshToken })]);
    expect(api.unauthorized).toEqual([]);
    expect(api.requests.length).toBeGreaterThan(0);
    expect(api.requests.every((request) => request.authorization === `Bearer ${ROTATED.access_token}`)).toBe(true);
    // The file it rotated, read outside the fence.
    const written = JSON.parse(readFileSync(credentials, "utf8")).claudeAiOauth;
    expect(written).toMatchObject({ accessToken: ROTATED.access_token, refreshToken: ROTATED.refresh_token });
    expect(written.expiresAt).toBeGreaterThan(Date.now());
    // The host Claude refreshes at is one the shipped policies let through loopx's own proxy.
    expect(token.tunnels[0]).toBe(`${TOKEN_HOST}:443`);
    for (const workflow of ["ralph", "converge"]) {
      const shown = await runCli(CLIS[0]!, ["sandbox", "show", workflow, "--json"], { cwd: project, env });
      expect(shown.code, shown.stderr).toBe(0);
      expect(JSON.parse(shown.stdout).policy.network).toContain(token.tunnels[0]);
    }
  }, 150_000);
});
