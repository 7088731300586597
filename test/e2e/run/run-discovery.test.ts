/**
 * `loopx run` — discovery and validation (spec §2.1, §5.1–§5.4, §7.2 missing .loopx/, §11.2 run help
 * warnings). `run -n 0 <target>` is used as a cheap probe of "the target resolves and discovery
 * validates" (§7.1 step 4); real runs check that what was discovered actually executes.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  RUNTIMES,
  expectClean,
  expectLoopxError,
  isolatedEnv,
  makeProject,
  makeSymlink,
  readTrace,
  runLoopx,
  runIsolated as run,
  sh,
  tempDir,
  warnings,
  type RunResult,
} from "../../helpers.js";
import { itFor, tableFor } from "../../case-tables.js";

/** A bash script that appends `label` to trace.log and stops the loop. */
const mark = (label: string): string => sh(`echo "${label}" >> "$LOOPX_PROJECT_ROOT/trace.log"\necho '{"stop":true}'`);

/** A JS/TS script (any supported extension) that appends `label` to trace.log and stops the loop. */
const jsMark = (label: string): string =>
  [
    'import { appendFileSync } from "node:fs";',
    `appendFileSync(process.env.LOOPX_PROJECT_ROOT + "/trace.log", ${JSON.stringify(label)} + " " + process.env.LOOPX_WORKFLOW + "\\n");`,
    'process.stdout.write(JSON.stringify({ stop: true }));',
    "",
  ].join("\n");

/** `run -h` succeeded: help on stdout, exit 0, and every needle named on stderr (the warnings). */
function expectHelpWithWarnings(result: RunResult, ...needles: string[]): void {
  expect(result.stderr).not.toContain("    at ");
  expect(result.stdout.length).toBeGreaterThan(0);
  for (const needle of needles) expect(result.stderr).toContain(needle);
  expect(result.code).toBe(0);
}

