/**
 * Tests for src/core/discovery.ts over the real file system (src/runtime/workflow-files.ts; spec §2.1, §5.1–§5.4) and src/core/names.ts script file naming,
 * using real temporary directories.
 */
import { afterAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { workflowIssues } from "../../../src/core/discovery.js";
import { discover, isWorkflowDir, scanScriptFiles } from "../../../src/runtime/workflow-files.js";
import { SCRIPT_EXTENSIONS, splitScriptFileName } from "../../../src/core/names.js";

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

function tempRoot(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "loopx-unit-discovery-")));
  roots.push(dir);
  return dir;
}

/** Creates files (string content) and directories (null) under a fresh root. */
function project(files: Record<string, string | null>): string {
  const root = tempRoot();
  for (const [rel, content] of Object.entries(files)) {
    const p = join(root, rel);
    if (content === null) {
      mkdirSync(p, { recursive: true });
    } else {
      mkdirSync(dirname(p), { recursive: true });
      writeFileSync(p, content);
    }
  }
  return root;
}

function summary(root: string): Record<string, string[]> {
  const d = discover(root);
  // Object.fromEntries defines own properties, so a workflow named "__proto__" is a plain key.
  return Object.fromEntries([...d.workflows].map(([name, wf]) => [name, [...wf.scripts.keys()].sort()]));
}

describe("splitScriptFileName — supported extensions (spec §2.1)", () => {
  it("supports exactly .sh .js .jsx .ts .tsx", () => {
    expect([...SCRIPT_EXTENSIONS].sort()).toStrictEqual([".js", ".jsx", ".sh", ".ts", ".tsx"]);
  });
  it.each<[string, string, string]>([
    ["index.sh", "index", ".sh"],
    ["index.js", "index", ".js"],
    ["index.jsx", "index", ".jsx"],
    ["index.ts", "index", ".ts"],
    ["index.tsx", "index", ".tsx"],
    ["check-ready.sh", "check-ready", ".sh"],
    ["foo.test.ts", "foo.test", ".ts"],
  ])("%j → base %j ext %j", (file, base, ext) => {
    expect(splitScriptFileName(file)).toStrictEqual({ base, ext });
  });
  // ".mjs and .cjs extensions are intentionally unsupported." / "Files without supported extensions
  // (e.g., .json, .schema.json, .md, .txt) ... are allowed and ignored by discovery."
  it.each(["index.mjs", "index.cjs", "package.json", "x.schema.json", "README.md", "notes.txt", "Makefile", "index.sh.bak", "index.d.mts", "index"])(
    "%j is not a script",
    (file) => {
      expect(splitScriptFileName(file)).toBeUndefined();
    },
  );
  // Judgement call: extensions are case-sensitive (the spec lists them in lower case).
  it.each(["INDEX.SH", "index.Ts"])("%j is not a script (judgement: case-sensitive extensions)", (file) => {
    expect(splitScriptFileName(file)).toBeUndefined();
  });
});

