/**
 * A TypeScript typo reads the same under every runtime: the source line with a caret under the
 * column, the message, `at file:line:column`, and nothing of loopx's or esbuild's internals (under
 * Node it was esbuild's failure object and stack, 39 lines).
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLIS, isolatedEnv, makeProject, runCli, type Cli } from "../../helpers.js";

/** What no report may hold: the compiler's or the loader's insides. */
const INTERNALS = /esbuild|node_modules|node:internal|triggerUncaughtException|failureErrorWithLog|dist\/|runtime\/loader|errors: \[|lineText/;

function reportLines(stderr: string): string[] {
  const lines = stderr.split("\n");
  return lines.slice(0, lines.findIndex((line) => line.startsWith("loopx: script w:index exited with code 1")));
}

describe.each(CLIS)("a TypeScript syntax error ($name)", (cli: Cli) => {
  it("in the script: the line, a caret, the message, file:line:column; nothing else", async () => {
    const dir = makeProject({ ".loopx/w/index.ts": `import { readFileSync } from "node:fs";\n\nconst a = readFileSync;\nconst x = ;\n` });
    const result = await runCli(cli, ["run", "-n", "1", "w"], { cwd: dir, env: isolatedEnv() });
    expect(result.code).toBe(1);
    const lines = reportLines(result.stderr);
    expect(result.stderr, result.stderr).not.toMatch(INTERNALS);
    const at = lines.indexOf("4 | const x = ;");
    expect(at, result.stderr).toBeGreaterThanOrEqual(0);
    expect(lines[at + 1]).toBe(`${" ".repeat("4 | const x = ".length)}^`);
    expect(lines[at + 2]).toMatch(/^error: Unexpected "?;"?$/);
    expect(lines[at + 3]).toBe(`    at ${join(dir, ".loopx/w/index.ts")}:4:11`);
    // Bun adds its version line; nothing more.
    expect(lines.filter((line) => line.trim() !== "").length, result.stderr).toBeLessThanOrEqual(5);
  });

  it("in a module it imports: that module's file, line and column", async () => {
    const dir = makeProject({ ".loopx/w/index.ts": `import { y } from "./lib.ts";\nconsole.log(y);\n`, ".loopx/w/lib.ts": `const s: string = "héllo";\nexport const y = s +;\n` });
    const result = await runCli(cli, ["run", "-n", "1", "w"], { cwd: dir, env: isolatedEnv() });
    expect(result.code).toBe(1);
    expect(result.stderr).not.toMatch(INTERNALS);
    const lines = reportLines(result.stderr);
    const at = lines.indexOf("2 | export const y = s +;");
    expect(at, result.stderr).toBeGreaterThanOrEqual(0);
    expect(lines[at + 1]).toBe(`${" ".repeat("2 | export const y = s +".length)}^`);
    expect(lines[at + 3]).toBe(`    at ${join(dir, ".loopx/w/lib.ts")}:2:21`);
  });
});
