/**
 * loopx's own install forms, `loopx install --builtin [<name>...]` and `loopx install --local
 * <path>`, next to the spec's sources, whose meaning they leave alone: a path given without
 * --local is still refused by spec §10.1 (with a pointer to --local). Under node and bun (the
 * binary's embedded workflows are walked in test/journeys/).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, RUNTIMES, expectOneLineError, isolatedEnv, makeProject, runLoopx, snapshotTree, tempDir } from "../../helpers.js";
import { packedWorkflows } from "../../fixtures/agents/support.js";

const TARBALL = join(ROOT, "dist", "workflows.tar.gz");

describe.each(RUNTIMES)("loopx install --builtin / --local ($name)", (runtime) => {
  const install = (cwd: string, args: string[]) => runLoopx(runtime, ["install", ...args], { cwd, env: isolatedEnv() });

  it("--builtin installs every shipped workflow, or the ones named; an unknown name is one line listing them", async () => {
    const all = makeProject();
    expect(await install(all, ["--builtin"])).toMatchObject({ code: 0, stderr: "", stdout: 'installed workflow "converge" in .loopx/converge\ninstalled workflow "ralph" in .loopx/ralph\n' });
    for (const name of ["ralph", "converge"]) expect(snapshotTree(join(all, ".loopx", name))).toEqual(snapshotTree(join(packedWorkflows(), name)));
    const named = makeProject();
    expect(await install(named, ["--builtin", "converge"])).toMatchObject({ code: 0, stderr: "", stdout: 'installed workflow "converge" in .loopx/converge\n' });
    expect(existsSync(join(named, ".loopx", "ralph"))).toBe(false);
    expectOneLineError(await install(named, ["--builtin", "ralf"]), `workflow "ralf" not found in loopx's shipped workflows (its workflows: converge, ralph)`);
    expectOneLineError(await install(named, ["--builtin", "converge"]), ".loopx/converge already exists (use -y to replace it)");
    expectOneLineError(await install(named, ["--builtin", "--local", "x"]), "--builtin and --local cannot be combined");
  });

  it("--local takes a .tar.gz (with -w) and a directory (multi- or single-workflow, its .git left out)", async () => {
    const project = makeProject();
    expect(await install(project, ["--local", TARBALL, "-w", "ralph"])).toMatchObject({ code: 0, stderr: "", stdout: 'installed workflow "ralph" in .loopx/ralph\n' });
    expect(snapshotTree(join(project, ".loopx", "ralph"))).toEqual(snapshotTree(join(packedWorkflows(), "ralph")));
    // The packed tree as a directory.
    const other = makeProject();
    expect(await install(other, ["--local", packedWorkflows()])).toMatchObject({ code: 0, stderr: "" });
    expect(snapshotTree(join(other, ".loopx", "converge"))).toEqual(snapshotTree(join(packedWorkflows(), "converge")));
    const single = join(tempDir("loopx-local-"), "hello");
    mkdirSync(join(single, "lib"), { recursive: true });
    writeFileSync(join(single, "index.sh"), "#!/bin/bash\necho '{\"stop\":true}'\n");
    writeFileSync(join(single, "lib", "notes.md"), "notes\n");
    expect(spawnSync("git", ["init", "-q"], { cwd: single }).status).toBe(0);
    // Relative to where loopx is started (both temp directories share a parent).
    const third = makeProject();
    const relativePath = join("..", relative(dirname(third), single));
    expect(await install(third, ["--local", relativePath])).toMatchObject({ code: 0, stderr: "", stdout: 'installed workflow "hello" in .loopx/hello\n' });
    expect(await install(third, ["-y", "--local", single])).toMatchObject({ code: 0, stderr: "", stdout: 'replaced workflow "hello" in .loopx/hello\n' });
    expect(Object.keys(snapshotTree(join(third, ".loopx", "hello"))).sort()).toEqual(["index.sh", "lib", "lib/notes.md"]);
  });

  it("--local refuses what is neither a directory nor an archive, and what is not there, in one line; a path without --local is still the spec's unsupported source", async () => {
    const project = makeProject({ "notes.txt": "x\n", "flows/a/index.sh": "echo\n" });
    expectOneLineError(await install(project, ["--local", "notes.txt"]), "cannot install from notes.txt: --local takes a directory or a .tar.gz / .tgz archive");
    expectOneLineError(await install(project, ["--local", "missing.tar.gz"]), "cannot install from missing.tar.gz: no such file or directory");
    expectOneLineError(await install(project, ["./flows"]), 'unsupported source "./flows"', "loopx install --local <path>");
    expect(existsSync(join(project, ".loopx"))).toBe(false);
  });
});
