/**
 * The pack step (scripts/pack-workflows.mjs): the workflows' shared library has one source,
 * examples/workflows/shared/, and every installable form — dist/workflows.tar.gz and the tree
 * written for a git source — carries it inside each workflow, so an installed workflow is
 * self-contained. (That each form installs and runs is workflows-e2e.test.ts.)
 */
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, readFileSync, readdirSync, readlinkSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, snapshotTree, tempDir } from "../../helpers.js";
import { WORKFLOWS } from "../../fixtures/agents/support.js";

const TARBALL = join(ROOT, "dist", "workflows.tar.gz");

function files(dir: string, base = dir): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (lstatSync(path).isDirectory()) out.push(...files(path, base));
    else out.push(relative(base, path));
  }
  return out;
}

/** The relative module specifiers a TypeScript file imports (static and dynamic). */
function relativeImports(source: string): string[] {
  const specifiers = [...source.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g)].map((m) => m[1]!);
  return [...new Set(specifiers)];
}

function unpacked(): string {
  const dir = tempDir("loopx-wf-unpacked-");
  const result = spawnSync("tar", ["xzf", TARBALL, "-C", dir], { encoding: "utf8" });
  expect(result.status, result.stderr).toBe(0);
  return join(dir, "workflows");
}

function packedTree(): string {
  const dir = join(tempDir("loopx-wf-tree-"), "workflows");
  const result = spawnSync(process.execPath, [join(ROOT, "scripts", "pack-workflows.mjs"), "--tree", dir], { encoding: "utf8" });
  expect(result.status, result.stderr).toBe(0);
  return dir;
}

describe("the workflows' shared library: one source, a copy in every installable workflow", () => {
  it("in the checkout, examples/workflows/shared is the only copy; each workflow's lib/shared links to it", () => {
    for (const name of ["ralph", "converge"]) {
      const link = join(WORKFLOWS, name, "lib", "shared");
      expect(lstatSync(link).isSymbolicLink()).toBe(true);
      expect(readlinkSync(link)).toBe("../../shared");
    }
    const shared = files(join(WORKFLOWS, "shared"));
    expect(shared).toEqual(expect.arrayContaining(["agent.ts", "limits.ts", "run-agent.ts", "util.ts"]));
    // No workflow keeps a copy of its own (only the link).
    const sharedTexts = new Set(shared.map((name) => readFileSync(join(WORKFLOWS, "shared", name), "utf8")));
    for (const name of ["ralph", "converge"]) {
      const own = files(join(WORKFLOWS, name)).filter((file) => !lstatSync(join(WORKFLOWS, name, file)).isSymbolicLink());
      for (const file of own) expect(sharedTexts.has(readFileSync(join(WORKFLOWS, name, file), "utf8")), `${name}/${file}`).toBe(false);
    }
  });

  it.each([
    ["dist/workflows.tar.gz", unpacked],
    ["the tree for a git source (pack-workflows.mjs --tree)", packedTree],
  ])("%s: ralph and converge only, no links, each holding shared/ as lib/shared and importing nothing outside itself", (_name, make) => {
    const root = make();
    expect(readdirSync(root).sort()).toEqual(["converge", "ralph"]);
    const shared = files(join(WORKFLOWS, "shared"));
    for (const workflow of ["ralph", "converge"]) {
      const dir = join(root, workflow);
      const all = files(dir);
      for (const file of all) expect(lstatSync(join(dir, file)).isSymbolicLink(), file).toBe(false);
      for (const name of shared) {
        expect(readFileSync(join(dir, "lib", "shared", name), "utf8"), `${workflow}/lib/shared/${name}`).toBe(readFileSync(join(WORKFLOWS, "shared", name), "utf8"));
      }
      let imports = 0;
      for (const file of all.filter((f) => f.endsWith(".ts"))) {
        for (const specifier of relativeImports(readFileSync(join(dir, file), "utf8"))) {
          const target = resolve(dirname(join(dir, file)), specifier);
          expect(relative(dir, target).startsWith(".."), `${workflow}/${file} imports ${specifier}, outside the workflow`).toBe(false);
          expect(existsSync(target), `${workflow}/${file} imports ${specifier}, which is not there`).toBe(true);
          imports += 1;
        }
      }
      expect(imports).toBeGreaterThan(4);
    }
  });

  it("the tarball and the tree hold the same files", () => {
    const fromTar = snapshotTree(unpacked());
    const tree = snapshotTree(packedTree());
    const contents = (snap: Record<string, string>) => Object.fromEntries(Object.entries(snap).filter(([, v]) => v.startsWith("file:")).map(([k, v]) => [k, v.replace(/^file:\d+:/, "")]));
    expect(contents(tree)).toEqual(contents(fromTar));
  });
});
