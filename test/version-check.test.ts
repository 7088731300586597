/**
 * Workflow-level version checks at run time (spec §3.2): warnings, never errors; once per workflow
 * on first entry; dependencies over devDependencies; optionalDependencies ignored; skipped for -n 0.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, RUNTIMES, isolatedEnv, makeProject, makeSymlink, runCommand, runLoopx } from "./helpers.js";

const VERSION = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version as string;

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
const warnings = (stderr: string) => stderr.split("\n").filter((line) => line.startsWith("loopx: warning:"));

describe.each(RUNTIMES)("workflow version checks ($name)", (runtime) => {
  it("an unsatisfied range warns once for the starting workflow, before its first run, and the loop goes on", async () => {
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

  it("a workflow reached by goto is checked on first entry only", async () => {
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

  it("an unreadable package.json (a directory) warns and the loop still runs", async () => {
    const cwd = project(undefined);
    mkdirSync(join(cwd, ".loopx", "wf", "package.json"));
    const result = await runLoopx(runtime, ["run", "-n", "1", "wf"], { cwd, env: isolatedEnv() });
    expect(result.code).toBe(0);
    expect(warnings(result.stderr)).toEqual([expect.stringMatching(/"wf".*package\.json/)]);
  });

  it("-n 0 skips the version check", async () => {
    const cwd = project(deps("dependencies", "^99"));
    const result = await runLoopx(runtime, ["run", "-n", "0", "wf"], { cwd, env: isolatedEnv() });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
  });

  it("the API applies the same rule", async () => {
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
