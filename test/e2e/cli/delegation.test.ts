/**
 * Local version pinning and delegation (spec §3.2): the global loopx hands the whole invocation
 * to the project's node_modules/.bin/loopx before parsing anything.
 */
import { chmodSync, cpSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLIS, ROOT, RUNTIMES, VERSION, giveToUnprivileged, isolatedEnv, makeProject, makeSymlink, processAlive, runCli, runLoopx, runLoopxUnprivileged, tempDir, waitFor, warnings } from "../../helpers.js";

/** A stand-in local loopx that reports how it was called and exits 7. */
const FAKE_LOCAL = '#!/bin/bash\necho "local-loopx args=[$*] delegated=[${LOOPX_DELEGATED-unset}]"\nexit 7\n';

function projectWith(manifest: string | undefined, withBin: boolean, extra: Record<string, string> = {}): string {
  const files: Record<string, string> = { ...extra };
  if (manifest !== undefined) files["package.json"] = manifest;
  if (withBin) files["node_modules/.bin/loopx"] = FAKE_LOCAL;
  const dir = makeProject(files);
  if (withBin) chmodSync(join(dir, "node_modules", ".bin", "loopx"), 0o755);
  return dir;
}

/** A real second copy of the built package, pinned at version 9.9.9, installed in `project`. */
function installPinnedCopy(project: string): string {
  const pinned = join(tempDir("loopx-pinned-"), "loopx");
  mkdirSync(pinned);
  const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  writeFileSync(join(pinned, "package.json"), JSON.stringify({ ...manifest, version: "9.9.9" }));
  cpSync(join(ROOT, "dist"), join(pinned, "dist"), { recursive: true, filter: (src) => !src.includes(`${join(ROOT, "dist", "bin")}/`) });
  symlinkSync(join(ROOT, "node_modules"), join(pinned, "node_modules"));
  mkdirSync(join(project, "node_modules", ".bin"), { recursive: true });
  symlinkSync(pinned, join(project, "node_modules", "loopx"));
  symlinkSync("../loopx/dist/bin.js", join(project, "node_modules", ".bin", "loopx"));
  return pinned;
}

