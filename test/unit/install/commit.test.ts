/**
 * The stage and commit phases in-process (spec §10.7), for the failures a black-box test cannot
 * provoke on demand: a rename failing halfway through the commit, a staging copy failing.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { commitAll, stageAll } from "../../../src/install/commit.js";
import type { PlannedWorkflow } from "../../../src/install/preflight.js";
import { makeProject, tempDir } from "../../helpers.js";
import { listDir, snapshot } from "../../fixtures/install/support.js";

function setup(names: string[], existing: Record<string, string> = {}) {
  const source = makeProject(Object.fromEntries(names.map((name) => [`${name}/index.sh`, `echo ${name}\n`])));
  const project = makeProject(existing);
  const loopx = join(project, ".loopx");
  mkdirSync(loopx, { recursive: true });
  const staging = join(loopx, ".install-test");
  mkdirSync(staging);
  const planned: PlannedWorkflow[] = names.map((name) => ({
    name,
    from: join(source, name),
    destination: join(loopx, name),
    replace: existsSync(join(loopx, name)),
  }));
  return { loopx, staging, planned };
}

describe("install stage and commit", () => {
  it("stages complete copies, then commits them all by rename", () => {
    const { loopx, staging, planned } = setup(["a", "b"]);
    const staged = stageAll(planned, staging);
    expect(listDir(staging)).toEqual(["a", "b"]);
    commitAll(staged, join(staging, ".replaced"));
    expect(listDir(loopx)).toEqual([".install-test", "a", "b"]);
    expect(listDir(staging)).toEqual([]);
    expect(readFileSync(join(loopx, "b", "index.sh"), "utf8")).toBe("echo b\n");
  });

  it("a rename failing mid-commit reports which workflows were and were not committed", () => {
    const { loopx, staging, planned } = setup(["a", "b", "c"]);
    const staged = stageAll(planned, staging);
    rmSync(staged[1]!.staged, { recursive: true }); // the rename of "b" will fail
    expect(() => commitAll(staged, join(staging, ".replaced"))).toThrow(
      /^cannot install workflow "b": .*ENOENT.*; committed: a; not committed: b, c$/,
    );
    expect(listDir(loopx)).toEqual([".install-test", "a"]);
  });

  it("a failure replacing a workflow puts the old one back", () => {
    const { loopx, staging, planned } = setup(["a"], { ".loopx/a/index.sh": "echo old\n", ".loopx/a/extra.md": "x" });
    expect(planned[0]!.replace).toBe(true);
    const before = snapshot(join(loopx, "a"));
    const staged = stageAll(planned, staging);
    rmSync(staged[0]!.staged, { recursive: true });
    expect(() => commitAll(staged, join(staging, ".replaced"))).toThrow(/^cannot install workflow "a": .*; committed: none; not committed: a$/);
    expect(snapshot(join(loopx, "a"))).toEqual(before);
  });

  it("an entry that appeared at the destination after preflight is never overwritten", () => {
    const { loopx, staging, planned } = setup(["a", "b"]);
    const staged = stageAll(planned, staging);
    mkdirSync(join(loopx, "b")); // empty directory: rename(2) would silently replace it
    expect(() => commitAll(staged, join(staging, ".replaced"))).toThrow(/^cannot install workflow "b": \.loopx\/b appeared during the install; committed: a; not committed: b$/);
    expect(listDir(join(loopx, "b"))).toEqual([]);
  });

  it("a staging copy failure names the workflow", () => {
    const { staging, planned } = setup(["a"]);
    execFileSync("mkfifo", [join(planned[0]!.from, "pipe")]);
    expect(() => stageAll(planned, staging)).toThrow(/^cannot stage workflow "a": .*pipe is a FIFO; nothing was installed$/);
  });

  it("the tree checks refuse special files in a source", async () => {
    const { unsafeEntries } = await import("../../../src/install/tree.js");
    const dir = tempDir();
    execFileSync("mkfifo", [join(dir, "fifo")]);
    expect(unsafeEntries(dir)).toEqual(['"fifo" is a FIFO']);
  });
});
