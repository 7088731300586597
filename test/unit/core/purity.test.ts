/**
 * src/core/ is pure logic (issue 19): no file system, no processes, no OS, no process object, no
 * Node-only globals. Whatever it needs from outside comes through an interface (the loop's host,
 * the session's options). A scan of the sources, comments left out.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../helpers.js";

const CORE = join(ROOT, "src", "core");

/** Modules core code must not import: file system, processes, randomness and the OS. */
const FORBIDDEN_MODULES: Array<[string, RegExp]> = [
  ["node:fs", /["'](?:node:)?fs(?:\/promises)?["']/],
  ["node:child_process", /["'](?:node:)?child_process["']/],
  ["node:crypto", /["'](?:node:)?crypto["']/],
  ["node:os", /["'](?:node:)?os["']/],
  ["node:net / node:http / node:tty", /["'](?:node:)?(?:net|https?|tty|worker_threads)["']/],
];
/** The host's globals core code must not use (checked outside string literals). */
const FORBIDDEN_GLOBALS: Array<[string, RegExp]> = [
  ["process", /\bprocess\b/],
  ["the crypto global", /\bcrypto\s*\./],
  ["Buffer", /\bBuffer\b/],
  ["Bun", /\bBun\b/],
];

/** The source without comments (strings stay: an import path is a string). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
}

// biome-ignore lint/suspicious/noExportsInTest: the records-layer purity test runs the same scan (until dependency rules replace it)
export function violations(sources: Record<string, string>): string[] {
  const found: string[] = [];
  for (const [file, text] of Object.entries(sources)) {
    const body = code(text);
    const outsideStrings = body.replace(/(["'`])(?:\\.|(?!\1)[^\\\n])*\1/g, '""');
    for (const [name, pattern] of FORBIDDEN_MODULES) if (pattern.test(body)) found.push(`${file}: ${name}`);
    for (const [name, pattern] of FORBIDDEN_GLOBALS) if (pattern.test(outsideStrings)) found.push(`${file}: ${name}`);
  }
  return found;
}

describe("src/core is pure", () => {
  it("no file of src/core names a forbidden module or global", () => {
    const files = readdirSync(CORE, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
    expect(files.length).toBeGreaterThan(5);
    expect(violations(Object.fromEntries(files.map((f) => [f, readFileSync(join(CORE, f), "utf8")])))).toEqual([]);
  });

  it.each([
    ['import { readFileSync } from "node:fs";', "node:fs"],
    ['import { spawn } from "child_process";', "node:child_process"],
    ['import { randomBytes } from "node:crypto";', "node:crypto"],
    ['import { homedir } from "node:os";', "node:os"],
    ["const pid = process.pid;", "process"],
    ["const { env } = process;", "process"],
    ["crypto.getRandomValues(bytes);", "the crypto global"],
    ['Buffer.byteLength(text, "utf8");', "Buffer"],
  ])("the scan catches %s", (line, name) => {
    expect(violations({ "x.ts": `// a comment about process.env is fine\nconst s = "a process";\n${line}\n` })).toEqual([`x.ts: ${name}`]);
    expect(violations({ "x.ts": `/* ${line} */\n// ${line}\nexport const ok = 1;\n` })).toEqual([]);
  });
});