describe.each(RUNTIMES)("delegation ($name)", (runtime) => {
  it.each(["dependencies", "devDependencies", "optionalDependencies"])("delegates when loopx is in %s and the local binary exists", async (field) => {
    const cwd = projectWith(JSON.stringify({ [field]: { loopx: "^1" } }), true);
    const result = await runLoopx(runtime, ["version"], { cwd, env: isolatedEnv() });
    expect(result.stdout).toBe("local-loopx args=[version] delegated=[1]\n");
    expect(result.code).toBe(7); // exit code passes through unchanged
    expect(result.stderr).toBe("");
  });

  it("delegates before command parsing: even an invalid command line goes to the local binary", async () => {
    const cwd = projectWith(JSON.stringify({ devDependencies: { loopx: "*" } }), true);
    const result = await runLoopx(runtime, ["--unknown", "-n", "5", "x"], { cwd, env: isolatedEnv() });
    expect(result.stdout).toBe("local-loopx args=[--unknown -n 5 x] delegated=[1]\n");
    expect(result.code).toBe(7);
  });

  it("never delegates when LOOPX_DELEGATED is set, even to an empty string", async () => {
    const cwd = projectWith(JSON.stringify({ dependencies: { loopx: "*" } }), true);
    for (const value of ["1", ""]) {
      const result = await runLoopx(runtime, ["version"], { cwd, env: isolatedEnv({ LOOPX_DELEGATED: value }) });
      expect(result.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
      expect(result.code).toBe(0);
    }
  });

  it.each([
    ["no package.json", undefined, true, false],
    ["loopx not declared, binary present", JSON.stringify({ dependencies: { other: "1" } }), true, false],
    ["invalid JSON", "{not json", true, true],
    ["declared but node_modules/.bin/loopx missing", JSON.stringify({ devDependencies: { loopx: "*" } }), false, true],
  ] as const)("%s → runs the global loopx (warning: %s)", async (_label, manifest, withBin, warns) => {
    const cwd = projectWith(manifest, withBin);
    const result = await runLoopx(runtime, ["version"], { cwd, env: isolatedEnv() });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    if (!warns) expect(result.stderr).toBe("");
    else if (runtime.name === "node" || manifest !== "{not json") expect(result.stderr).toMatch(/^loopx: warning: .*package\.json.*\n$/);
    // Bun itself reports a cwd package.json it cannot parse on every start, before loopx runs.
    else expect(result.stderr).toMatch(/^loopx: warning: .*package\.json is invalid JSON.*$/m);
  });

  it("an unreadable package.json (a directory) warns and runs the global loopx", async () => {
    const cwd = projectWith(undefined, true);
    mkdirSync(join(cwd, "package.json"));
    const result = await runLoopx(runtime, ["version"], { cwd, env: isolatedEnv() });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^loopx: warning: .*package\.json.*\n$/);
  });

  it("does not search ancestors: the project root is the cwd", async () => {
    const parent = projectWith(JSON.stringify({ dependencies: { loopx: "*" } }), true);
    const cwd = join(parent, "sub");
    mkdirSync(cwd);
    const result = await runLoopx(runtime, ["version"], { cwd, env: isolatedEnv() });
    expect(result.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    expect(result.stderr).toBe("");
  });

  it("runs the pinned version for every command; LOOPX_BIN is the realpath of the pinned binary", async () => {
    const cwd = makeProject({
      "package.json": JSON.stringify({ devDependencies: { loopx: "9.9.9" } }),
      ".loopx/wf/index.sh": 'echo "$LOOPX_BIN" > "$LOOPX_PROJECT_ROOT/bin.txt"\n$LOOPX_BIN output --stop\n',
      ".loopx/wf/helper.ts": 'import { output } from "loopx";\noutput({ result: "ts", stop: true });\n',
    });
    const pinned = installPinnedCopy(cwd);
    const version = await runLoopx(runtime, ["version"], { cwd, env: isolatedEnv() });
    expect(version.stdout).toBe("9.9.9\n");
    const run = await runLoopx(runtime, ["run", "wf"], { cwd, env: isolatedEnv() });
    expect(run.code).toBe(0);
    expect(readFileSync(join(cwd, "bin.txt"), "utf8").trim()).toBe(join(pinned, "dist", "bin.js"));
    const ts = await runLoopx(runtime, ["run", "wf:helper"], { cwd, env: isolatedEnv() });
    expect(ts.code).toBe(0);
  });

  it("signals pass through: SIGINT to the global loopx ends the delegated loop with 130 and no orphans", async () => {
    const cwd = makeProject({
      "package.json": JSON.stringify({ devDependencies: { loopx: "9.9.9" } }),
      ".loopx/wf/index.sh": 'sleep 1000 &\necho $! > "$LOOPX_PROJECT_ROOT/sleep.pid"\n: > "$LOOPX_PROJECT_ROOT/ready"\nwait\n',
    });
    installPinnedCopy(cwd);
    const result = await runLoopx(runtime, ["run", "wf"], {
      cwd,
      env: isolatedEnv(),
      onSpawn: (child) => {
        void waitFor(() => {
          try {
            readFileSync(join(cwd, "ready"));
            return true;
          } catch {
            return false;
          }
        }, 20_000).then(() => child.kill("SIGINT"));
      },
    });
    expect(result.code).toBe(130);
    expect(processAlive(Number(readFileSync(join(cwd, "sleep.pid"), "utf8")))).toBe(false);
  });
});

describe.concurrent.each(RUNTIMES)("delegation: a broken project package.json ($name)", (runtime) => {
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

describe.concurrent.each(CLIS)("delegation passes LOOPX_BIN ($name)", (cli) => {
  it("the delegated process gets LOOPX_BIN = realpath of the local binary (not an inherited value) and LOOPX_DELEGATED=1", async () => {
    const cwd = makeProject({
      "package.json": JSON.stringify({ devDependencies: { loopx: "*" } }),
      "tools/real-loopx.sh": '#!/bin/bash\necho "bin=[$LOOPX_BIN] delegated=[$LOOPX_DELEGATED]"\n',
    });
    chmodSync(join(cwd, "tools", "real-loopx.sh"), 0o755);
    makeSymlink("../../tools/real-loopx.sh", join(cwd, "node_modules", ".bin", "loopx"));
    const result = await runCli(cli, ["version"], { cwd, env: isolatedEnv({ LOOPX_BIN: "/somewhere/else" }), timeoutMs: 60_000 });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`bin=[${realpathSync(join(cwd, "tools", "real-loopx.sh"))}] delegated=[1]\n`);
  });
});
