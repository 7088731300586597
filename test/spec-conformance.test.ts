/**
 * Spec conformance as a strict reader finds it (issue 10), black-box under node, bun and — where
 * scripts run — the standalone binary:
 *
 * 1. every version-check message (run, runPromise(), install, delegation) names the workflow, the
 *    word "version", the declared range and the running version; a broken package.json says
 *    "semver range" / "invalid JSON" / "cannot read" + the OS reason; once per workflow per run;
 * 2. same-base-name scripts are called a name *collision* (run, run -h, install);
 * 3. `loopx install -h` describes what is supported and no removed source kind;
 * 4. the delegated process gets LOOPX_BIN (realpath of the local binary) and LOOPX_DELEGATED=1;
 * 5. JSX: classic React.createElement by default everywhere; a workflow's tsconfig.json wins;
 * 6. a mode-000 package.json in a tarball: warning, and the install proceeds with the file's mode;
 * 7. the permission cases run as an unprivileged user (setpriv) when the suite is root.
 */
import { chmodSync, lstatSync, readFileSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  BUN,
  NODE,
  ROOT,
  RUNTIMES,
  giveToUnprivileged,
  isolatedEnv,
  makeProject,
  makeSymlink,
  runCommand,
  runLoopx,
  runLoopxUnprivileged,
  tempDir,
  unprivileged,
  type RunResult,
  type Runtime,
} from "./helpers.js";
import { fileUrl, makeBareRepo, rawTarGz, sendTarball, startServer, type TestServer } from "./fixtures/install/support.js";

const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
const BINARY = join(ROOT, "dist", "bin", `loopx-${process.platform}-${process.arch === "arm64" ? "arm64" : "x64"}`);

/** How a CLI is started: node/bun run dist/bin.js, the standalone binary runs itself. */
interface Cli {
  name: string;
  command: (args: string[]) => [string, string[]];
}
const cliOf = (runtime: Runtime): Cli => ({ name: runtime.name, command: (args) => [runtime.exe, [join(ROOT, "dist", "bin.js"), ...args]] });
const CLIS: Cli[] = [...RUNTIMES.map(cliOf), { name: "binary", command: (args) => [BINARY, args] }];

function runCli(cli: Cli, args: string[], cwd: string, env = isolatedEnv()): Promise<RunResult> {
  const [exe, argv] = cli.command(args);
  return runCommand(exe, argv, { cwd, env, timeoutMs: 60_000 });
}

const warnings = (stderr: string) => stderr.split("\n").filter((line) => line.startsWith("loopx: warning:"));
const mismatchLine = (workflow: string, range: string) =>
  `loopx: warning: workflow "${workflow}" declares loopx version ${range}, but the running loopx version is ${VERSION} (not satisfied)`;

/** ralph:index → goto other:index → reset …, each appending its name to trace.log. */
function twoWorkflows(ralphManifest?: string): string {
  const files: Record<string, string> = {
    ".loopx/ralph/index.sh": 'echo ralph >> "$LOOPX_PROJECT_ROOT/trace.log"\necho \'{"goto":"other:index"}\'\n',
    ".loopx/other/index.sh": 'echo other >> "$LOOPX_PROJECT_ROOT/trace.log"\n',
  };
  if (ralphManifest !== undefined) files[".loopx/ralph/package.json"] = ralphManifest;
  return makeProject(files);
}
const trace = (cwd: string) => readFileSync(join(cwd, "trace.log"), "utf8");

