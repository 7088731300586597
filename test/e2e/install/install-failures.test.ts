/**
 * `loopx install` when the world fails it: HTTP servers that reset or lie about Content-Length, a
 * git repository that does not exist (git daemon and HTTP on loopback), and a full disk (small
 * tmpfs mounts, root only). Every failure exits 1 with a one-line message and changes nothing
 * (fixtures/install/support.ts: failsCleanly). Hostile archives: install-archive-limits.test.ts.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import type { Socket } from "node:net";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { RUNTIMES, isolatedEnv, makeProject, runLoopx, tempDir } from "../../helpers.js";
import {
  EXISTING,
  failsCleanly,
  installEnv,
  listDir,
  makeBareRepo,
  responseHead,
  snapshot,
  startGitDaemon,
  startRawServer,
  startServer,
  tarGzOfTree,
  type GitDaemon,
  type TestServer,
} from "../../fixtures/install/support.js";

const MiB = 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// HTTP servers that reset or lie about Content-Length
// ---------------------------------------------------------------------------------------------

describe.each(RUNTIMES)("loopx install: servers that reset or lie ($name)", (runtime) => {
  const good = tarGzOfTree({ "index.sh": "echo\n", "lib/data.md": "x".repeat(50_000), "lib/noise.bin": randomBytes(100_000).toString("base64") }, "flow");
  const servers: TestServer[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.stop();
  });

  it.each<[string, (socket: Socket) => void, RegExp]>([
    [
      "a TCP reset in the middle of the body",
      (socket) => {
        socket.write(responseHead(good.length));
        socket.write(good.subarray(0, Math.floor(good.length / 2)), () => setTimeout(() => socket.resetAndDestroy(), 50));
      },
      /^loopx: cannot download http:\/\/127\.0\.0\.1:\d+\/flow\.tgz: the download was cut short \(.*ECONNRESET.*\)\n$/,
    ],
    [
      "a Content-Length larger than the body (the whole archive, then the connection closes)",
      (socket) => socket.end(Buffer.concat([Buffer.from(responseHead(good.length + 4096)), good])),
      /^loopx: cannot download http:\/\/127\.0\.0\.1:\d+\/flow\.tgz: the download was cut short \(.+\)\n$/,
    ],
    [
      "a Content-Length smaller than the body (the archive is read only that far)",
      (socket) => socket.end(Buffer.concat([Buffer.from(responseHead(Math.floor(good.length / 2))), good])),
      /^loopx: cannot extract http:\/\/127\.0\.0\.1:\d+\/flow\.tgz: not a valid \.tar\.gz archive \(zlib: unexpected end of file\)\n$/,
    ],
  ])("fails cleanly on %s", async (_label, respond, message) => {
    const server = await startRawServer((socket) => respond(socket));
    servers.push(server);
    await failsCleanly(runtime, ["-y", `${server.origin}/flow.tgz`], message);
    expect(server.requests).toEqual(["/flow.tgz"]);
  });
});

// ---------------------------------------------------------------------------------------------
// git: a repository that does not exist, over loopback
// ---------------------------------------------------------------------------------------------

describe.each(RUNTIMES)("loopx install: a git repository that does not exist, over loopback ($name)", (runtime) => {
  const daemons: GitDaemon[] = [];
  const servers: TestServer[] = [];
  afterEach(async () => {
    for (const daemon of daemons.splice(0)) daemon.stop();
    for (const server of servers.splice(0)) await server.stop();
  });

  it("git:// from a git daemon that serves other repositories", async () => {
    const base = tempDir();
    makeBareRepo({ "index.sh": "echo\n" }, base, "org/present.git");
    const daemon = await startGitDaemon(base);
    daemons.push(daemon);
    await failsCleanly(runtime, [`${daemon.base}org/missing.git`], /^loopx: git clone of git:\/\/127\.0\.0\.1:\d+\/org\/missing\.git failed: .*(not exported|does not appear to be a git repository|not found)/);
  });

  it("http:// from a server that answers 404 (as a git host does for a missing repository)", async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("Repository not found.\n");
    });
    servers.push(server);
    await failsCleanly(runtime, [`${server.origin}/org/missing.git`], /^loopx: git clone of http:\/\/127\.0\.0\.1:\d+\/org\/missing\.git failed: .*not found/);
    expect(server.requests.length).toBeGreaterThan(0);
  });
});

// ---------------------------------------------------------------------------------------------
// A full disk: small tmpfs mounts (root only)
// ---------------------------------------------------------------------------------------------

const mounted = new Set<string>();

function mountTmpfs(dir: string, size: string): void {
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size},mode=0755`, "tmpfs", dir], { stdio: "pipe" });
  mounted.add(dir);
}

function unmount(dir: string): void {
  if (!mounted.has(dir)) return;
  try {
    execFileSync("umount", [dir], { stdio: "pipe" });
  } catch {
    execFileSync("umount", ["-l", dir], { stdio: "pipe" });
  }
  mounted.delete(dir);
}

/** Why a tmpfs cannot be mounted here, or undefined if it can. */
function mountProblem(): string | undefined {
  if (process.platform !== "linux") return "tmpfs mounts are Linux-only";
  const probe = tempDir("loopx-mount-probe-");
  try {
    mountTmpfs(probe, "64k");
    unmount(probe);
    return undefined;
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    return `mount -t tmpfs is not possible here (${stderr || (error as Error).message})`;
  }
}

