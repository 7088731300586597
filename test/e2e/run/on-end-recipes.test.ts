/**
 * "recipes that work": the README's --on-end recipes (examples/on-end/) send what the
 * real services expect — ntfy, a Slack incoming webhook, Telegram's Bot API sendMessage — to a
 * stand-in HTTP server on 127.0.0.1; notify-send and sendmail are fake executables on PATH that
 * record their arguments and stdin. Never the real internet.
 */
import { once } from "node:events";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isolatedEnv, makeProject, ROOT, sh, tempDir } from "../../helpers.js";
import { CHANNELS, loopx } from "../../fixtures/channels.js";

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

const seen: Seen[] = [];
const server = createServer((req, res) => {
  let body = "";
  req.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
  req.on("end", () => {
    seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
    res.writeHead(200, { "Content-Type": "application/json" }).end('{"ok":true}');
  });
});
let base = "";
beforeAll(async () => {
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => void server.close());

const recipe = (name: string) => `sh ${join(ROOT, "examples", "on-end", `${name}.sh`)}`;

/** A directory with fake `notify-send` and `sendmail` that record their argv (one per line) and stdin. */
function fakeTools(): string {
  const dir = tempDir("loopx-fake-tools-");
  for (const tool of ["notify-send", "sendmail"]) {
    writeFileSync(join(dir, tool), `#!/bin/sh\nprintf '%s\\n' "$@" > "${dir}/${tool}.argv"\ncat > "${dir}/${tool}.stdin"\n`);
    chmodSync(join(dir, tool), 0o755);
  }
  return dir;
}

describe("--on-end recipes (node)", () => {
  const node = CHANNELS[0]!;

  it("ntfy, Slack, Telegram, notify-send and sendmail each get the request their service expects", { timeout: 60_000 }, async () => {
    const cwd = makeProject({ ".loopx/ralph/index.sh": sh("echo '{\"stop\":true}'"), ".loopx/ralph/fail.sh": sh("exit 2") });
    const tools = fakeTools();
    const env = isolatedEnv();
    env.PATH = `${tools}:${env.PATH}`;
    const run = (hook: string, target: string, extra: Record<string, string>) => loopx(node, ["run", "--on-end", recipe(hook), target], cwd, { ...env, ...extra });
    const results = await Promise.all([
      run("ntfy", "ralph:fail", { NTFY_URL: base, NTFY_TOPIC: "loopx-topic-7f3a" }),
      run("slack", "ralph", { SLACK_WEBHOOK_URL: `${base}/services/T0000/B0000/XXXXXXXX` }),
      run("telegram", "ralph", { TELEGRAM_API: base, TELEGRAM_BOT_TOKEN: "123456:ABC-DEF", TELEGRAM_CHAT_ID: "4242" }),
      run("notify-send", "ralph:fail", {}),
      run("mail", "ralph", { MAIL_TO: "me@example.com" }),
    ]);
    // No recipe failed: no warning line, the runs' own exit codes.
    expect(results.map((r) => [r.code, r.stderr.includes("on-end")])).toEqual([[1, false], [0, false], [0, false], [1, false], [0, false]]);

    const ntfy = seen.find((s) => s.url === "/loopx-topic-7f3a")!;
    expect(ntfy).toMatchObject({ method: "POST", headers: { title: "loopx: ralph:fail failed", priority: "high", tags: "loopx" } });
    expect(ntfy.body).toMatch(/^ralph:fail exited with code 2 · 1 iterations · run [0-9a-z]{15}$/);

    const slack = seen.find((s) => s.url === "/services/T0000/B0000/XXXXXXXX")!;
    expect(slack).toMatchObject({ method: "POST", headers: { "content-type": "application/json" } });
    expect(JSON.parse(slack.body)).toEqual({ text: expect.stringMatching(/^loopx run [0-9a-z]{15} \(ralph:index\) ended: stopped by ralph:index · 1 iterations$/) });

    const telegram = seen.find((s) => s.url === "/bot123456:ABC-DEF/sendMessage")!;
    expect(telegram).toMatchObject({ method: "POST", headers: { "content-type": "application/json" } });
    expect(JSON.parse(telegram.body)).toEqual({ chat_id: "4242", text: expect.stringMatching(/^loopx run [0-9a-z]{15} \(ralph:index\) ended: stopped by ralph:index/) });

    const notify = readFileSync(join(tools, "notify-send.argv"), "utf8").split("\n");
    expect(notify.slice(0, 6)).toEqual(["-u", "critical", "-a", "loopx", "loopx: ralph:fail failed", expect.stringMatching(/^ralph:fail exited with code 2 · 1 iterations · run [0-9a-z]{15}$/)]);

    expect(readFileSync(join(tools, "sendmail.argv"), "utf8")).toBe("-t\n");
    const mail = readFileSync(join(tools, "sendmail.stdin"), "utf8");
    expect(mail).toMatch(/^To: me@example\.com\nSubject: loopx: ralph:index stopped\n\nstopped by ralph:index · 1 iterations · run [0-9a-z]{15}\n\n\{"run":/);
    expect(JSON.parse(mail.slice(mail.indexOf("{")))).toMatchObject({ state: "stopped", exitCode: 0, target: "ralph:index", project: cwd });
  });
});