describe.each(RUNTIMES)("run: discovery and validation ($name)", (runtime) => {
  // Loopx's own logic: every test under Node, every third under Bun (test/case-tables.ts).
  const test = itFor(runtime);
  describe("workflow detection", () => {
    it.concurrent.each(["js", "jsx", "ts", "tsx"])("a subdirectory whose only script is a .%s file is a runnable workflow", async (ext) => {
      const cwd = makeProject({ [`.loopx/w-${ext}/index.${ext}`]: jsMark(ext) });
      expectClean(await run(runtime, cwd, ["run", `w-${ext}`]));
      expect(readTrace(cwd)).toEqual([`${ext} w-${ext}`]);
    });

    test.concurrent("a subdirectory whose only script is a .sh file is a runnable workflow", async () => {
      const cwd = makeProject({ ".loopx/w-sh/index.sh": mark("sh") });
      expectClean(await run(runtime, cwd, ["run", "w-sh"]));
      expect(readTrace(cwd)).toEqual(["sh"]);
    });

    test.concurrent("scripts of every extension in one workflow are all addressable by base name", async () => {
      const cwd = makeProject({
        ".loopx/mix/index.sh": mark("index"),
        ".loopx/mix/a.js": jsMark("a"),
        ".loopx/mix/b.jsx": jsMark("b"),
        ".loopx/mix/c.ts": jsMark("c"),
        ".loopx/mix/d.tsx": jsMark("d"),
      });
      for (const script of ["index", "a", "b", "c", "d"]) {
        expectClean(await run(runtime, cwd, ["run", "-n", "0", `mix:${script}`]));
      }
    });

    it.concurrent.each(tableFor(runtime, ["mjs", "cjs", "json", "md", "txt", "bash", "py", "sh.bak"]))(
      "a .%s file is not a script: a directory holding only that is not a workflow, and it is not a script of a workflow",
      async (ext) => {
        const cwd = makeProject({
          [`.loopx/only/index.${ext}`]: "x\n",
          ".loopx/good/index.sh": mark("good"),
          [`.loopx/good/helper.${ext}`]: "x\n",
        });
        expectLoopxError(await run(runtime, cwd, ["run", "-n", "0", "only"]), "only");
        expectLoopxError(await run(runtime, cwd, ["run", "-n", "0", "good:helper"]), "helper");
        expectClean(await run(runtime, cwd, ["run", "good"]));
        expect(readTrace(cwd)).toEqual(["good"]);
      },
    );

    test.concurrent("non-script files with dotted or spaced names inside a workflow are ignored (no validation error)", async () => {
      const cwd = makeProject({
        ".loopx/good/index.sh": mark("good"),
        ".loopx/good/schema.v1.json": "{}\n",
        ".loopx/good/my.config.mjs": "export default 1;\n",
        ".loopx/good/old.cjs": "module.exports = 1;\n",
        ".loopx/good/READ ME.md": "docs\n",
        ".loopx/good/package.json": '{"name":"good","main":"other.js"}\n',
      });
      const result = await run(runtime, cwd, ["run", "good"]);
      expectClean(result);
      expect(result.stderr).toBe("");
      expect(readTrace(cwd)).toEqual(["good"]);
    });

    test.concurrent("loose script files directly in .loopx/ are ignored: not workflows, not validated", async () => {
      const cwd = makeProject({
        ".loopx/loose.sh": mark("loose"),
        ".loopx/index.sh": mark("loose-index"),
        ".loopx/bad.name.ts": "x\n",
        ".loopx/good/index.sh": mark("good"),
      });
      expectLoopxError(await run(runtime, cwd, ["run", "loose"]), "loose");
      expectLoopxError(await run(runtime, cwd, ["run", "index"]), "index");
      const result = await run(runtime, cwd, ["run", "good"]);
      expectClean(result);
      expect(result.stderr).toBe("");
      expect(readTrace(cwd)).toEqual(["good"]);
    });

    test.concurrent("subdirectories without top-level scripts are not workflows and cause no error or warning", async () => {
      const cwd = makeProject({
        ".loopx/docs/README.md": "# docs\n",
        ".loopx/libonly/lib/helper.sh": mark("helper"),
        ".loopx/libonly/lib/index.ts": jsMark("helper"),
        ".loopx/has.dot/README.md": "not a workflow, so its name is not validated\n",
        ".loopx/dirscript/index.sh/inner.sh": mark("inner"),
        ".loopx/good/index.sh": mark("good"),
      });
      mkdirSync(join(cwd, ".loopx", "empty"));
      const result = await run(runtime, cwd, ["run", "good"]);
      expectClean(result);
      expect(result.stderr).toBe("");
      expect(readTrace(cwd)).toEqual(["good"]);
      for (const name of ["docs", "libonly", "empty", "dirscript"]) {
        expectLoopxError(await run(runtime, cwd, ["run", "-n", "0", name]), name);
      }
      const help = await run(runtime, cwd, ["run", "-h"]);
      expect(help.code).toBe(0);
      expect(help.stderr).toBe("");
    });

    test.concurrent("scripts in nested subdirectories of a workflow are not discovered", async () => {
      const cwd = makeProject({
        ".loopx/wf/index.sh": sh('echo \'{"goto":"helper"}\''),
        ".loopx/wf/lib/helper.sh": mark("helper"),
        // Would be invalid / colliding if they were discovered:
        ".loopx/wf/lib/bad.name.ts": "x\n",
        ".loopx/wf/lib/c.sh": "x\n",
        ".loopx/wf/lib/c.ts": "x\n",
        ".loopx/wf/tool.sh/index.sh": mark("tool"),
      });
      expectLoopxError(await run(runtime, cwd, ["run", "wf:helper"]), "helper");
      expectLoopxError(await run(runtime, cwd, ["run", "-n", "0", "wf:tool"]), "tool");
      // ...and a goto to it fails the same way.
      const result = await run(runtime, cwd, ["run", "wf"]);
      expectLoopxError(result, "helper");
      expect(readTrace(cwd)).toEqual([]);
    });
  });

  describe("symlinks", () => {
    test.concurrent("a symlinked workflow directory is followed and named after the link", async () => {
      const outside = makeProject({
        "real.dir/index.sh": sh('echo "ran $LOOPX_WORKFLOW" >> "$LOOPX_PROJECT_ROOT/trace.log"\necho \'{"stop":true}\''),
      });
      const cwd = makeProject({ ".loopx/good/index.sh": mark("good") });
      makeSymlink(join(outside, "real.dir"), join(cwd, ".loopx", "alias"));
      expectClean(await run(runtime, cwd, ["run", "alias"]));
      expect(readTrace(cwd)).toEqual(["ran alias"]);
      expectLoopxError(await run(runtime, cwd, ["run", "-n", "0", "real"]), "real");
    });

    test.concurrent("a relative symlink to another workflow inside .loopx/ is a second workflow of its own", async () => {
      const cwd = makeProject({
        ".loopx/real/index.sh": sh('echo "ran $LOOPX_WORKFLOW" >> "$LOOPX_PROJECT_ROOT/trace.log"\necho \'{"stop":true}\''),
      });
      makeSymlink("real", join(cwd, ".loopx", "link"));
      expectClean(await run(runtime, cwd, ["run", "link"]));
      expectClean(await run(runtime, cwd, ["run", "real"]));
      expect(readTrace(cwd)).toEqual(["ran link", "ran real"]);
    });

    test.concurrent("a symlinked script file is followed and named after the link (run and goto)", async () => {
      const shared = makeProject({ "impl.name.sh": mark("impl") });
      const cwd = makeProject({ ".loopx/wf/index.sh": sh('echo \'{"goto":"entry"}\'') });
      makeSymlink(join(shared, "impl.name.sh"), join(cwd, ".loopx", "wf", "entry.sh"));
      expectClean(await run(runtime, cwd, ["run", "wf:entry"]));
      expectClean(await run(runtime, cwd, ["run", "wf"]));
      expect(readTrace(cwd)).toEqual(["impl", "impl"]);
      expectLoopxError(await run(runtime, cwd, ["run", "-n", "0", "wf:impl"]), "impl");
    });

    test.concurrent("a symlinked index makes a workflow runnable by its bare name", async () => {
      const cwd = makeProject({ ".loopx/wf/main.sh": mark("main") });
      makeSymlink("main.sh", join(cwd, ".loopx", "wf", "index.sh"));
      expectClean(await run(runtime, cwd, ["run", "wf"]));
      expect(readTrace(cwd)).toEqual(["main"]);
    });
  });

  describe("name restrictions are global and fatal for run <target>, warnings for run -h", () => {
    const badWorkflows = ["-bad", "has.dot", "has space", "caf\u00e9", "a+b"];
    it.concurrent.each(tableFor(runtime, badWorkflows))("sibling workflow %j", async (bad) => {
      const cwd = makeProject({
        ".loopx/good/index.sh": mark("good"),
        [`.loopx/${bad}/index.sh`]: mark("bad"),
      });
      expectLoopxError(await run(runtime, cwd, ["run", "good"]), bad);
      expectLoopxError(await run(runtime, cwd, ["run", "-n", "1", "good:index"]), bad);
      expect(readTrace(cwd)).toEqual([]);
      expectHelpWithWarnings(await run(runtime, cwd, ["run", "-h"]), bad);
    });

    const badScripts = ["my.script", "-x", "has space", "caf\u00e9", "a+b"];
    it.concurrent.each(tableFor(runtime, badScripts))("script %j in a sibling workflow", async (bad) => {
      const cwd = makeProject({
        ".loopx/good/index.sh": mark("good"),
        ".loopx/other/index.sh": mark("other"),
        [`.loopx/other/${bad}.sh`]: mark("bad"),
      });
      expectLoopxError(await run(runtime, cwd, ["run", "good"]), bad);
      expect(readTrace(cwd)).toEqual([]);
      expectHelpWithWarnings(await run(runtime, cwd, ["run", "-h"]), bad);
    });

    test.concurrent("an invalid script name in the target workflow itself is fatal", async () => {
      const cwd = makeProject({
        ".loopx/good/index.sh": mark("good"),
        ".loopx/good/my.script.ts": jsMark("bad"),
      });
      expectLoopxError(await run(runtime, cwd, ["run", "good"]), "my.script");
      expect(readTrace(cwd)).toEqual([]);
    });

    test.concurrent("a workflow whose only invalid script is its only script is still reported", async () => {
      const cwd = makeProject({
        ".loopx/good/index.sh": mark("good"),
        ".loopx/odd/v1.2.sh": mark("odd"),
      });
      expectLoopxError(await run(runtime, cwd, ["run", "good"]), "v1.2");
      expect(readTrace(cwd)).toEqual([]);
    });

    test.concurrent("names that match [a-zA-Z0-9_][a-zA-Z0-9_-]* are all accepted", async () => {
      const cwd = makeProject({
        ".loopx/_w-1/index.sh": mark("_w-1:index"),
        ".loopx/_w-1/_.sh": mark("_w-1:_"),
        ".loopx/_w-1/1st.sh": mark("_w-1:1st"),
        ".loopx/9lives/A_b-C--.sh": mark("9lives:A_b-C--"),
        ".loopx/Z/z.sh": mark("Z:z"),
      });
      for (const target of ["_w-1", "_w-1:_", "_w-1:1st", "9lives:A_b-C--", "Z:z"]) {
        expectClean(await run(runtime, cwd, ["run", target]));
      }
      expect(readTrace(cwd)).toEqual(["_w-1:index", "_w-1:_", "_w-1:1st", "9lives:A_b-C--", "Z:z"]);
    });

    test.concurrent("names are case-sensitive", async () => {
      const cwd = makeProject({ ".loopx/ralph/index.sh": mark("ralph"), ".loopx/ralph/Check.sh": mark("Check") });
      expectLoopxError(await run(runtime, cwd, ["run", "-n", "0", "Ralph"]), "Ralph");
      expectLoopxError(await run(runtime, cwd, ["run", "-n", "0", "ralph:check"]), "check");
      expectClean(await run(runtime, cwd, ["run", "ralph:Check"]));
      expect(readTrace(cwd)).toEqual(["Check"]);
    });
  });

  describe("same-base-name collisions", () => {
    test.concurrent("check.sh + check.ts in a sibling workflow: fatal for run, names both files; warning for run -h", async () => {
      const cwd = makeProject({
        ".loopx/good/index.sh": mark("good"),
        ".loopx/coll/check.sh": mark("check-sh"),
        ".loopx/coll/check.ts": jsMark("check-ts"),
      });
      expectLoopxError(await run(runtime, cwd, ["run", "good"]), "check.sh", "check.ts");
      expectLoopxError(await run(runtime, cwd, ["run", "-n", "0", "good"]), "check.sh", "check.ts");
      expect(readTrace(cwd)).toEqual([]);
      expectHelpWithWarnings(await run(runtime, cwd, ["run", "-h"]), "check.sh", "check.ts");
    });

    it.concurrent.each([
      ["index.sh", "index.js"],
      ["a.ts", "a.tsx"],
      ["a.js", "a.jsx"],
      ["a.jsx", "a.tsx"],
    ])("%s + %s in the target workflow is fatal and names both", async (first, second) => {
      const cwd = makeProject({
        ".loopx/good/index.sh": mark("good"),
        [`.loopx/good/${first}`]: first.endsWith(".sh") ? mark("x") : jsMark("x"),
        [`.loopx/good/${second}`]: jsMark("y"),
      });
      expectLoopxError(await run(runtime, cwd, ["run", "good"]), first, second);
      expect(readTrace(cwd)).toEqual([]);
    });

    test.concurrent("a three-way collision names all three files", async () => {
      const cwd = makeProject({
        ".loopx/good/index.sh": mark("good"),
        ".loopx/good/x.sh": mark("x"),
        ".loopx/good/x.js": jsMark("x"),
        ".loopx/good/x.tsx": jsMark("x"),
      });
      expectLoopxError(await run(runtime, cwd, ["run", "good"]), "x.sh", "x.js", "x.tsx");
    });

    test.concurrent("the same base name with non-script extensions is not a collision", async () => {
      const cwd = makeProject({
        ".loopx/good/index.sh": mark("good"),
        ".loopx/good/index.json": "{}\n",
        ".loopx/good/index.mjs": "export {};\n",
        ".loopx/good/index.md": "docs\n",
      });
      expectClean(await run(runtime, cwd, ["run", "good"]));
      expect(readTrace(cwd)).toEqual(["good"]);
    });

    test.concurrent("the same script name in different workflows is not a collision", async () => {
      const cwd = makeProject({
        ".loopx/a/index.sh": mark("a"),
        ".loopx/a/check.sh": mark("a-check"),
        ".loopx/b/index.ts": jsMark("b"),
        ".loopx/b/check.ts": jsMark("b-check"),
      });
      expectClean(await run(runtime, cwd, ["run", "a:check"]));
      expect(readTrace(cwd)).toEqual(["a-check"]);
    });
  });

  describe("default entry point", () => {
    test.concurrent("a workflow without index: `run wf` → exit 1 naming it; `run wf:other` works", async () => {
      const cwd = makeProject({ ".loopx/wf/other.sh": mark("other") });
      expectLoopxError(await run(runtime, cwd, ["run", "wf"]), "wf");
      expect(readTrace(cwd)).toEqual([]);
      expectClean(await run(runtime, cwd, ["run", "wf:other"]));
      expect(readTrace(cwd)).toEqual(["other"]);
    });

    test.concurrent("a workflow without index does not break running other workflows", async () => {
      const cwd = makeProject({ ".loopx/wf/other.sh": mark("other"), ".loopx/good/index.sh": mark("good") });
      expectClean(await run(runtime, cwd, ["run", "good"]));
      expect(readTrace(cwd)).toEqual(["good"]);
    });

    test.concurrent("package.json `main` does not pick the entry point", async () => {
      const cwd = makeProject({
        ".loopx/wf/package.json": '{"name":"wf","main":"start.sh"}\n',
        ".loopx/wf/start.sh": mark("start"),
      });
      expectLoopxError(await run(runtime, cwd, ["run", "wf"]), "wf");
      expect(readTrace(cwd)).toEqual([]);
    });
  });

  describe("workflow names that look special are ordinary", () => {
    it.concurrent.each(tableFor(runtime, ["default", "version", "run", "output", "env", "install", "help"]))(
      "`loopx run %s` runs the workflow of that name",
      async (name) => {
        const cwd = makeProject({
          [`.loopx/${name}/index.sh`]: sh(`echo "${name} $LOOPX_WORKFLOW" >> "$LOOPX_PROJECT_ROOT/trace.log"`),
        });
        const result = await run(runtime, cwd, ["run", "-n", "2", name]);
        expectClean(result);
        expect(readTrace(cwd)).toEqual([`${name} ${name}`, `${name} ${name}`]);
      },
    );
  });

  describe("missing things", () => {
    test.concurrent("no .loopx/ directory → exit 1 telling the user to create it", async () => {
      const cwd = makeProject({ "README.md": "no loopx here\n" });
      const line = expectLoopxError(await run(runtime, cwd, ["run", "ralph"]), ".loopx");
      expect(line).toMatch(/creat/i);
      expect(existsSync(join(cwd, ".loopx"))).toBe(false);
    });

    test.concurrent("no .loopx/ directory with -n 0 → still exit 1", async () => {
      const cwd = tempDir();
      expectLoopxError(await run(runtime, cwd, ["run", "-n", "0", "ralph"]), ".loopx");
    });

    test.concurrent("a .loopx/ in an ancestor directory is not used", async () => {
      const root = makeProject({ ".loopx/ralph/index.sh": mark("ralph"), "sub/keep.txt": "x\n" });
      const line = expectLoopxError(await run(runtime, join(root, "sub"), ["run", "ralph"]), ".loopx");
      expect(line).toMatch(/creat/i);
      expect(readTrace(root)).toEqual([]);
    });

    test.concurrent("an empty .loopx/ → exit 1 naming the missing workflow", async () => {
      const cwd = tempDir();
      mkdirSync(join(cwd, ".loopx"));
      expectLoopxError(await run(runtime, cwd, ["run", "ralph"]), "ralph");
    });

    test.concurrent("a missing workflow → exit 1 naming it, nothing runs", async () => {
      const cwd = makeProject({ ".loopx/ralph/index.sh": mark("ralph") });
      expectLoopxError(await run(runtime, cwd, ["run", "nope"]), "nope");
      expectLoopxError(await run(runtime, cwd, ["run", "nope:index"]), "nope");
      expect(readTrace(cwd)).toEqual([]);
    });

    test.concurrent("a missing script → exit 1 naming it, nothing runs", async () => {
      const cwd = makeProject({ ".loopx/ralph/index.sh": mark("ralph") });
      expectLoopxError(await run(runtime, cwd, ["run", "ralph:nope"]), "nope");
      expect(readTrace(cwd)).toEqual([]);
    });
  });
});

describe.concurrent.each(RUNTIMES)("run: name collisions are called collisions ($name)", (runtime) => {
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
});