describe.concurrent.each(CLIS)("1. version-check messages say 'version' (run: $name)", (cli) => {
  it("an unsatisfied range: one line naming workflow, range and running version, once per run", async () => {
    const cwd = twoWorkflows(JSON.stringify({ dependencies: { loopx: ">=999.0.0" } }));
    const result = await runCli(cli, ["run", "-n", "6", "ralph"], cwd);
    expect(result.code).toBe(0);
    expect(trace(cwd)).toBe("ralph\nother\n".repeat(3));
    expect(warnings(result.stderr)).toEqual([mismatchLine("ralph", ">=999.0.0")]);
  });

  it.each([
    ["an invalid semver range", JSON.stringify({ devDependencies: { loopx: "not a range!" } }), ['workflow "ralph"', 'loopx version "not a range!"', "not a valid semver range", "version check skipped"]],
    ["invalid JSON", "{ nope", ['workflow "ralph"', "package.json is invalid JSON", "version check skipped"]],
  ])("%s: one warning saying so, and the loop runs", async (_label, manifest, needles) => {
    const cwd = twoWorkflows(manifest);
    const result = await runCli(cli, ["run", "-n", "4", "ralph"], cwd);
    expect(result.code).toBe(0);
    expect(trace(cwd)).toBe("ralph\nother\n".repeat(2));
    const lines = warnings(result.stderr);
    expect(lines).toHaveLength(1);
    for (const needle of needles) expect(lines[0]).toContain(needle);
  });
});

describe.concurrent.each(RUNTIMES)("1. version-check messages say 'version' ($name)", (runtime) => {
  it("an unreadable (mode 000) package.json, loopx as an unprivileged user: 'cannot read' + the OS reason, the loop runs", async () => {
    const cwd = twoWorkflows(JSON.stringify({ dependencies: { loopx: ">=999.0.0" } }));
    const env = isolatedEnv();
    giveToUnprivileged(cwd, env.HOME!);
    chmodSync(join(cwd, ".loopx", "ralph", "package.json"), 0o000);
    const result = await runLoopxUnprivileged(runtime, ["run", "-n", "4", "ralph"], { cwd, env });
    expect(result.code, result.stderr).toBe(0);
    expect(trace(cwd)).toBe("ralph\nother\n".repeat(2));
    expect(warnings(result.stderr)).toEqual(['loopx: warning: workflow "ralph": cannot read package.json: permission denied (EACCES); loopx version check skipped']);
  });

  it("runPromise(): the same line as the CLI, once", async () => {
    const cwd = twoWorkflows(JSON.stringify({ dependencies: { loopx: "^99.0.0" } }));
    makeSymlink(ROOT, join(cwd, "node_modules", "loopx"));
    writeFileSync(join(cwd, "consumer.mjs"), 'import { runPromise } from "loopx";\nconsole.log((await runPromise("ralph", { maxIterations: 4 })).length);\n');
    const result = await runCommand(runtime.exe, [join(cwd, "consumer.mjs")], { cwd, env: isolatedEnv() });
    expect(result.stdout).toBe("4\n");
    expect(warnings(result.stderr)).toEqual([mismatchLine("ralph", "^99.0.0")]);
  });

  it("install: a mismatch is refused naming workflow, version, range and running version; broken manifests warn the same way", async () => {
    const source = makeBareRepo(
      {
        "strict/index.sh": "echo\n",
        "strict/package.json": JSON.stringify({ dependencies: { loopx: ">=999.0.0" } }),
        "badrange/index.sh": "echo\n",
        "badrange/package.json": JSON.stringify({ dependencies: { loopx: "latest" } }),
        "badjson/index.sh": "echo\n",
        "badjson/package.json": "{ nope",
      },
      tempDir(),
      "flows.git",
    );
    const cwd = makeProject();
    const refused = await runLoopx(runtime, ["install", fileUrl(source)], { cwd, env: isolatedEnv() });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`workflow "strict" declares loopx version >=999.0.0, but the running loopx version is ${VERSION} (not satisfied, use -y to install anyway)`);
    const forced = await runLoopx(runtime, ["install", "-y", fileUrl(source)], { cwd, env: isolatedEnv() });
    expect(forced.code).toBe(0);
    expect(warnings(forced.stderr)).toEqual([
      expect.stringMatching(/^loopx: warning: workflow "badjson": package\.json is invalid JSON \(.+\); loopx version check skipped$/),
      'loopx: warning: workflow "badrange": package.json declares loopx version "latest" in dependencies, which is not a valid semver range; loopx version check skipped',
      `loopx: warning: workflow "strict" declares loopx version >=999.0.0, but the running loopx version is ${VERSION} (not satisfied, installing anyway because of -y)`,
    ]);
  });

  it("delegation: an invalid or unreadable project package.json says 'invalid JSON' / 'cannot read' + the OS reason", async () => {
    const bad = makeProject({ "package.json": "{ nope" });
    const invalid = await runLoopx(runtime, ["version"], { cwd: bad, env: isolatedEnv() });
    expect(invalid.stdout).toBe(`${VERSION}\n`);
    expect(warnings(invalid.stderr)).toEqual([expect.stringMatching(/^loopx: warning: .*\/package\.json is invalid JSON \(.+\); not checking for a project-local loopx version/)]);

    const locked = makeProject({ "package.json": JSON.stringify({ devDependencies: { loopx: "*" } }) });
    const env = isolatedEnv();
    giveToUnprivileged(locked, env.HOME!);
    chmodSync(join(locked, "package.json"), 0o000);
    const unreadable = await runLoopxUnprivileged(runtime, ["version"], { cwd: locked, env });
    expect(unreadable.stdout).toBe(`${VERSION}\n`);
    // (Bun itself also complains about a cwd package.json it cannot read, before loopx runs.)
    expect(warnings(unreadable.stderr)).toEqual([`loopx: warning: cannot read ${join(locked, "package.json")}: permission denied (EACCES); not checking for a project-local loopx version (running this one)`]);
  });
});

