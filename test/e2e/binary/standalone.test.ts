/**
 * The standalone binary is the whole product with neither Node nor Bun installed: run with a PATH
 * that holds neither, it runs bash/JS/JSX/TS/TSX workflows whose scripts import from "loopx", and
 * `version`, `env`, `install`, delegation and signals work (CI builds it with `npm test`).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, makeProject, processAlive, runCommand, tempDir, waitFor } from "../../helpers.js";
import { startServer, sendTarball, tarGzOfTree, type TestServer } from "../../fixtures/install/support.js";
import { HOST_TARGET, TARGET_FORMATS, binaryFormat } from "../../../scripts/binary-format.mjs";
import { pinnedProject } from "../../fixtures/channels.js";

const HOST: string = HOST_TARGET;
const BINARY = join(ROOT, "dist", "bin", `loopx-${HOST}`);
const VERSION = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version as string;

/** A PATH with the usual shell tools but no node and no bun. */
function toolsOnlyPath(): string {
  const dir = tempDir("loopx-tools-");
  for (const tool of ["bash", "sh", "cat", "echo", "sed", "grep", "awk", "ps", "sleep", "mkdir", "rm", "env", "pwd", "touch", "ls", "git", "head", "tr", "wc"]) {
    const found = spawnSync("/bin/sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).stdout.trim();
    if (found?.startsWith("/")) symlinkSync(found, join(dir, tool));
  }
  return dir;
}

function bareEnv(extra: Record<string, string> = {}): Record<string, string> {
  const home = tempDir("loopx-home-");
  return { PATH: toolsOnlyPath(), HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_CACHE_HOME: join(home, ".cache"), LANG: "C.UTF-8", ...extra };
}

const run = (args: string[], cwd: string, env: Record<string, string>, onSpawn?: Parameters<typeof runCommand>[2]["onSpawn"]) =>
  runCommand(BINARY, args, { cwd, env, onSpawn, timeoutMs: 60_000 });

const JSX = "/** @jsxRuntime classic */\n/** @jsx h */\n";

describe("standalone binary with neither node nor bun on PATH", () => {
  it("exists for this host and the test PATH really has no node or bun", () => {
    expect(existsSync(BINARY)).toBe(true);
    const env = bareEnv();
    for (const exe of ["node", "bun"]) {
      expect(spawnSync("/bin/bash", ["-c", `command -v ${exe}`], { env }).status).not.toBe(0);
    }
  });

  it("version prints the bare version", async () => {
    const result = await run(["version"], tempDir(), bareEnv());
    expect(result).toMatchObject({ code: 0, stdout: `${VERSION}\n`, stderr: "" });
  });

  it("runs a loop through bash, TS, TSX, JS and JSX scripts with goto, input()/output(), $LOOPX_BIN output and stop", async () => {
    const cwd = makeProject({
      ".loopx/wf/index.sh": 'echo "$LOOPX_BIN" > "$LOOPX_PROJECT_ROOT/bin.txt"\n$LOOPX_BIN output --result "a" --goto ts\n',
      ".loopx/wf/ts.ts": 'import { input, output } from "loopx";\nconst s: string = await input();\noutput({ result: s + "b", goto: "tsx" });\n',
      ".loopx/wf/tsx.tsx": `${JSX}import { input, output } from "loopx";\nconst h = (t: string, _p: unknown, ...c: string[]) => c.join("") + t;\nconst el = <i>c</i>;\noutput({ result: (await input()) + el, goto: "other:js" });\n`,
      ".loopx/other/js.js": 'import { input, output } from "loopx";\noutput({ result: (await input()) + "d", goto: "jsx" });\n',
      ".loopx/other/jsx.jsx": `${JSX}import { input, output } from "loopx";\nconst h = (t, _p, ...c) => c.join("") + t;\nconst x = <e>e</e>;\nconst all = (await input()) + x;\nawait Bun.write(process.env.LOOPX_PROJECT_ROOT + "/result.txt", all + " BUN_BE_BUN=" + (process.env.BUN_BE_BUN ?? "unset"));\noutput({ stop: true });\n`,
    });
    const env = bareEnv();
    const result = await run(["run", "wf"], cwd, env);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(readFileSync(join(cwd, "result.txt"), "utf8")).toBe("abcidee BUN_BE_BUN=unset");
    expect(readFileSync(join(cwd, "bin.txt"), "utf8").trim()).toBe(realpathSync(BINARY));
  });

  it("materializes the helper cache once per version, and rebuilds a corrupted or half-written one", async () => {
    const cwd = makeProject({ ".loopx/wf/index.ts": 'import { output } from "loopx";\noutput({ result: "ok", stop: true });\n' });
    const env = bareEnv();
    expect((await run(["run", "wf"], cwd, env)).code).toBe(0);
    const cacheRoot = join(env.XDG_CACHE_HOME!, "loopx");
    const entries = readdirSync(cacheRoot);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatch(new RegExp(`^${VERSION.replace(/\./g, "\\.")}-[0-9a-f]{16}$`));
    const helper = join(cacheRoot, entries[0]!, "node-path", "loopx", "index.js");
    const good = readFileSync(helper, "utf8");
    writeFileSync(helper, good.slice(0, Math.floor(good.length / 2))); // torn write
    expect((await run(["run", "wf"], cwd, env)).code).toBe(0);
    expect(readFileSync(helper, "utf8")).toBe(good);
    writeFileSync(helper, "export const output = () => process.exit(3);\n"); // corrupted
    expect((await run(["run", "wf"], cwd, env)).code).toBe(0);
    expect(readFileSync(helper, "utf8")).toBe(good);
    expect(readdirSync(cacheRoot)).toEqual(entries); // no temp directories left behind
  });

  it("JS/TS scripts are ESM-only: require() fails the loop", async () => {
    const cwd = makeProject({ ".loopx/wf/index.ts": 'const fs = require("node:fs");\nconsole.log(typeof fs);\n' });
    const result = await run(["run", "-n", "1", "wf"], cwd, bareEnv());
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/loopx: script wf:index exited with code 1\n$/);
  });

  it("env set / list work and are injected into scripts", async () => {
    const cwd = makeProject({ ".loopx/wf/index.sh": 'echo "$GREETING" > "$LOOPX_PROJECT_ROOT/g.txt"\n$LOOPX_BIN output --stop\n' });
    const env = bareEnv();
    expect((await run(["env", "set", "GREETING", "hello world #1"], cwd, env)).code).toBe(0);
    expect((await run(["env", "list"], cwd, env)).stdout).toBe("GREETING=hello world #1\n");
    expect((await run(["run", "wf"], cwd, env)).code).toBe(0);
    expect(readFileSync(join(cwd, "g.txt"), "utf8")).toBe("hello world #1\n");
  });

  it("SIGINT while a script runs: exit 130 and no orphaned grandchild", async () => {
    const cwd = makeProject({ ".loopx/wf/index.sh": 'sleep 1000 &\necho $! > "$LOOPX_PROJECT_ROOT/sleep.pid"\n: > "$LOOPX_PROJECT_ROOT/ready"\nwait\n' });
    const result = await run(["run", "wf"], cwd, bareEnv(), (child) => {
      void waitFor(() => existsSync(join(cwd, "ready")), 20_000).then(() => child.kill("SIGINT"));
    });
    expect(result.code).toBe(130);
    expect(processAlive(Number(readFileSync(join(cwd, "sleep.pid"), "utf8")))).toBe(false);
  });

  describe("install", () => {
    let server: TestServer;
    beforeAll(async () => {
      const tarball = tarGzOfTree({ "index.sh": '$LOOPX_BIN output --result installed --stop\n', "README.md": "demo\n" }, "demo-main");
      server = await startServer((_req, res) => sendTarball(res, tarball));
    });
    afterAll(() => server.stop());

    it("installs a workflow from a tarball served on loopback and runs it", async () => {
      const cwd = tempDir();
      const env = bareEnv();
      const result = await run(["install", `${server.origin}/demo.tar.gz`], cwd, env);
      expect(result.code).toBe(0);
      expect(readFileSync(join(cwd, ".loopx", "demo", "README.md"), "utf8")).toBe("demo\n");
      expect((await run(["run", "demo"], cwd, env)).code).toBe(0);
    });

    it("installs from a git repository", async () => {
      const source = tempDir("loopx-gitsrc-");
      writeFileSync(join(source, "index.sh"), "exit 0\n");
      const git = (args: string[], cwd: string) => execFileSync("git", args, { cwd, env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" }, stdio: "ignore" });
      git(["init", "-q"], source);
      git(["add", "."], source);
      git(["commit", "-qm", "x"], source);
      const bare = join(tempDir("loopx-bare-"), "gitflow.git");
      git(["clone", "-q", "--bare", source, bare], source);
      const cwd = tempDir();
      const result = await run(["install", `file://${bare}`], cwd, bareEnv());
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(existsSync(join(cwd, ".loopx", "gitflow", "index.sh"))).toBe(true);
    });
  });

  it("delegates to a project-local loopx (a JS one runs under Node, as the README says)", async () => {
    const cwd = pinnedProject({ ".loopx/main/index.sh": '#!/bin/bash\necho \'{"stop":true}\'\n' });
    // With node on PATH: a JS loopx hands its scripts a LOOPX_BIN that needs node (without it the
    // binary runs itself instead: channels-differ.test.ts).
    const env = bareEnv();
    env.PATH = `${dirname(process.execPath)}:${env.PATH}`;
    const result = await run(["version"], cwd, env);
    expect(result).toMatchObject({ code: 0, stdout: "9.9.9\n" });
    const ran = await run(["run", "main"], cwd, env);
    expect(ran.code, ran.stderr).toBe(0);
    const runs = join(env.XDG_STATE_HOME ?? join(env.HOME!, ".local", "state"), "loopx", "runs");
    const record = readFileSync(join(runs, readdirSync(runs).find((name) => name.endsWith(".jsonl"))!), "utf8");
    expect(JSON.parse(record.split("\n")[0]!)).toMatchObject({ type: "run.start", version: "9.9.9", runtime: "node" });
  });
});

describe("binary formats and checksums (each binary present in dist/bin)", () => {
  it("has the right format for its target, and SHA256SUMS lists it with the right digest", () => {
    const sums = readFileSync(join(ROOT, "dist", "bin", "SHA256SUMS"), "utf8");
    const present = Object.keys(TARGET_FORMATS).filter((target) => existsSync(join(ROOT, "dist", "bin", `loopx-${target}`)));
    expect(present).toContain(HOST);
    for (const target of present) {
      const path = join(ROOT, "dist", "bin", `loopx-${target}`);
      expect(binaryFormat(path)).toBe(TARGET_FORMATS[target as keyof typeof TARGET_FORMATS]);
      const digest = createHash("sha256").update(readFileSync(path)).digest("hex");
      expect(sums).toContain(`${digest}  loopx-${target}\n`);
    }
  });
});