describe("discover — basic layout (spec §2.1 example)", () => {
  it("missing .loopx/ → exists: false, nothing discovered, no issues", () => {
    const root = tempRoot();
    const d = discover(root);
    expect(d.exists).toBe(false);
    expect(d.workflows.size).toBe(0);
    expect(d.issues).toStrictEqual([]);
    expect(d.loopxDir).toBe(join(root, ".loopx"));
  });

  it("empty .loopx/ → exists, nothing discovered", () => {
    const root = project({ ".loopx": null });
    const d = discover(root);
    expect(d.exists).toBe(true);
    expect(d.workflows.size).toBe(0);
    expect(d.issues).toStrictEqual([]);
  });

  it("discovers the spec's example tree", () => {
    const root = project({
      ".loopx/ralph/index.sh": "#!/bin/bash\n",
      ".loopx/ralph/check-ready.sh": "",
      ".loopx/my-pipeline/index.ts": "",
      ".loopx/my-pipeline/setup.ts": "",
      ".loopx/my-pipeline/lib/helpers.ts": "",
      ".loopx/my-pipeline/package.json": '{"main":"setup.ts"}',
    });
    const d = discover(root);
    expect(d.exists).toBe(true);
    expect(d.issues).toStrictEqual([]);
    expect(summary(root)).toStrictEqual({ "my-pipeline": ["index", "setup"], ralph: ["check-ready", "index"] });
    const ralph = d.workflows.get("ralph")!;
    expect(ralph.name).toBe("ralph");
    expect(ralph.dir).toBe(join(root, ".loopx", "ralph"));
    expect(ralph.scripts.get("check-ready")).toStrictEqual({ name: "check-ready", ext: ".sh", path: join(root, ".loopx", "ralph", "check-ready.sh") });
    expect(d.workflows.get("my-pipeline")!.scripts.get("setup")).toStrictEqual({ name: "setup", ext: ".ts", path: join(root, ".loopx", "my-pipeline", "setup.ts") });
  });

  it("discovers every supported extension and ignores others", () => {
    const root = project({
      ".loopx/w/a.sh": "",
      ".loopx/w/b.js": "",
      ".loopx/w/c.jsx": "",
      ".loopx/w/d.ts": "",
      ".loopx/w/e.tsx": "",
      ".loopx/w/f.mjs": "",
      ".loopx/w/g.cjs": "",
      ".loopx/w/schema.schema.json": "",
      ".loopx/w/README.md": "",
      ".loopx/w/notes.txt": "",
      ".loopx/w/bad name.md": "",
    });
    const d = discover(root);
    expect(d.issues).toStrictEqual([]);
    const w = d.workflows.get("w")!;
    expect([...w.scripts.values()].map((s) => [s.name, s.ext]).sort()).toStrictEqual([
      ["a", ".sh"],
      ["b", ".js"],
      ["c", ".jsx"],
      ["d", ".ts"],
      ["e", ".tsx"],
    ]);
  });

  it("a workflow without index is still a workflow", () => {
    const root = project({ ".loopx/noindex/other.sh": "" });
    expect(summary(root)).toStrictEqual({ noindex: ["other"] });
    expect(discover(root).issues).toStrictEqual([]);
  });

  // "Files placed directly inside .loopx/ are never discovered, even if they have supported script extensions"
  it("loose files directly in .loopx/ are never discovered", () => {
    const root = project({ ".loopx/loose.sh": "", ".loopx/index.ts": "", ".loopx/ok/index.sh": "" });
    expect(summary(root)).toStrictEqual({ ok: ["index"] });
    expect(discover(root).issues).toStrictEqual([]);
  });

  // "Subdirectories that contain no top-level script files are ignored during discovery." "(no warning)"
  it("subdirectories without top-level scripts are ignored silently (even with invalid names)", () => {
    const root = project({
      ".loopx/docs/README.md": "",
      ".loopx/empty": null,
      ".loopx/only-mjs/index.mjs": "",
      ".loopx/nested-only/lib/index.ts": "",
      ".loopx/bad name/notes.txt": "",
      ".loopx/-dash/README.md": "",
      ".loopx/good/index.sh": "",
    });
    const d = discover(root);
    expect(summary(root)).toStrictEqual({ good: ["index"] });
    expect(d.issues).toStrictEqual([]);
  });

  // "Scripts within a workflow must be files, not subdirectories. A subdirectory inside a workflow is ignored"
  it("subdirectories inside a workflow are never scripts, even if named like one", () => {
    const root = project({
      ".loopx/w/index.sh": "",
      ".loopx/w/sub.sh/index.sh": "",
      ".loopx/w/lib/helpers.ts": "",
      ".loopx/w/lib/bad name.ts": "",
      ".loopx/dironly/fake.ts/index.ts": "",
    });
    const d = discover(root);
    expect(summary(root)).toStrictEqual({ w: ["index"] });
    expect(d.issues).toStrictEqual([]);
  });

  it("never throws, even for a nonexistent project root", () => {
    const d = discover(join(tempRoot(), "does", "not", "exist"));
    expect(d.exists).toBe(false);
  });

  // Judgement call: a `.loopx` that is a regular file is treated like a missing `.loopx/`.
  it(".loopx as a regular file → exists: false (judgement call)", () => {
    const root = project({ ".loopx": "not a dir" });
    expect(discover(root).exists).toBe(false);
  });
});

