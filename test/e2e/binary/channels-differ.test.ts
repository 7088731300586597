/**
 * "channels that differ": what works with the npm package works the same with
 * `bun dist/bin.js` and the standalone binary — a pinned project without Node, an unwritable
 * $HOME, a cache path under a regular file, a download from a port fetch blocks, and loopx's
 * NODE_PATH kept out of what a script starts.
 */
import { readFileSync, realpathSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NODE, ROOT, UNPRIVILEGED_ID, giveToUnprivileged, isolatedEnv, makeProject, runCommand, sh, tempDir, unprivileged, RUNTIMES } from "../../helpers.js";
import { BINARY, CHANNELS, loopx, pinnedProject, toolsOnlyPath } from "../../fixtures/channels.js";
import { tarGzOfTree } from "../../fixtures/install/support.js";

describe("the binary in a project that pins a JS loopx", () => {
  const files = { ".loopx/wf/index.sh": sh('echo "$LOOPX_BIN" > "$LOOPX_PROJECT_ROOT/bin.txt"\n$LOOPX_BIN output --result ok --stop') };

  it("with no node on PATH: does not delegate (one line says why), and the README's $LOOPX_BIN output works", async () => {
    const cwd = pinnedProject(files);
    const result = await runCommand(BINARY, ["run", "wf"], { cwd, env: isolatedEnv({ PATH: toolsOnlyPath() }), timeoutMs: 60_000 });
    expect(result.stderr).toBe(`loopx: warning: the project-local loopx ${join(cwd, "node_modules", ".bin", "loopx")} needs Node.js and node is not on PATH; running this standalone loopx instead\n`);
    expect(result.code).toBe(0);
    expect(readFileSync(join(cwd, "bin.txt"), "utf8").trim()).toBe(realpathSync(BINARY));
  });

  it("with node on PATH: delegates to the pinned version, whose LOOPX_BIN runs", async () => {
    const cwd = pinnedProject(files);
    const env = isolatedEnv({ PATH: `${dirname(NODE)}:${toolsOnlyPath()}` });
    const version = await runCommand(BINARY, ["version"], { cwd, env, timeoutMs: 60_000 });
    expect(version).toMatchObject({ code: 0, stdout: "9.9.9\n", stderr: "" });
    const result = await runCommand(BINARY, ["run", "wf"], { cwd, env, timeoutMs: 60_000 });
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(readFileSync(join(cwd, "bin.txt"), "utf8").trim()).toBe(realpathSync(join(cwd, "node_modules", "loopx", "dist", "bin.js")));
  });
});

const TS_SCRIPT = { ".loopx/t/index.ts": 'import { output } from "loopx";\nconst n: number = 41;\noutput({ result: String(n + 1), stop: true });\n' };

describe.each(CHANNELS)("caches that cannot be written ($name)", (channel) => {
  it("XDG_CACHE_HOME under a regular file: a TS script runs, no stack trace, nothing on stderr", async () => {
    const cwd = makeProject(TS_SCRIPT);
    const file = join(tempDir(), "a-file");
    writeFileSync(file, "");
    const result = await loopx(channel, ["run", "t"], cwd, isolatedEnv({ XDG_CACHE_HOME: join(file, "cache") }));
    expect(result).toMatchObject({ code: 0, stdout: "", stderr: "" });
  });

  it("an unwritable $HOME (the nobody user, HOME=/nonexistent): a TS script runs as it does under npm", async () => {
    const cwd = makeProject(TS_SCRIPT);
    const tmp = tempDir("loopx-tmp-");
    giveToUnprivileged(cwd, tmp);
    const env = isolatedEnv({ HOME: "/nonexistent", XDG_CACHE_HOME: undefined, XDG_CONFIG_HOME: undefined, XDG_STATE_HOME: undefined, TMPDIR: tmp, LOOPX_RECORD: "0" });
    if (channel.name === "binary") env.PATH = toolsOnlyPath();
    const [exe, args] = unprivileged(channel.argv[0]!, [...channel.argv.slice(1), "run", "t"], cwd, tmp);
    // setpriv is looked up on the test's PATH, not on the tools-only one loopx gets.
    const result = await runCommand(exe === "setpriv" ? "/usr/bin/setpriv" : exe, args, { cwd, env, timeoutMs: 60_000 });
    expect(result.stderr).not.toContain("EACCES");
    expect(result).toMatchObject({ code: 0, stdout: "", stderr: "" });
    if (channel.name === "binary" && process.getuid?.() === 0) {
      // The helpers went to a private directory of that user under the temp dir.
      const { statSync } = await import("node:fs");
      const stat = statSync(join(tmp, `loopx-${UNPRIVILEGED_ID}`));
      expect({ uid: stat.uid, mode: stat.mode & 0o777 }).toEqual({ uid: UNPRIVILEGED_ID, mode: 0o700 });
    }
  });
});