describe.concurrent.each(RUNTIMES)("2. name collisions are called collisions ($name)", (runtime) => {
  const collision = 'workflow "ralph": name collision: scripts check.sh, check.ts share the script name "check"';

  it("run refuses naming the workflow, the files and the script name; run -h warns the same", async () => {
    const cwd = makeProject({ ".loopx/ralph/index.sh": "echo\n", ".loopx/ralph/check.sh": "echo\n", ".loopx/ralph/check.ts": "\n" });
    const run = await runLoopx(runtime, ["run", "ralph"], { cwd, env: isolatedEnv() });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`loopx: invalid .loopx/ (1 problem): ${collision}\n`);
    const help = await runLoopx(runtime, ["run", "-h"], { cwd, env: isolatedEnv() });
    expect(help.code).toBe(0);
    expect(warnings(help.stderr)).toEqual([`loopx: warning: ${collision}`]);
  });

  it("install preflight says the same", async () => {
    const source = makeBareRepo({ "index.sh": "echo\n", "check.sh": "echo\n", "check.ts": "\n" }, tempDir(), "ralph.git");
    const result = await runLoopx(runtime, ["install", fileUrl(source)], { cwd: makeProject(), env: isolatedEnv() });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`loopx: cannot install from ${fileUrl(source)}: ${collision}\n`);
  });
});

describe.concurrent.each(RUNTIMES)("3. install help ($name)", (runtime) => {
  it("describes git, GitHub shorthand, tarballs, -w and -y, and no removed source kind", async () => {
    const result = await runLoopx(runtime, ["install", "-h"], { cwd: makeProject(), env: isolatedEnv() });
    expect(result.code).toBe(0);
    for (const needle of ["org/repo", ".git", ".tar.gz", ".tgz", "-w, --workflow <name>", "-y"]) expect(result.stdout).toContain(needle);
    expect(result.stdout).not.toMatch(/single[- ]file/i);
  });
});

describe.concurrent.each(CLIS)("4. delegation passes LOOPX_BIN ($name)", (cli) => {
  it("the delegated process gets LOOPX_BIN = realpath of the local binary (not an inherited value) and LOOPX_DELEGATED=1", async () => {
    const cwd = makeProject({
      "package.json": JSON.stringify({ devDependencies: { loopx: "*" } }),
      "tools/real-loopx.sh": '#!/bin/bash\necho "bin=[$LOOPX_BIN] delegated=[$LOOPX_DELEGATED]"\n',
    });
    chmodSync(join(cwd, "tools", "real-loopx.sh"), 0o755);
    makeSymlink("../../tools/real-loopx.sh", join(cwd, "node_modules", ".bin", "loopx"));
    const result = await runCli(cli, ["version"], cwd, isolatedEnv({ LOOPX_BIN: "/somewhere/else" }));
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`bin=[${realpathSync(join(cwd, "tools", "real-loopx.sh"))}] delegated=[1]\n`);
  });
});