describe("discover — validation (spec §5.2, §5.3, §5.4)", () => {
  // "If multiple scripts within the same workflow share the same base name (e.g., check.sh and check.ts ...)"
  it("same-base-name collision is an issue listing the conflicting files", () => {
    const root = project({ ".loopx/w/check.sh": "", ".loopx/w/check.ts": "", ".loopx/w/index.sh": "" });
    const d = discover(root);
    expect(d.issues).toHaveLength(1);
    expect(d.issues[0]).toContain("check.sh");
    expect(d.issues[0]).toContain("check.ts");
    expect(d.issues[0]).toContain('"w"');
    expect(d.workflows.get("w")!.scripts.has("check")).toBe(true);
  });

  it("three-way collision is reported (all files listed)", () => {
    const root = project({ ".loopx/w/x.sh": "", ".loopx/w/x.js": "", ".loopx/w/x.tsx": "" });
    const d = discover(root);
    expect(d.issues).toHaveLength(1);
    for (const f of ["x.sh", "x.js", "x.tsx"]) expect(d.issues[0]).toContain(f);
  });

  it("a script file and a same-named non-script file do not collide", () => {
    const root = project({ ".loopx/w/check.sh": "", ".loopx/w/check.json": "", ".loopx/w/check.md": "" });
    expect(discover(root).issues).toStrictEqual([]);
  });

  it.each(["-bad.sh", "has space.sh", "foo.test.ts", "dot.ted.js", "é.sh", "a+b.ts"])("invalid script name %j is an issue", (file) => {
    const root = project({ [`.loopx/w/${file}`]: "", ".loopx/w/index.sh": "" });
    const d = discover(root);
    expect(d.issues).toHaveLength(1);
    expect(d.issues[0]).toContain(file);
  });

  it.each(["-bad", "bad name", "bad.name", ".hidden", "é", "a+b"])("invalid workflow name %j (with scripts) is an issue", (wf) => {
    const root = project({ [`.loopx/${wf}/index.sh`]: "", ".loopx/good/index.sh": "" });
    const d = discover(root);
    expect(d.issues).toHaveLength(1);
    expect(d.issues[0]).toContain(wf);
  });

  // "loopx run good fails if a sibling workflow broken contains a name collision or an invalid script name."
  it("issues in a sibling workflow are reported globally", () => {
    const root = project({
      ".loopx/good/index.sh": "",
      ".loopx/broken/check.sh": "",
      ".loopx/broken/check.ts": "",
      ".loopx/broken/bad name.sh": "",
    });
    const d = discover(root);
    expect(d.issues).toHaveLength(2);
    expect(d.workflows.has("good")).toBe(true);
  });

  it("workflows named like Object.prototype members work", () => {
    const root = project({ ".loopx/__proto__/index.sh": "", ".loopx/constructor/toString.sh": "", ".loopx/toString/hasOwnProperty.ts": "" });
    const d = discover(root);
    expect(d.issues).toStrictEqual([]);
    const entries = [...d.workflows].map(([name, wf]) => [name, [...wf.scripts.keys()]]).sort();
    expect(entries).toStrictEqual([
      ["__proto__", ["index"]],
      ["constructor", ["toString"]],
      ["toString", ["hasOwnProperty"]],
    ]);
  });
});

