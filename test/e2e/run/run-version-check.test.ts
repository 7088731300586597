/**
 * Workflow-level version checks at run time (spec §3.2): warnings, never errors; once per workflow
 * on first entry; dependencies over devDependencies; optionalDependencies ignored; skipped for -n 0.
 * Every message names the workflow, the word "version", the declared range and the running
 * version; a broken package.json says "semver range" / "invalid JSON" / "cannot read" + the OS
 * reason (the unreadable case as an unprivileged user); once per workflow per run, under node, bun
 * and the standalone binary, and from runPromise().
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLIS, ROOT, RUNTIMES, VERSION, giveToUnprivileged, isolatedEnv, makeProject, makeSymlink, runCli, runCommand, runLoopx, runLoopxUnprivileged, warnings } from "../../helpers.js";
import { itFor } from "../../case-tables.js";
import { chmodSync, writeFileSync } from "node:fs";

/** wf:index → goto other:index → reset → ... ; each run appends to trace. */
function project(wfManifest: string | undefined, otherManifest?: string): string {
  const files: Record<string, string> = {
    ".loopx/wf/index.sh": 'echo wf >> "$LOOPX_PROJECT_ROOT/trace"\necho \'{"goto":"other:index"}\'\n',
    ".loopx/other/index.sh": 'echo other >> "$LOOPX_PROJECT_ROOT/trace"\n',
  };
  if (wfManifest !== undefined) files[".loopx/wf/package.json"] = wfManifest;
  if (otherManifest !== undefined) files[".loopx/other/package.json"] = otherManifest;
  return makeProject(files);
}

const deps = (field: string, range: string) => JSON.stringify({ [field]: { loopx: range } });
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

describe.each(RUNTIMES)("workflow version checks ($name)", (runtime) => {
  // Loopx's own logic: every test under Node, every third under Bun (test/case-tables.ts).
  const test = itFor(runtime);
  test("an unsatisfied range warns once for the starting workflow, before its first run, and the loop goes on", async () => {
    const cwd = project(deps("dependencies", "^99.0.0"));
    const result = await runLoopx(runtime, ["run", "-n", "6", "wf"], { cwd, env: isolatedEnv() });
    expect(result.code).toBe(0);
    expect(readFileSync(join(cwd, "trace"), "utf8")).toBe("wf\nother\n".repeat(3));
    const lines = warnings(result.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('"wf"');
    expect(lines[0]).toContain("^99.0.0");
    expect(lines[0]).toContain(VERSION);
  });

  test("a workflow reached by goto is checked on first entry only", async () => {
    const cwd = project(undefined, deps("devDependencies", "<0.0.1"));
    const result = await runLoopx(runtime, ["run", "-n", "6", "wf"], { cwd, env: isolatedEnv() });
    expect(result.code).toBe(0);
    expect(warnings(result.stderr)).toEqual([expect.stringContaining('"other"')]);
  });

  it.each([
    ["satisfied range in dependencies", deps("dependencies", `>=${VERSION}`), false],
    ["wildcard", deps("devDependencies", "*"), false],
    ["dependencies (satisfied) take precedence over devDependencies (not)", JSON.stringify({ dependencies: { loopx: "*" }, devDependencies: { loopx: "^99" } }), false],
    ["dependencies (not satisfied) take precedence over devDependencies (satisfied)", JSON.stringify({ dependencies: { loopx: "^99" }, devDependencies: { loopx: "*" } }), true],
    ["optionalDependencies are ignored at workflow level", deps("optionalDependencies", "^99"), false],
    ["no loopx declared", JSON.stringify({ dependencies: { other: "^1" } }), false],
    ["invalid JSON", "{ nope", true],
    ["invalid semver range", deps("dependencies", "not a range!"), true],
  ] as const)("%s → warning: %s", async (_label, manifest, warns) => {
    const cwd = project(manifest);
    const result = await runLoopx(runtime, ["run", "-n", "2", "wf"], { cwd, env: isolatedEnv() });
    expect(result.code).toBe(0);
    expect(readFileSync(join(cwd, "trace"), "utf8")).toBe("wf\nother\n");
    expect(warnings(result.stderr)).toHaveLength(warns ? 1 : 0);
  });

  test("an unreadable package.json (a directory) warns and the loop still runs", async () => {
    const cwd = project(undefined);
    mkdirSync(join(cwd, ".loopx", "wf", "package.json"));
    const result = await runLoopx(runtime, ["run", "-n", "1", "wf"], { cwd, env: isolatedEnv() });
    expect(result.code).toBe(0);
    expect(warnings(result.stderr)).toEqual([expect.stringMatching(/"wf".*package\.json/)]);
  });

  test("-n 0 skips the version check", async () => {
    const cwd = project(deps("dependencies", "^99"));
    const result = await runLoopx(runtime, ["run", "-n", "0", "wf"], { cwd, env: isolatedEnv() });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
  });

  test("the API applies the same rule", async () => {
    const cwd = project(deps("dependencies", "^99"));
    makeSymlink(ROOT, join(cwd, "node_modules", "loopx"));
    const consumer = join(cwd, "consumer.mjs");
    await import("node:fs").then((fs) =>
      fs.writeFileSync(consumer, 'import { runPromise } from "loopx";\nconsole.log(JSON.stringify(await runPromise("wf", { maxIterations: 4 })));\n'),
    );
    const result = await runCommand(runtime.exe, [consumer], { cwd, env: isolatedEnv() });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toHaveLength(4);
    expect(warnings(result.stderr)).toHaveLength(1);
  });
});

describe.concurrent.each(CLIS)("version-check messages say 'version' (run: $name)", (cli) => {
  it("an unsatisfied range: one line naming workflow, range and running version, once per run", async () => {
    const cwd = twoWorkflows(JSON.stringify({ dependencies: { loopx: ">=999.0.0" } }));
    const result = await runCli(cli, ["run", "-n", "6", "ralph"], { cwd, env: isolatedEnv(), timeoutMs: 60_000 });
    expect(result.code).toBe(0);
    expect(trace(cwd)).toBe("ralph\nother\n".repeat(3));
    expect(warnings(result.stderr)).toEqual([mismatchLine("ralph", ">=999.0.0")]);
  });

  it.each([
    ["an invalid semver range", JSON.stringify({ devDependencies: { loopx: "not a range!" } }), ['workflow "ralph"', 'loopx version "not a range!"', "not a valid semver range", "version check skipped"]],
    ["invalid JSON", "{ nope", ['workflow "ralph"', "package.json is invalid JSON", "version check skipped"]],
  ])("%s: one warning saying so, and the loop runs", async (_label, manifest, needles) => {
    const cwd = twoWorkflows(manifest);
    const result = await runCli(cli, ["run", "-n", "4", "ralph"], { cwd, env: isolatedEnv(), timeoutMs: 60_000 });
    expect(result.code).toBe(0);
    expect(trace(cwd)).toBe("ralph\nother\n".repeat(2));
    const lines = warnings(result.stderr);
    expect(lines).toHaveLength(1);
    for (const needle of needles) expect(lines[0]).toContain(needle);
  });
});

describe.concurrent.each(RUNTIMES)("version-check messages say 'version' ($name)", (runtime) => {
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
});
