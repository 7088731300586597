/**
 * Help forms (spec §4.2, §11): top-level help, the run -h short-circuit and run help's
 * non-fatal discovery, install help. Black-box: spawns the built CLI.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RUNTIMES, isolatedEnv, makeProject, runLoopx, snapshotTree, tempDir, type RunResult, type Runtime } from "../../helpers.js";
import { tableFor } from "../../case-tables.js";

const MARK = '#!/bin/bash\necho ran >> "$LOOPX_PROJECT_ROOT/ran.log"\necho \'{"stop": true}\'\n';

/**
 * A valid `.loopx/`: ralph (index + check-ready), zebrawf (setup.ts only, no index; a README, a
 * schema and a lib/ helper that must not be listed), and a script-less directory (not a workflow).
 */
function validProject(): string {
  return makeProject({
    ".loopx/ralph/index.sh": MARK,
    ".loopx/ralph/check-ready.sh": MARK,
    ".loopx/zebrawf/setup.ts": 'console.log(\'{"stop": true}\');\n',
    ".loopx/zebrawf/README.md": "# docs\n",
    ".loopx/zebrawf/schema.json": "{}\n",
    ".loopx/zebrawf/lib/helperfile.ts": "export const x = 1;\n",
    ".loopx/notesonly/notes.txt": "not a workflow\n",
  });
}

/** A `.loopx/` with a same-base-name collision, an invalid workflow name and an invalid script name. */
function brokenProject(): string {
  return makeProject({
    ".loopx/zebrawf/check.sh": MARK,
    ".loopx/zebrawf/check.ts": "console.log('x');\n",
    ".loopx/zebrawf/index.sh": MARK,
    ".loopx/bad.name/index.sh": MARK,
    ".loopx/goodwf/index.sh": MARK,
    ".loopx/goodwf/has space.sh": MARK,
  });
}

interface Observed {
  result: RunResult;
  /** True if the project and HOME/XDG dirs are byte-identical before and after. */
  unchanged: boolean;
}

async function observe(runtime: Runtime, args: string[], cwd: string): Promise<Observed> {
  const env = isolatedEnv();
  const before = [snapshotTree(cwd), snapshotTree(env.HOME!)];
  const result = await runLoopx(runtime, args, { cwd, env, timeoutMs: 15_000 });
  const after = [snapshotTree(cwd), snapshotTree(env.HOME!)];
  return { result, unchanged: JSON.stringify(before) === JSON.stringify(after) };
}

const SUBCOMMANDS = ["run", "version", "output", "env", "install"];