describe("discover — symlinks (spec §5.1 symlink policy)", () => {
  it("follows symlinked workflow directories; the name comes from the link", () => {
    const root = project({ "elsewhere/real-dir/index.sh": "", "elsewhere/real-dir/step.ts": "", ".loopx": null });
    symlinkSync(join(root, "elsewhere", "real-dir"), join(root, ".loopx", "linked"));
    const d = discover(root);
    expect(d.issues).toStrictEqual([]);
    expect(summary(root)).toStrictEqual({ linked: ["index", "step"] });
    expect(d.workflows.get("linked")!.dir).toBe(join(root, ".loopx", "linked"));
    expect(d.workflows.get("linked")!.scripts.get("step")!.path).toBe(join(root, ".loopx", "linked", "step.ts"));
  });

  it("follows symlinked script files; name and extension come from the link", () => {
    const root = project({ "shared/impl.txt": "echo hi", "shared/other.sh": "", ".loopx/w/index.sh": "" });
    symlinkSync(join(root, "shared", "impl.txt"), join(root, ".loopx", "w", "alias.sh"));
    symlinkSync(join(root, "shared", "other.sh"), join(root, ".loopx", "w", "renamed.ts"));
    const d = discover(root);
    expect(d.issues).toStrictEqual([]);
    const w = d.workflows.get("w")!;
    expect(w.scripts.get("alias")).toStrictEqual({ name: "alias", ext: ".sh", path: join(root, ".loopx", "w", "alias.sh") });
    expect(w.scripts.get("renamed")).toStrictEqual({ name: "renamed", ext: ".ts", path: join(root, ".loopx", "w", "renamed.ts") });
    expect(w.scripts.has("impl")).toBe(false);
    expect(w.scripts.has("other")).toBe(false);
  });

  it("a symlink with an invalid name is validated by its own name", () => {
    const root = project({ "shared/good.sh": "", ".loopx/w/index.sh": "" });
    symlinkSync(join(root, "shared", "good.sh"), join(root, ".loopx", "w", "bad name.sh"));
    expect(discover(root).issues).toHaveLength(1);
  });

  it("a symlinked script collides with a regular script of the same base name", () => {
    const root = project({ "shared/x.sh": "", ".loopx/w/check.sh": "" });
    symlinkSync(join(root, "shared", "x.sh"), join(root, ".loopx", "w", "check.ts"));
    expect(discover(root).issues).toHaveLength(1);
  });

  it("a symlink inside a workflow that points to a directory is not a script", () => {
    const root = project({ "somedir/index.sh": "", ".loopx/w/index.sh": "" });
    symlinkSync(join(root, "somedir"), join(root, ".loopx", "w", "dirlink.sh"));
    expect(summary(root)).toStrictEqual({ w: ["index"] });
  });

  it("a symlink directly in .loopx/ pointing at a file is not a workflow", () => {
    const root = project({ "file.sh": "", ".loopx/ok/index.sh": "" });
    symlinkSync(join(root, "file.sh"), join(root, ".loopx", "filelink"));
    expect(summary(root)).toStrictEqual({ ok: ["index"] });
  });

  // Judgement call: dangling links are skipped silently (the spec does not cover them; at run time a
  // vanished file is a spawn error, §5.1).
  it("dangling symlinks are ignored (judgement call)", () => {
    const root = project({ ".loopx/w/index.sh": "" });
    symlinkSync(join(root, "nowhere.sh"), join(root, ".loopx", "w", "dangling.sh"));
    symlinkSync(join(root, "nowhere-dir"), join(root, ".loopx", "dangling-wf"));
    const d = discover(root);
    expect(summary(root)).toStrictEqual({ w: ["index"] });
    expect(d.issues).toStrictEqual([]);
  });

  it("symlinked .loopx itself is followed", () => {
    const root = project({ "real-loopx/w/index.sh": "" });
    symlinkSync(join(root, "real-loopx"), join(root, ".loopx"));
    expect(summary(root)).toStrictEqual({ w: ["index"] });
  });
});

