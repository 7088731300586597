/**
 * RunOptions (src/api/run.ts) and the run options table (src/engine/options.ts) are checked both
 * ways by the compiler. Planted drifts, in a copy of src/, must each fail `tsc` naming the field:
 * a RunOptions field the table does not have, and a table entry for the API that RunOptions lacks.
 */
import { spawnSync } from "node:child_process";
import { cpSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, tempDir } from "../../helpers.js";

/** `tsc --noEmit` over a copy of src/ with `edit` applied to one file: its output (empty when it compiles). */
function typecheckWith(file: string, edit: (text: string) => string): string {
  const copy = tempDir("loopx-types-");
  cpSync(join(ROOT, "src"), join(copy, "src"), { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(copy, "node_modules"));
  writeFileSync(join(copy, "package.json"), JSON.stringify({ type: "module" }));
  writeFileSync(join(copy, "tsconfig.json"), JSON.stringify({ extends: join(ROOT, "tsconfig.json"), compilerOptions: { noEmit: true, rootDir: "src" }, include: ["src"] }));
  const path = join(copy, "src", file);
  const before = readFileSync(path, "utf8");
  const after = edit(before);
  expect(after, "the edit applies").not.toBe(before);
  writeFileSync(path, after);
  const result = spawnSync(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", join(copy, "tsconfig.json")], { encoding: "utf8" });
  return `${result.stdout}${result.stderr}`;
}

describe("RunOptions and RUN_OPTIONS cannot drift apart", { timeout: 60_000 }, () => {
  it("the copy compiles as it is", () => {
    expect(typecheckWith("api/run.ts", (text) => `${text}\n// unchanged\n`)).toBe("");
  });

  it("a RunOptions field that is no API option of the table fails, naming it", () => {
    const out = typecheckWith("api/run.ts", (text) => text.replace("export interface RunOptions {", "export interface RunOptions {\n  plantedField?: boolean;"));
    expect(out).toMatch(/src\/api\/run\.ts.*error TS2322: Type 'true' is not assignable to type '"plantedField"'/);
  });

  it("an API option of the table without a RunOptions field fails, naming it", () => {
    const out = typecheckWith("engine/options.ts", (text) => text.replace('name: "summary",', 'name: "summary",\n    api: true,'));
    expect(out).toMatch(/src\/api\/run\.ts.*error TS2322: Type 'true' is not assignable to type '"summary"'/);
  });
});