describe.concurrent.each(RUNTIMES)("help ($name)", (runtime) => {
  describe("top-level help (§4.1, §4.2, §11.1)", () => {
    it("loopx, -h and --help print the same help listing every subcommand, without discovery", async () => {
      const forms = [[], ["-h"], ["--help"], ["-h", "run", "ralph"], ["--help", "run", "ralph"], ["-h", "--unknown"], ["-h", "foo", "bar"], ["--help", "-n", "5"]];
      let reference: string | undefined;
      for (const args of tableFor(runtime, forms)) {
        // A .loopx/ that would make discovery complain loudly: top-level help must not notice it.
        const cwd = brokenProject();
        const { result, unchanged } = await observe(runtime, args, cwd);
        expect(result.stderr, `loopx ${args.join(" ")}`).toBe("");
        expect(result.code, `loopx ${args.join(" ")}`).toBe(0);
        expect(unchanged).toBe(true);
        reference ??= result.stdout;
        expect(result.stdout, `loopx ${args.join(" ")}`).toBe(reference);
      }
      for (const command of SUBCOMMANDS) expect(reference).toMatch(new RegExp(`\\b${command}\\b`));
      // No discovery: workflow names from .loopx/ never appear.
      expect(reference).not.toMatch(/zebrawf|goodwf|bad\.name/);
    });

    it("top-level help works when .loopx is not even a directory, and creates nothing", async () => {
      const cwd = makeProject({ ".loopx": "i am a file\n" });
      const { result, unchanged } = await observe(runtime, ["-h"], cwd);
      expect(result.code).toBe(0);
      expect(result.stderr).toBe("");
      expect(result.stdout).toMatch(/\brun\b/);
      expect(unchanged).toBe(true);
      const empty = tempDir();
      const bare = await observe(runtime, [], empty);
      expect(bare.result.code).toBe(0);
      expect(bare.result.stdout).toBe(result.stdout);
      expect(existsSync(join(empty, ".loopx"))).toBe(false);
    });
  });

  describe("run -h short-circuit (§4.2, §11.2)", () => {
    it("every -h/--help form prints run help, exits 0 and runs nothing", async () => {
      const reference = await observe(runtime, ["run", "-h"], validProject());
      expect(reference.result.code).toBe(0);
      expect(reference.result.stderr).toBe("");
      expect(reference.unchanged).toBe(true);
      const forms = [
        ["run", "--help"],
        ["run", "-h", "ralph"],
        ["run", "ralph", "-h"],
        ["run", "ralph:check-ready", "-h"],
        ["run", "-h", "-e", "missing.env"],
        ["run", "-e", "missing.env", "-h"],
        ["run", "-h", "-n", "bad"],
        ["run", "-n", "bad", "-h"],
        ["run", "-h", "-n", "-1"],
        ["run", "-h", "-n", "5", "-n", "10"],
        ["run", "-h", "foo", "bar"],
        ["run", "-h", "--unknown"],
        ["run", "--unknown", "--help"],
        ["run", "--help", "ralph"],
        ["run", "ralph", "--help"],
        ["run", "ralph:check-ready", "--help"],
        ["run", "--help", "-e", "missing.env"],
        ["run", "--help", "-n", "bad"],
        ["run", "--help", "-n", "5", "-n", "10"],
        ["run", "--help", "foo", "bar"],
        ["run", "--help", "--unknown"],
        ["run", "-h", "-h"],
        ["run", "-h", "nope:index", ":bad", "a:b:c"],
      ];
      for (const args of tableFor(runtime, forms)) {
        const cwd = validProject();
        const { result, unchanged } = await observe(runtime, args, cwd);
        const label = `loopx ${args.join(" ")}`;
        expect(result.stderr, label).toBe("");
        expect(result.code, label).toBe(0);
        expect(result.stdout, label).toBe(reference.result.stdout);
        expect(existsSync(join(cwd, "ran.log")), label).toBe(false);
        expect(unchanged, label).toBe(true);
      }
    });

    it("run help is not top-level help and not install help", async () => {
      const cwd = validProject();
      const runHelp = await runLoopx(runtime, ["run", "-h"], { cwd, env: isolatedEnv() });
      const topHelp = await runLoopx(runtime, ["-h"], { cwd, env: isolatedEnv() });
      const installHelp = await runLoopx(runtime, ["install", "-h"], { cwd, env: isolatedEnv() });
      expect(runHelp.stdout).not.toBe(topHelp.stdout);
      expect(runHelp.stdout).not.toBe(installHelp.stdout);
    });
  });

  describe("run help content (§11.2)", () => {
    it("shows options -n and -e and lists discovered workflows and scripts, marking index as default", async () => {
      const cwd = validProject();
      const { result, unchanged } = await observe(runtime, ["run", "-h"], cwd);
      expect(result.code).toBe(0);
      expect(result.stderr).toBe("");
      expect(unchanged).toBe(true);
      const out = result.stdout;
      expect(out).toMatch(/-n\b/);
      expect(out).toMatch(/-e\b/);
      for (const name of ["ralph", "check-ready", "zebrawf", "setup"]) expect(out).toContain(name);
      // Not scripts / not workflows: non-script files, files in subdirectories, script-less dirs.
      for (const name of ["README", "schema", "helperfile", "notesonly", "notes.txt"]) expect(out).not.toContain(name);
      // The workflow listing = lines that are not part of the static usage text (which is what
      // run help prints when there is no .loopx/ at all).
      const usage = await runLoopx(runtime, ["run", "-h"], { cwd: tempDir(), env: isolatedEnv() });
      const usageLines = new Set(usage.stdout.split("\n"));
      const listing = out.split("\n").filter((line) => !usageLines.has(line));
      expect(listing.join("\n")).toMatch(/ralph/);
      expect(listing.some((line) => /\bindex\b/.test(line) && /default/i.test(line))).toBe(true);
      for (const line of listing.filter((l) => /check-ready|setup|zebrawf/.test(l))) expect(line).not.toMatch(/default/i);
    });

    it("with no .loopx/: still prints help (exit 0), warns on stderr, omits the workflows section", async () => {
      const empty = tempDir();
      const { result, unchanged } = await observe(runtime, ["run", "-h"], empty);
      expect(result.code).toBe(0);
      expect(unchanged).toBe(true);
      expect(existsSync(join(empty, ".loopx"))).toBe(false);
      expect(result.stdout).toMatch(/-n\b/);
      expect(result.stdout).toMatch(/-e\b/);
      expect(result.stderr).toMatch(/\.loopx/);
      expect(result.stderr).not.toContain("    at ");
      // Same usage text as with workflows, minus the workflows section.
      const withWorkflows = await runLoopx(runtime, ["run", "-h"], { cwd: validProject(), env: isolatedEnv() });
      const withLines = new Set(withWorkflows.stdout.split("\n"));
      for (const line of result.stdout.split("\n")) expect(withLines.has(line), `unexpected line: ${line}`).toBe(true);
      expect(result.stdout.length).toBeLessThan(withWorkflows.stdout.length);
      expect(result.stdout).not.toMatch(/ralph|zebrawf/);
    });

    it("with collisions and invalid names: exit 0, help on stdout, a warning naming each problem on stderr", async () => {
      const cwd = brokenProject();
      const { result, unchanged } = await observe(runtime, ["run", "-h"], cwd);
      expect(result.code).toBe(0);
      expect(unchanged).toBe(true);
      expect(existsSync(join(cwd, "ran.log"))).toBe(false);
      expect(result.stdout).toMatch(/-n\b/);
      expect(result.stdout).toContain("goodwf");
      expect(result.stdout).toContain("zebrawf");
      // Collision: both conflicting entries are named.
      expect(result.stderr).toContain("check.sh");
      expect(result.stderr).toContain("check.ts");
      // The listing shows every file of a collision and marks the problems.
      // The files in one column, at least two spaces after the widest script's label.
      expect(result.stdout).toMatch(/^ {4}check {2}\(name collision\) {2,}check\.sh, check\.ts$/m);
      expect(result.stdout).toMatch(/^ {2}bad\.name {2}\(invalid name\)$/m);
      expect(result.stdout).toMatch(/^ {4}has space {2}\(invalid name\) {2,}has space\.sh$/m);
      expect(result.stdout).toMatch(/^ {4}index {2}\(default\) {2,}index\.sh$/m);
      // Invalid workflow name and invalid script name.
      expect(result.stderr).toContain("bad.name");
      expect(result.stderr).toContain("has space");
      expect(result.stderr).not.toContain("    at ");
    });

    it("a broken .loopx/ still shows help for every short-circuit form (non-fatal discovery)", async () => {
      for (const args of [["run", "zebrawf", "-h"], ["run", "-h", "-n", "bad", "--unknown"]]) {
        const { result } = await observe(runtime, args, brokenProject());
        expect(result.code).toBe(0);
        expect(result.stdout).toContain("goodwf");
      }
    });
  });

  describe("install help (§4.2, §11.3)", () => {
    it("every -h/--help form prints install help (options and source types), exit 0, touching nothing", async () => {
      const forms = [
        ["install", "-h"],
        ["install", "--help"],
        ["install", "-h", "--unknown", "-w", "a", "-w", "b"],
        ["install", "some/source", "-h"],
        ["install", "-y", "-y", "--help"],
        ["install", "--help", "https://example.invalid/x.tar.gz", "another"],
        ["install", "--workflow", "a", "--unknown", "-h"],
      ];
      let reference: string | undefined;
      for (const args of tableFor(runtime, forms)) {
        for (const cwd of [tempDir(), brokenProject()]) {
          const { result, unchanged } = await observe(runtime, args, cwd);
          const label = `loopx ${args.join(" ")}`;
          expect(result.stderr, label).toBe("");
          expect(result.code, label).toBe(0);
          expect(unchanged, label).toBe(true);
          reference ??= result.stdout;
          expect(result.stdout, label).toBe(reference);
        }
      }
      expect(reference).toMatch(/-w\b/);
      expect(reference).toMatch(/--workflow\b/);
      expect(reference).toMatch(/-y\b/);
      expect(reference).toMatch(/git/i);
      expect(reference).toMatch(/tar\.gz|tgz|tarball/i);
      expect(reference).toMatch(/repo/i);
      expect(reference).not.toMatch(/zebrawf|goodwf/);
      const top = await runLoopx(runtime, ["-h"], { cwd: tempDir(), env: isolatedEnv() });
      expect(reference).not.toBe(top.stdout);
    });
  });
});

describe.concurrent.each(RUNTIMES)("install help: source kinds ($name)", (runtime) => {
  it("describes git, GitHub shorthand, tarballs, -w and -y, and no removed source kind", async () => {
    const result = await runLoopx(runtime, ["install", "-h"], { cwd: makeProject(), env: isolatedEnv() });
    expect(result.code).toBe(0);
    for (const needle of ["org/repo", ".git", ".tar.gz", ".tgz", "-w, --workflow <name>", "-y"]) expect(result.stdout).toContain(needle);
    expect(result.stdout).not.toMatch(/single[- ]file/i);
  });
});
