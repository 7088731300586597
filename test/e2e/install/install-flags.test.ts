import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUNTIMES, makeProject, runLoopx } from "../../helpers.js";
import { installEnv, startServer, type TestServer } from "../../fixtures/install/support.js";
import { tableFor } from "../../case-tables.js";

describe.each(RUNTIMES)("loopx install command line ($name)", (runtime) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer((_req, res) => {
      res.writeHead(500);
      res.end();
    });
  });
  afterAll(() => server.stop());

  it.each(tableFor(runtime, [
    ["no source", [], /needs a source/],
    ["two sources", ["a/b", "c/d"], /exactly one source/],
    ["a duplicate -w", ["-w", "a", "-w", "b", "SRC"], /-w\/--workflow given more than once/],
    ["-w and --workflow together", ["-w", "a", "--workflow", "b", "SRC"], /given more than once/],
    ["a duplicate -y", ["-y", "-y", "SRC"], /-y given more than once/],
    ["an unknown flag", ["--unknown", "SRC"], /unknown option "--unknown"/],
    ["-w without a value", ["SRC", "-w"], /.+/],
  ]))("%s is a usage error that makes no request and touches nothing", async (_label, args, message) => {
    const cwd = makeProject({ ".loopx": "a file, not a directory\n" });
    const { env } = installEnv();
    const source = `${server.origin}/x.tgz`;
    const before = server.requests.length;
    const result = await runLoopx(runtime, ["install", ...args.map((arg) => (arg === "SRC" ? source : arg))], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(server.requests.length).toBe(before);
  });

  it.each(tableFor(runtime, [
    [["-h"]],
    [["--help"]],
    [["-h", "--unknown", "-w", "a", "-w", "b", "-y", "-y", "SRC", "extra"]],
    [["SRC", "-h"]],
    [["org/repo.git", "--help"]],
  ]))("install %j shows install help and ignores everything else", async (args) => {
    const cwd = makeProject({ ".loopx": "a file, not a directory\n" });
    const { env } = installEnv();
    const before = server.requests.length;
    const result = await runLoopx(runtime, ["install", ...args.map((arg) => (arg === "SRC" ? `${server.origin}/x.tgz` : arg))], { cwd, env });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    expect(result.stdout).toMatch(/^Usage: loopx install \[options\] <source>/);
    expect(result.stdout).toContain("-w, --workflow");
    expect(result.stdout).toContain("-y");
    expect(result.stdout).toMatch(/tar\.gz/);
    expect(server.requests.length).toBe(before);
    expect(readFileSync(join(cwd, ".loopx"), "utf8")).toBe("a file, not a directory\n");
  });
});
