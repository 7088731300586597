import { existsSync, lstatSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { RUNTIMES, giveToUnprivileged, isolatedEnv, makeProject, runLoopx, runLoopxUnprivileged, tempDir, warnings } from "../../helpers.js";
import { installEnv, listDir, rawTarGz, sendTarball, snapshot, startServer, tarGzOfTree, type RawEntry, type TestServer } from "../../fixtures/install/support.js";

const FLOW = {
  "index.sh": "#!/bin/bash\necho '{\"result\":\"from tarball\",\"stop\":true}'\n",
  "lib/helper.ts": "export {};\n",
  "package.json": JSON.stringify({ name: "flow" }),
  "README.md": "readme\n",
};

describe.each(RUNTIMES)("loopx install from a tarball ($name)", (runtime) => {
  const servers: TestServer[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.stop();
  });

  async function serve(routes: Record<string, (res: import("node:http").ServerResponse) => void>): Promise<TestServer> {
    const server = await startServer((req, res) => {
      const path = (req.url ?? "").split("?")[0]!;
      const route = routes[path];
      if (route) route(res);
      else {
        res.writeHead(404);
        res.end("not found");
      }
    });
    servers.push(server);
    return server;
  }

  it("strips a single wrapper directory and names the workflow after the archive (query and fragment ignored)", async () => {
    const body = tarGzOfTree(FLOW, "flow-main");
    const server = await serve({ "/dl/my-flow.tar.gz": (res) => sendTarball(res, body) });
    const cwd = makeProject();
    const { env, tmp } = installEnv();
    const result = await runLoopx(runtime, ["install", `${server.origin}/dl/my-flow.tar.gz?token=abc#readme`], { cwd, env });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(listDir(join(cwd, ".loopx"))).toEqual(["my-flow"]);
    expect(listDir(join(cwd, ".loopx", "my-flow"))).toEqual(["README.md", "index.sh", "lib", "package.json"]);
    expect(listDir(tmp)).toEqual([]);
    const run = await runLoopx(runtime, ["run", "my-flow"], { cwd, env });
    expect(run.code).toBe(0);
  });

  it("uses the archive contents directly when there are several top-level entries (.tgz, multi-workflow)", async () => {
    const body = tarGzOfTree({ "README.md": "r\n", "one/index.sh": "echo\n", "two/index.ts": "\n", "notes/x.md": "\n" });
    const server = await serve({ "/flows.tgz": (res) => sendTarball(res, body) });
    const cwd = makeProject();
    const { env } = installEnv();
    const result = await runLoopx(runtime, ["install", `${server.origin}/flows.tgz`], { cwd, env });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(listDir(join(cwd, ".loopx"))).toEqual(["one", "two"]);
  });

  it("a single top-level directory holding scripts is stripped too: the archive is one workflow named after it", async () => {
    const body = tarGzOfTree({ "index.sh": "echo\n" }, "inner");
    const server = await serve({ "/pkg.tgz": (res) => sendTarball(res, body) });
    const cwd = makeProject();
    const { env } = installEnv();
    const result = await runLoopx(runtime, ["install", `${server.origin}/pkg.tgz`], { cwd, env });
    expect(result.code).toBe(0);
    expect(listDir(join(cwd, ".loopx"))).toEqual(["pkg"]);
    expect(listDir(join(cwd, ".loopx", "pkg"))).toEqual(["index.sh"]);
  });

  it("a top-level symlink to a workflow directory inside the archive is installed as a copy of it", async () => {
    const body = rawTarGz([
      { path: "one/", type: "Directory" },
      { path: "one/index.sh", body: "echo one\n" },
      { path: "two", type: "SymbolicLink", linkpath: "one" },
      { path: "README.md", body: "r\n" },
    ]);
    const server = await serve({ "/pair.tgz": (res) => sendTarball(res, body) });
    const cwd = makeProject();
    const { env } = installEnv();
    const result = await runLoopx(runtime, ["install", `${server.origin}/pair.tgz`], { cwd, env });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(listDir(join(cwd, ".loopx"))).toEqual(["one", "two"]);
    expect(lstatSync(join(cwd, ".loopx", "two")).isDirectory()).toBe(true);
    expect(readFileSync(join(cwd, ".loopx", "two", "index.sh"), "utf8")).toBe("echo one\n");
  });

  it("follows redirects (302 then 301) and names the workflow after the URL that was given", async () => {
    const body = tarGzOfTree(FLOW, "wrapper");
    const server = await serve({
      "/latest.tgz": (res) => {
        res.writeHead(302, { location: "/moved/v2.tar.gz" });
        res.end();
      },
      "/moved/v2.tar.gz": (res) => {
        res.writeHead(301, { location: "/final/archive-v2.tar.gz" });
        res.end();
      },
      "/final/archive-v2.tar.gz": (res) => sendTarball(res, body),
    });
    const cwd = makeProject();
    const { env } = installEnv();
    const result = await runLoopx(runtime, ["install", `${server.origin}/latest.tgz`], { cwd, env });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(listDir(join(cwd, ".loopx"))).toEqual(["latest"]);
    expect(server.requests).toEqual(["/latest.tgz", "/moved/v2.tar.gz", "/final/archive-v2.tar.gz"]);
  });

  const good = tarGzOfTree(FLOW, "w");
  it.each<[string, (res: import("node:http").ServerResponse) => void, RegExp]>([
    ["404", (res) => (res.writeHead(404, "Not Found"), res.end("nope")), /cannot download http:\/\/127\.0\.0\.1:\d+\/flow\.tgz: HTTP 404/],
    ["500", (res) => (res.writeHead(500), res.end("boom")), /cannot download .*\/flow\.tgz: HTTP 500/],
    [
      "a redirect to a 404",
      (res) => (res.writeHead(302, { location: "/gone.tgz" }), res.end()),
      /cannot download .*\/flow\.tgz: HTTP 404.*redirected to .*\/gone\.tgz/,
    ],
    [
      "a body cut short (content-length not reached)",
      (res) => {
        res.writeHead(200, { "content-length": good.length });
        res.write(good.subarray(0, Math.floor(good.length / 2)));
        setTimeout(() => res.socket?.destroy(), 50);
      },
      /cannot download .*\/flow\.tgz: the download was cut short/,
    ],
    [
      "a truncated gzip stream (connection closed without a length)",
      (res) => {
        res.writeHead(200, { connection: "close" });
        res.end(good.subarray(0, good.length - 20));
      },
      /cannot extract .*\/flow\.tgz: not a valid \.tar\.gz archive \(zlib: unexpected end of file\)/,
    ],
    [
      "a corrupt gzip stream",
      (res) => {
        const corrupt = Buffer.from(good);
        corrupt.fill(0x55, 12, 60);
        sendTarball(res, corrupt);
      },
      /cannot extract .*\/flow\.tgz: not a valid \.tar\.gz archive/,
    ],
    ["an HTML page", (res) => (res.writeHead(200, { "content-type": "text/html" }), res.end("<html>hi</html>")), /cannot extract .*not a valid \.tar\.gz archive/],
    ["an empty body", (res) => (res.writeHead(200), res.end()), /cannot extract .*not a valid \.tar\.gz archive/],
  ])("fails cleanly on %s and leaves .loopx/ byte-for-byte unchanged", async (_label, route, message) => {
    const server = await serve({ "/flow.tgz": route });
    const cwd = makeProject({ ".loopx/flow/index.sh": "echo old\n", ".loopx/other/a.ts": "\n", ".loopx/notes.md": "n\n" });
    const before = snapshot(join(cwd, ".loopx"));
    const { env, tmp } = installEnv();
    const result = await runLoopx(runtime, ["install", "-y", `${server.origin}/flow.tgz`], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(snapshot(join(cwd, ".loopx"))).toEqual(before);
    expect(listDir(tmp)).toEqual([]);
  });

  it("fails cleanly when nothing listens on the port, and does not create .loopx/", async () => {
    const server = await serve({});
    const origin = server.origin;
    await server.stop();
    servers.length = 0;
    const cwd = makeProject();
    const { env, tmp } = installEnv();
    const result = await runLoopx(runtime, ["install", `${origin}/flow.tgz`], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^loopx: cannot download http:\/\/127\.0\.0\.1:\d+\/flow\.tgz: .+/);
    expect(existsSync(join(cwd, ".loopx"))).toBe(false);
    expect(listDir(tmp)).toEqual([]);
  });

  const ok: RawEntry[] = [
    { path: "flow/", type: "Directory" },
    { path: "flow/index.sh", body: "echo\n" },
  ];
  it.each<[string, RawEntry[], RegExp]>([
    ["a .. path", [...ok, { path: "flow/../../escape.sh", body: "pwned" }], /entry "flow\/\.\.\/\.\.\/escape\.sh" has a "\.\." path segment/],
    ["a leading .. path", [{ path: "../escape.sh", body: "pwned" }, ...ok], /entry "\.\.\/escape\.sh" has a "\.\." path segment/],
    ["an absolute path", [...ok, { path: "/tmp/loopx-escape.sh", body: "pwned" }], /entry "\/tmp\/loopx-escape\.sh" has an absolute path/],
    ["a symlink to an absolute path", [...ok, { path: "flow/passwd", type: "SymbolicLink", linkpath: "/etc/passwd" }], /symlink "flow\/passwd" points to an absolute path/],
    ["a symlink that climbs out", [...ok, { path: "flow/up", type: "SymbolicLink", linkpath: "../../.." }], /symlink "flow\/up" points outside the archive/],
    [
      "a file written through a symlink",
      [...ok, { path: "flow/lib", type: "SymbolicLink", linkpath: "." }, { path: "flow/lib/x.sh", body: "x" }],
      /entry "flow\/lib\/x\.sh" lies inside symlink "flow\/lib"/,
    ],
    [
      "a symlink escaping through another symlink",
      [...ok, { path: "flow/here", type: "SymbolicLink", linkpath: "." }, { path: "here2", type: "SymbolicLink", linkpath: "flow/here/../.." }],
      /symlink "here2" points outside the archive/,
    ],
    [
      "a symlink chain that resolves outside",
      [...ok, { path: "b", type: "SymbolicLink", linkpath: "." }, { path: "c", type: "SymbolicLink", linkpath: "b/.." }],
      /symlink "c" points outside the archive/,
    ],
    [
      "a dangling symlink that would resolve outside through another symlink",
      [...ok, { path: "b", type: "SymbolicLink", linkpath: "." }, { path: "d", type: "SymbolicLink", linkpath: "b/../missing" }],
      /symlink "d" points outside the archive/,
    ],
    ["a hardlink that climbs out", [...ok, { path: "flow/hl", type: "Link", linkpath: "../outside" }], /hardlink "flow\/hl" points outside the archive/],
    ["a hardlink to an absolute path", [...ok, { path: "flow/hl", type: "Link", linkpath: "/etc/passwd" }], /hardlink "flow\/hl" points to an absolute path/],
    ["a character device", [...ok, { path: "flow/null", type: "CharacterDevice" }], /entry "flow\/null" is a character device/],
    ["a block device", [...ok, { path: "flow/disk", type: "BlockDevice" }], /entry "flow\/disk" is a block device/],
    ["a FIFO", [...ok, { path: "flow/pipe", type: "FIFO" }], /entry "flow\/pipe" is a FIFO/],
  ])("refuses an archive with %s, naming the entry, writing nothing anywhere", async (_label, entries, message) => {
    const body = rawTarGz(entries);
    const server = await serve({ "/evil.tgz": (res) => sendTarball(res, body) });
    const cwd = makeProject({ ".loopx/keep/index.sh": "echo\n" });
    const before = snapshot(join(cwd, ".loopx"));
    const projectBefore = snapshot(cwd);
    const { env, tmp } = installEnv();
    const parentBefore = listDir(dirname(tmp));
    const result = await runLoopx(runtime, ["install", "-y", `${server.origin}/evil.tgz`], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^loopx: refusing to install http:\/\/127\.0\.0\.1:\d+\/evil\.tgz: /);
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(snapshot(join(cwd, ".loopx"))).toEqual(before);
    expect(snapshot(cwd)).toEqual(projectBefore);
    expect(listDir(tmp)).toEqual([]);
    expect(listDir(dirname(tmp)).filter((name) => !parentBefore.includes(name) && name.includes("escape"))).toEqual([]);
    expect(existsSync("/tmp/loopx-escape.sh")).toBe(false);
  });

  it("accepts an archive whose links stay inside, and installs hardlinked content as files", async () => {
    const body = rawTarGz([
      ...ok,
      { path: "flow/lib/", type: "Directory" },
      { path: "flow/lib/data.md", body: "data\n" },
      { path: "flow/alias.md", type: "SymbolicLink", linkpath: "lib/data.md" },
      { path: "flow/lib/back", type: "SymbolicLink", linkpath: "../index.sh" },
      { path: "flow/copy.md", type: "Link", linkpath: "flow/lib/data.md" },
    ]);
    const server = await serve({ "/linked.tgz": (res) => sendTarball(res, body) });
    const cwd = makeProject();
    const { env } = installEnv();
    const result = await runLoopx(runtime, ["install", `${server.origin}/linked.tgz`], { cwd, env });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const tree = snapshot(join(cwd, ".loopx", "linked"))!;
    expect(tree["alias.md"]).toBe("link -> lib/data.md");
    expect(tree["lib/back"]).toBe("link -> ../index.sh");
    expect(readFileSync(join(cwd, ".loopx", "linked", "copy.md"), "utf8")).toBe("data\n");
  });
});

describe.each(RUNTIMES)("install carries unreadable files over ($name)", (runtime) => {
  const servers: TestServer[] = [];
  afterAll(async () => {
    for (const server of servers.splice(0)) await server.stop();
  });

  it("a tarball whose package.json has mode 000, installed as an unprivileged user: warning, installed with its modes, runnable", async () => {
    const body = rawTarGz([
      { path: "ralph-main/", type: "Directory", mode: 0o755 },
      { path: "ralph-main/index.sh", body: 'echo ran >> "$LOOPX_PROJECT_ROOT/trace.log"\n', mode: 0o755 },
      { path: "ralph-main/package.json", body: JSON.stringify({ dependencies: { loopx: ">=999.0.0" } }), mode: 0o000 },
      { path: "ralph-main/lib/", type: "Directory", mode: 0o755 },
      { path: "ralph-main/lib/secret.txt", body: "s\n", mode: 0o000 },
    ]);
    const server = await startServer((_req, res) => sendTarball(res, body));
    servers.push(server);
    const cwd = makeProject();
    const env = isolatedEnv({ TMPDIR: tempDir("loopx-tmpdir-") });
    giveToUnprivileged(cwd, env.HOME!, env.TMPDIR!);
    const result = await runLoopxUnprivileged(runtime, ["install", `${server.origin}/ralph.tar.gz`], { cwd, env });
    expect(result.stderr).toBe('loopx: warning: workflow "ralph": cannot read package.json: permission denied (EACCES); loopx version check skipped\n');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('installed workflow "ralph" in .loopx/ralph\n');
    const mode = (path: string) => statSync(join(cwd, ".loopx", "ralph", path)).mode & 0o777;
    expect([mode("index.sh"), mode("package.json"), mode("lib"), mode("lib/secret.txt")]).toEqual([0o755, 0o000, 0o755, 0o000]);
    expect(lstatSync(join(cwd, ".loopx", "ralph", "package.json")).size).toBeGreaterThan(0);

    const run = await runLoopxUnprivileged(runtime, ["run", "-n", "2", "ralph"], { cwd, env });
    expect(run.code).toBe(0);
    expect(readFileSync(join(cwd, "trace.log"), "utf8")).toBe("ran\nran\n");
    expect(warnings(run.stderr)).toEqual(['loopx: warning: workflow "ralph": cannot read package.json: permission denied (EACCES); loopx version check skipped']);
  });
});