describe.each(CHANNELS)("NODE_PATH set by loopx ($name)", (channel) => {
  // Under `bun dist/bin.js` a plain ESM script runs with no preload (speed): its
  // children see loopx's helper entry before the user's own NODE_PATH, as the README says.
  const leaks = channel.name === "bun";
  it(leaks ? "reaches the script (import 'loopx' works) and, under bun, its children too; the user's own NODE_PATH is kept" : "reaches the script (import 'loopx' works) but not what the script starts; the user's own NODE_PATH is kept", async () => {
    const cwd = makeProject({
      ".loopx/np/index.ts":
        'import { output } from "loopx";\nimport { execSync } from "node:child_process";\n' +
        'const child = execSync("printf %s \\"${NODE_PATH-unset}\\"").toString();\n' +
        'output({ result: `${process.env.NODE_PATH ?? "unset"}|${child}`, stop: true });\n',
      ".loopx/np/check.sh": sh('echo "${NODE_PATH-unset}" > "$LOOPX_PROJECT_ROOT/bash.txt"\n$LOOPX_BIN output --stop'),
    });
    const log = join(tempDir(), "events.jsonl");
    const env = isolatedEnv();
    if (channel.name === "binary") env.PATH = toolsOnlyPath();
    const plain = await loopx(channel, ["run", "--log", log, "np"], cwd, env);
    expect(plain).toMatchObject({ code: 0, stderr: "" });
    const withUsers = await loopx(channel, ["run", "--log", log, "np"], cwd, { ...env, NODE_PATH: "/users/own" });
    expect(withUsers).toMatchObject({ code: 0, stderr: "" });
    const results = readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; output?: { result?: string } })
      .filter((event) => event.type === "iteration.end")
      .map((event) => event.output?.result);
    if (leaks) {
      const helper = join(ROOT, "dist", "node-path");
      expect(results).toEqual([`${helper}|${helper}`, `${helper}:/users/own|${helper}:/users/own`]);
    } else {
      expect(results).toEqual(["unset|unset", "/users/own|/users/own"]);
    }
  });
});

/** Ports Node's fetch refuses ("bad port"), in the order tried: another test may hold one. */
const BLOCKED_PORTS = [6000, 6665, 6666, 6667, 6668, 6669, 6697, 10080, 6566, 4045];

describe("install from a port fetch blocks", () => {
  let server: Server;
  let port = 0;
  beforeAll(async () => {
    const tarball = tarGzOfTree({ "index.sh": "$LOOPX_BIN output --result installed --stop\n" }, "flow-main");
    server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/gzip", "content-length": tarball.length });
      res.end(tarball);
    });
    for (const candidate of BLOCKED_PORTS) {
      const listening = await new Promise<boolean>((resolve) => {
        server.once("error", () => resolve(false));
        server.listen(candidate, "127.0.0.1", () => resolve(true));
      });
      if (listening) {
        port = candidate;
        break;
      }
    }
    if (port === 0) throw new Error(`every blocked port is in use: ${BLOCKED_PORTS.join(", ")}`);
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it.each([...RUNTIMES.map((r) => ({ name: r.name, argv: [r.exe, join(ROOT, "dist", "bin.js")] })), { name: "binary", argv: [BINARY] }])("installs on $name", async (channel) => {
    const cwd = tempDir();
    const result = await runCommand(channel.argv[0]!, [...channel.argv.slice(1), "install", `http://127.0.0.1:${port}/flow.tgz`], { cwd, env: isolatedEnv(), timeoutMs: 60_000 });
    expect(result.stderr).not.toContain("bad port");
    expect(result.code).toBe(0);
    expect(readFileSync(join(cwd, ".loopx", "flow", "index.sh"), "utf8")).toContain("installed");
  });
});
