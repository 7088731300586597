/**
 * The host's globals a pure module must not use (src/core/, the pure modules of src/records/), outside comments and
 * string literals: no import brings them in, so the dependency rules cannot see them.
 */
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

export function violations(sources: Record<string, string>): string[] {
  const found: string[] = [];
  for (const [file, text] of Object.entries(sources)) {
    const outsideStrings = code(text).replace(/(["'`])(?:\\.|(?!\1)[^\\\n])*\1/g, '""');
    for (const [name, pattern] of FORBIDDEN_GLOBALS) if (pattern.test(outsideStrings)) found.push(`${file}: ${name}`);
  }
  return found;
}

