/**
 * The stage and commit phases in-process (spec §10.7), for the failures a black-box test cannot
 * provoke on demand: a rename failing halfway through the commit, a staging copy failing; and the
 * staging move (a tree in loopx's own temp directory), which must leave what a copy leaves.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, linkSync, lstatSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
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
  return { source, loopx, staging, planned };
}

/** An own directory that holds none of the sources: every workflow is copied. */
const NOT_OWN = "/nonexistent/loopx-own";

/** A workflow tree with what a copy changes: setuid and sticky bits, a directory without owner write, a hard link, a symlink. */
function oddTree(root: string): string {
  const dir = join(root, "odd");
  mkdirSync(join(dir, "sub"), { recursive: true });
  writeFileSync(join(dir, "index.sh"), "echo odd\n");
  writeFileSync(join(dir, "sub", "data.txt"), "data\n");
  linkSync(join(dir, "sub", "data.txt"), join(dir, "twin.txt"));
  symlinkSync("sub/data.txt", join(dir, "link"));
  chmodSync(join(dir, "index.sh"), 0o4755);
  chmodSync(join(dir, "twin.txt"), 0o1644);
  chmodSync(join(dir, "sub"), 0o555);
  return dir;
}

describe("install stage and commit", () => {
  it("stages complete copies, then commits them all by rename", () => {
    const { loopx, staging, planned } = setup(["a", "b"]);
    const staged = stageAll(planned, staging, NOT_OWN);
    expect(listDir(staging)).toEqual(["a", "b"]);
    commitAll(staged, join(staging, ".replaced"));
    expect(listDir(loopx)).toEqual([".install-test", "a", "b"]);
    expect(listDir(staging)).toEqual([]);
    expect(readFileSync(join(loopx, "b", "index.sh"), "utf8")).toBe("echo b\n");
  });

  it("a rename failing mid-commit reports which workflows were and were not committed", () => {
    const { loopx, staging, planned } = setup(["a", "b", "c"]);
    const staged = stageAll(planned, staging, NOT_OWN);
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
    const staged = stageAll(planned, staging, NOT_OWN);
    rmSync(staged[0]!.staged, { recursive: true });
    expect(() => commitAll(staged, join(staging, ".replaced"))).toThrow(/^cannot install workflow "a": .*; committed: none; not committed: a$/);
    expect(snapshot(join(loopx, "a"))).toEqual(before);
  });

  it("an entry that appeared at the destination after preflight is never overwritten", () => {
    const { loopx, staging, planned } = setup(["a", "b"]);
    const staged = stageAll(planned, staging, NOT_OWN);
    mkdirSync(join(loopx, "b")); // empty directory: rename(2) would silently replace it
    expect(() => commitAll(staged, join(staging, ".replaced"))).toThrow(/^cannot install workflow "b": \.loopx\/b appeared during the install; committed: a; not committed: b$/);
    expect(listDir(join(loopx, "b"))).toEqual([]);
  });

  it("a staging copy failure names the workflow", () => {
    const { staging, planned } = setup(["a"]);
    execFileSync("mkfifo", [join(planned[0]!.from, "pipe")]);
    expect(() => stageAll(planned, staging, NOT_OWN)).toThrow(/^cannot stage workflow "a": .*pipe is a FIFO; nothing was installed$/);
  });

  it("the tree checks refuse special files in a source", async () => {
    const { unsafeEntries } = await import("../../../src/install/tree.js");
    const dir = tempDir();
    execFileSync("mkfifo", [join(dir, "fifo")]);
    expect(unsafeEntries(dir)).toEqual(['"fifo" is a FIFO']);
  });

  it("moves a workflow out of loopx's own directory, leaving exactly what a copy leaves", () => {
    const { loopx, staging } = setup([]);
    const own = tempDir();
    for (const dir of ["c", "m"]) mkdirSync(join(staging, dir));
    const copied = stageAll([{ name: "odd", from: oddTree(tempDir()), destination: join(loopx, "odd"), replace: false }], join(staging, "c"), NOT_OWN);
    const moved = stageAll([{ name: "odd", from: oddTree(own), destination: join(loopx, "odd"), replace: false }], join(staging, "m"), own);
    expect(existsSync(join(own, "odd"))).toBe(false); // moved, not copied
    expect(snapshot(moved[0]!.staged)).toEqual(snapshot(copied[0]!.staged));
    expect(snapshot(moved[0]!.staged)).toMatchObject({ "": "dir 755", "index.sh": expect.stringMatching(/^file 755 /), sub: "dir 755", "twin.txt": expect.stringMatching(/^file 644 /), link: "link -> sub/data.txt" });
    expect(lstatSync(join(moved[0]!.staged, "twin.txt")).nlink).toBe(1);
    expect(lstatSync(join(moved[0]!.staged, "sub", "data.txt")).nlink).toBe(1);
    expect(listDir(join(staging, "m"))).toEqual(["odd"]); // no scratch copy left beside it
  });

  it("workflows that share a tree are copied, not moved", () => {
    const { source, staging, planned } = setup(["a"]);
    const twice: PlannedWorkflow[] = [planned[0]!, { ...planned[0]!, name: "b" }];
    const staged = stageAll(twice, staging, source);
    expect(staged.map((w) => readFileSync(join(w.staged, "index.sh"), "utf8"))).toEqual(["echo a\n", "echo a\n"]);
    expect(existsSync(planned[0]!.from)).toBe(true);
  });

  it.runIf(existsSync("/dev/shm") && lstatSync("/dev/shm").dev !== lstatSync(tempDir()).dev)("a tree on another file system is copied (EXDEV)", () => {
    const { staging } = setup([]);
    const shm = join("/dev/shm", `loopx-test-${process.pid}-${Date.now()}`);
    mkdirSync(shm);
    try {
      const staged = stageAll([{ name: "odd", from: oddTree(shm), destination: "unused", replace: false }], staging, shm);
      expect(existsSync(join(shm, "odd", "index.sh"))).toBe(true); // still there: copied
      expect(snapshot(staged[0]!.staged)).toMatchObject({ "index.sh": expect.stringMatching(/^file 755 /), sub: "dir 755" });
    } finally {
      rmSync(shm, { recursive: true, force: true });
    }
  });
});