const MOUNT_PROBLEM = mountProblem();
afterAll(() => {
  for (const dir of [...mounted]) unmount(dir);
});

/** A workflow source with a small workflow "a" and a workflow "b" holding 3 MiB that does not compress. */
function bigArchive(): Buffer {
  return tarGzOfTree({ "a/index.sh": "echo a\n", "b/index.sh": "echo b\n", "b/blob.bin": randomBytes(3 * MiB).toString("latin1") });
}

describe.skipIf(MOUNT_PROBLEM !== undefined).each(RUNTIMES)(
  `loopx install on a full disk ($name)${MOUNT_PROBLEM ? ` — skipped: ${MOUNT_PROBLEM}` : ""}`,
  (runtime) => {
    const servers: TestServer[] = [];
    afterEach(async () => {
      for (const server of servers.splice(0)) await server.stop();
    });
    async function serveBody(body: Buffer): Promise<TestServer> {
      const server = await startServer((_req, res) => {
        res.writeHead(200, { "content-length": body.length });
        res.end(body);
      });
      servers.push(server);
      return server;
    }

    it.each([
      ["existed (and -y would replace a workflow in it)", { ...EXISTING, ".loopx/a/index.sh": "echo old a\n" }, ["-y"]],
      ["did not exist", {}, []],
    ] as const)("the project's disk fills up while staging: .loopx/ %s and is as before", async (_label, existing, flags) => {
      const body = bigArchive();
      const server = await serveBody(body);
      const cwd = tempDir("loopx-fullproject-");
      mountTmpfs(cwd, "1m");
      try {
        makeProject(existing, cwd);
        const before = snapshot(join(cwd, ".loopx"));
        const used = Number(execFileSync("df", ["--output=used", "-B1", cwd]).toString().split("\n")[1]);
        const { env, tmp } = installEnv();
        const result = await runLoopx(runtime, ["install", ...flags, `${server.origin}/flows.tgz`], { cwd, env });
        expect(result.code).toBe(1);
        if (process.env["DEBUG_FIRE"]) console.log(`[${runtime.name}] ${result.stderr.trim()}`);
        expect(result.stderr).toMatch(/^loopx: cannot stage workflow "b": no space left on device \(ENOSPC\).*; nothing was installed\n$/);
        expect(snapshot(join(cwd, ".loopx"))).toEqual(before);
        if (before === null) expect(existsSync(join(cwd, ".loopx"))).toBe(false);
        expect(listDir(tmp)).toEqual([]);
        expect(Number(execFileSync("df", ["--output=used", "-B1", cwd]).toString().split("\n")[1])).toBe(used);
      } finally {
        unmount(cwd);
      }
    });

    it.each([
      [
        "the download does not fit",
        bigArchive,
        /^loopx: cannot download http:\/\/127\.0\.0\.1:\d+\/flows\.tgz: cannot write .*download\.tar\.gz: .*ENOSPC.*\n$/,
      ],
      [
        "the download fits but its extraction does not",
        () => tarGzOfTree({ "a/index.sh": "echo a\n", "b/index.sh": "echo b\n", "b/zeros.txt": "0".repeat(3 * MiB) }),
        /^loopx: cannot extract http:\/\/127\.0\.0\.1:\d+\/flows\.tgz: .*ENOSPC.*\n$/,
      ],
    ] as const)("TMPDIR fills up: %s", async (_label, make, message) => {
      const server = await serveBody(make());
      const tmp = tempDir("loopx-fulltmp-");
      mountTmpfs(tmp, "1m");
      try {
        const cwd = makeProject(EXISTING);
        const before = snapshot(join(cwd, ".loopx"));
        const result = await runLoopx(runtime, ["install", `${server.origin}/flows.tgz`], { cwd, env: isolatedEnv({ TMPDIR: tmp }) });
        if (process.env["DEBUG_FIRE"]) console.log(`[${runtime.name}] ${result.stderr.trim()}`);
        expect(result.code).toBe(1);
        expect(result.stderr).toMatch(message);
        expect(result.stderr.trim().split("\n")).toHaveLength(1);
        expect(snapshot(join(cwd, ".loopx"))).toEqual(before);
        expect(listDir(tmp)).toEqual([]);
      } finally {
        unmount(tmp);
      }
    });
  },
);