describe("scanScriptFiles / isWorkflowDir / workflowIssues", () => {
  it("scanScriptFiles lists top-level script files only, sorted", () => {
    const root = project({ "d/b.ts": "", "d/a.sh": "", "d/c.md": "", "d/sub/x.sh": "" });
    expect(scanScriptFiles(join(root, "d"))).toStrictEqual([
      { fileName: "a.sh", base: "a", ext: ".sh" },
      { fileName: "b.ts", base: "b", ext: ".ts" },
    ]);
    expect(scanScriptFiles(join(root, "missing"))).toStrictEqual([]);
  });

  it("isWorkflowDir: at least one top-level script file", () => {
    const root = project({ "yes/index.sh": "", "no/README.md": "", "nested/lib/x.ts": "" });
    expect(isWorkflowDir(join(root, "yes"))).toBe(true);
    expect(isWorkflowDir(join(root, "no"))).toBe(false);
    expect(isWorkflowDir(join(root, "nested"))).toBe(false);
    expect(isWorkflowDir(join(root, "absent"))).toBe(false);
  });

  it("workflowIssues reports bad workflow name, bad script names and collisions", () => {
    expect(workflowIssues("ok", [{ fileName: "index.sh", base: "index" }])).toStrictEqual([]);
    expect(
      workflowIssues("bad name", [
        { fileName: "a.sh", base: "a" },
        { fileName: "a.ts", base: "a" },
        { fileName: "-x.sh", base: "-x" },
      ]),
    ).toHaveLength(3);
  });
});

describe("discover — property: matches a model of the spec rules on random trees", () => {
  const NAME = /^[a-zA-Z0-9_][a-zA-Z0-9_-]*$/;
  const wfName = fc.constantFrom("ralph", "my-pipeline", "_x", "0", "__proto__", "-bad", "bad name", "bad.name", "é", "toString");
  const base = fc.constantFrom("index", "check", "check-ready", "_a", "9", "-bad", "has space", "foo.test", "é", "constructor");
  const ext = fc.constantFrom(".sh", ".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".json", ".md", "");
  const tree = fc.uniqueArray(
    fc.record({ name: wfName, files: fc.uniqueArray(fc.tuple(base, ext).map(([b, e]) => b + e), { maxLength: 5 }), loose: fc.boolean() }),
    { selector: (w) => w.name, maxLength: 4 },
  );

  it("workflows, scripts and issue presence match the model", () => {
    fc.assert(
      fc.property(tree, fc.array(fc.tuple(base, ext).map(([b, e]) => b + e), { maxLength: 2 }), (wfs, looseTop) => {
        const files: Record<string, string | null> = { ".loopx": null };
        for (const f of looseTop) files[`.loopx/${f}`] = "";
        for (const w of wfs) {
          files[`.loopx/${w.name}`] = null;
          for (const f of w.files) files[`.loopx/${w.name}/${f}`] = "";
          if (w.loose) files[`.loopx/${w.name}/nested/deep.sh`] = "";
        }
        // A loose top-level file may share a name with a workflow dir; skip such cases.
        fc.pre(!looseTop.some((f) => wfs.some((w) => w.name === f)));
        const root = project(files);

        const expectedEntries: Array<[string, string[]]> = [];
        let expectIssues = false;
        for (const w of wfs) {
          const scripts = w.files.map((f) => splitScriptFileName(f)).filter((s) => s !== undefined);
          if (scripts.length === 0) continue;
          const bases = scripts.map((s) => s!.base);
          expectedEntries.push([w.name, [...new Set(bases)].sort()]);
          if (!NAME.test(w.name)) expectIssues = true;
          if (bases.some((b) => !NAME.test(b))) expectIssues = true;
          if (new Set(bases).size !== bases.length) expectIssues = true;
        }
        const d = discover(root);
        expect(d.exists).toBe(true);
        const actualEntries = [...d.workflows].map(([name, wf]) => [name, [...wf.scripts.keys()].sort()]);
        const byName = (a: unknown[], b: unknown[]) => ((a[0] as string) < (b[0] as string) ? -1 : 1);
        expect(actualEntries.sort(byName)).toStrictEqual(expectedEntries.sort(byName));
        expect(d.issues.length > 0).toBe(expectIssues);
        rmSync(root, { recursive: true, force: true });
      }),
      { numRuns: 150 },
    );
  });
});
