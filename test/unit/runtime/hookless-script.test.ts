/**
 * Which plain JS scripts may run without loopx's module hooks on Node without
 * module.registerHooks (src/runtime/hookless-script.ts): only those that certainly need nothing
 * from them. The e2e side (the script really is an ES module, stderr empty) is in node-matrix.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { needsNoHooks } from "../../../src/runtime/hookless-script.js";
import { makeProject } from "../../helpers.js";

function decide(files: Record<string, string>, script: string): boolean {
  return needsNoHooks(join(makeProject(files), script));
}

describe("hookless JS scripts", () => {
  it("takes a .js or .mjs script that imports only node: built-ins, with no package.json or one without type / type module", () => {
    const body = 'import { readFileSync } from "node:fs";\nexport * from "node:path";\nimport "node:os";\nconsole.log(Array.from("ab"));\n';
    expect(decide({ ".loopx/w/index.js": body }, ".loopx/w/index.js")).toBe(true);
    expect(decide({ ".loopx/w/index.mjs": body }, ".loopx/w/index.mjs")).toBe(true);
    expect(decide({ "package.json": "{}", ".loopx/w/index.js": "// no-op\n" }, ".loopx/w/index.js")).toBe(true);
    expect(decide({ ".loopx/w/package.json": '{"type":"module"}', ".loopx/w/index.js": "// no-op\n" }, ".loopx/w/index.js")).toBe(true);
  });

  it("keeps the hooks for anything they might be needed for", () => {
    const no = (files: Record<string, string>, script = ".loopx/w/index.js") => expect(decide(files, script)).toBe(false);
    no({ ".loopx/w/index.js": 'import { output } from "loopx";\n' });
    no({ ".loopx/w/index.js": "// uses loopx output\n" });
    no({ ".loopx/w/index.js": 'import { a } from "./lib";\n' });
    no({ ".loopx/w/index.js": 'import { a } from "./lib.js";\n' });
    no({ ".loopx/w/index.js": 'export { a } from "../x.js";\n' });
    no({ ".loopx/w/index.js": 'import "some-package";\n' });
    no({ ".loopx/w/index.js": "import { a } from '#internal';\n" });
    no({ ".loopx/w/index.js": 'const m = await import("node:fs");\n' });
    no({ ".loopx/w/index.js": "console.log(import.meta.url);\n" });
    no({ ".loopx/w/index.js": 'import { a } from /* why */ "node:fs";\n' });
    no({ ".loopx/w/package.json": '{"type":"commonjs"}', ".loopx/w/index.js": "// no-op\n" });
    no({ ".loopx/w/package.json": "{ not json", ".loopx/w/index.js": "// no-op\n" });
    no({ ".loopx/w/index.ts": "// no-op\n" }, ".loopx/w/index.ts");
    no({ ".loopx/w/index.jsx": "// no-op\n" }, ".loopx/w/index.jsx");
    no({ ".loopx/w/node_modules/p/index.js": "// no-op\n" }, ".loopx/w/node_modules/p/index.js");
    no({}, ".loopx/w/missing.js");
  });

  it("a .mjs script is ESM whatever package.json says", () => {
    expect(decide({ ".loopx/w/package.json": '{"type":"commonjs"}', ".loopx/w/index.mjs": "// no-op\n" }, ".loopx/w/index.mjs")).toBe(true);
  });
});