describe.concurrent.each(CLIS)("5. JSX is the same everywhere ($name)", (cli) => {
  const show = (expr: string) => `import { writeFileSync } from "node:fs";\nwriteFileSync(process.env.LOOPX_PROJECT_ROOT + "/" + process.env.LOOPX_WORKFLOW + ".out", JSON.stringify(${expr}));\n`;
  const ownReact = 'const React = { createElement: (t: any, p: any, ...c: any[]) => ({ t, p, c }), Fragment: "frag" };\n';
  const element = '<div a="1">x<></></div>';

  it("classic React.createElement by default (.tsx and .jsx); a workflow's tsconfig.json jsx settings win", async () => {
    const cwd = makeProject({
      ".loopx/tsx/index.tsx": ownReact + show(element),
      ".loopx/jsx/index.jsx": ownReact.replace(/: any(\[\])?/g, "") + show(element),
      ".loopx/factory/index.tsx": 'const h = (t: any, p: any, ...c: any[]) => ({ h: t, c });\nconst Frag = "F";\n' + show(element),
      ".loopx/factory/tsconfig.json": JSON.stringify({ compilerOptions: { jsx: "react", jsxFactory: "h", jsxFragmentFactory: "Frag" } }),
      ".loopx/automatic/index.tsx": show(element),
      ".loopx/automatic/tsconfig.json": JSON.stringify({ compilerOptions: { jsx: "react-jsx", jsxImportSource: "tinyjsx" } }),
      ".loopx/automatic/node_modules/tinyjsx/package.json": JSON.stringify({ name: "tinyjsx", type: "module", exports: { "./jsx-runtime": "./rt.js", "./jsx-dev-runtime": "./rt.js" } }),
      ".loopx/automatic/node_modules/tinyjsx/rt.js": 'export const Fragment = "F";\nexport const jsx = (t, p) => ({ auto: t, p });\nexport const jsxs = jsx;\nexport const jsxDEV = jsx;\n',
    });
    for (const workflow of ["tsx", "jsx", "factory", "automatic"]) {
      const result = await runCli(cli, ["run", "-n", "1", workflow], cwd);
      expect(result.code, `${workflow}: ${result.stderr}`).toBe(0);
    }
    const out = (workflow: string) => JSON.parse(readFileSync(join(cwd, `${workflow}.out`), "utf8"));
    const classic = { t: "div", p: { a: "1" }, c: ["x", { t: "frag", p: null, c: [] }] };
    expect(out("tsx")).toStrictEqual(classic);
    expect(out("jsx")).toStrictEqual(classic);
    expect(out("factory")).toStrictEqual({ h: "div", c: ["x", { h: "F", c: [] }] });
    expect(out("automatic")).toStrictEqual({ auto: "div", p: { a: "1", children: ["x", { auto: "F", p: {} }] } });
  });
});

describe.each(RUNTIMES)("6. install carries unreadable files over ($name)", (runtime) => {
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
    expect(trace(cwd)).toBe("ran\nran\n");
    expect(warnings(run.stderr)).toEqual(['loopx: warning: workflow "ralph": cannot read package.json: permission denied (EACCES); loopx version check skipped']);
  });
});

describe("7. permission cases run unprivileged, never skipped", () => {
  it("the unprivileged runner really drops root: a mode-000 file is unreadable to it", async () => {
    const dir = tempDir("loopx-unpriv-");
    writeFileSync(join(dir, "f"), "x");
    giveToUnprivileged(dir);
    chmodSync(join(dir, "f"), 0o000);
    for (const exe of [NODE, BUN]) {
      const [command, args] = unprivileged(exe, ["-e", `try { require("fs").readFileSync(${JSON.stringify(join(dir, "f"))}); console.log("read") } catch (e) { console.log(e.code) }`], dir);
      const result = await runCommand(command, args, { cwd: dir, env: isolatedEnv() });
      expect(result.stdout).toBe("EACCES\n");
    }
  });
});
