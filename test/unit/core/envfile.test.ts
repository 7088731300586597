/**
 * Unit + property tests for src/core/envfile.ts (spec §8.1 .env rules, §4.3 `env set`/`env remove`).
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  envValueProblem,
  isValidEnvKey,
  parseEnvFile,
  parseEnvLines,
  serializeEnvAssignment,
  withEnvVar,
  withoutEnvVar,
} from "../../../src/core/envfile.js";

const RUNS = { numRuns: 500 };

function vars(text: string): Map<string, string> {
  return parseEnvFile(text, "test.env").vars;
}
function sortedEntries(map: Map<string, string>): Array<[string, string]> {
  return [...map].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

// ---------------------------------------------------------------------------------------------
// Arbitraries

const validKey = fc.oneof(
  fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,12}$/),
  fc.constantFrom("__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "_", "PATH", "A", "a1", "LOOPX_BIN"),
);

const invalidKey = fc.oneof(
  fc.constantFrom("1BAD", "KEY WITH SPACES", "KEY ", " KEY", "", "KE-Y", "export KEY", "K.EY", "ключ", "K\tEY", "#"),
  fc.string({ minLength: 1, maxLength: 10 }).filter((k) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)),
);

/** Characters that stress the format: quotes, #, =, spaces, tabs, backslashes, unicode. */
const valueChar = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(" ", "\t", "#", "=", '"', "'", "\\", "n", "a", "Z", "0", "$", "`", "\u00a0", "é", "✓", "😀", "\u2028", "\v", "\f", "\0") },
  { weight: 2, arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 1 }) },
);
/** Any value `env set` accepts: no \n or \r (spec §4.3), and no NUL (no environment can hold one). */
const settableValue = fc.oneof(
  fc.string({ unit: valueChar, maxLength: 20 }),
  fc.string({ unit: "binary" }),
  fc.constantFrom(
    "",
    " ",
    "\t",
    '"',
    "'",
    '""',
    "''",
    '"quoted"',
    "'single'",
    '"mixed\'',
    "  leading",
    "trailing  ",
    "\ttabs\t",
    "  both  ",
    "a=b=c",
    "#not a comment",
    "value # inline",
    '"  padded  "',
    "'\"'",
    "\\n",
    "日本語",
  ),
  fc.tuple(fc.constantFrom('"', "'"), fc.string({ unit: valueChar, maxLength: 8 })).map(([q, s]) => `${q}${s}${q}`),
).filter((v) => !v.includes("\n") && !v.includes("\r") && !v.includes("\0"));

/** One line of a plausible (possibly messy) env file, without its newline. */
const envLine = fc.oneof(
  fc.tuple(validKey, settableValue).map(([k, v]) => `${k}=${v}`),
  fc.tuple(validKey, settableValue).map(([k, v]) => serializeEnvAssignment(k, v)),
  fc.tuple(validKey, settableValue).map(([k, v]) => `${k}=${v}\r`),
  fc.string({ unit: valueChar, maxLength: 10 }).map((s) => `#${s}`),
  fc.constantFrom("", "   ", "\t", "# comment", "KEY = spaced", "no equals here", "=novalue", "1BAD=val", "KEY WITH SPACES=val"),
  fc.tuple(invalidKey, settableValue).map(([k, v]) => `${k}=${v}`),
  fc.string({ unit: "binary", maxLength: 15 }).map((s) => s.replace(/\n/g, "")),
);

const existingText = fc.oneof(
  fc.tuple(fc.array(envLine, { maxLength: 10 }), fc.constantFrom("", "\n", "\n\n")).map(([lines, end]) => lines.join("\n") + end),
  fc.tuple(fc.array(envLine, { maxLength: 6 }), fc.array(envLine, { maxLength: 6 })).map(([a, b]) => a.join("\r\n") + "\n" + b.join("\n")),
  fc.string({ unit: "binary" }),
  fc.string({ unit: fc.constantFrom("A", "B", "=", '"', "'", "\n", "\r", " ", "#", "_") }),
);

// ---------------------------------------------------------------------------------------------

describe("isValidEnvKey — [A-Za-z_][A-Za-z0-9_]*", () => {
  it.each(["A", "a", "_", "_A1", "KEY", "my_key_2", "__proto__", "constructor", "ABC_def_123"])("valid: %j", (k) => {
    expect(isValidEnvKey(k)).toBe(true);
  });
  it.each(["", "1BAD", "KEY WITH SPACES", "KEY-1", "KEY.1", "KEY=", " KEY", "KEY ", "KEY\n", "\nKEY", "ÄKEY", "K:EY", "$KEY", "K\u0000"])(
    "invalid: %j",
    (k) => {
      expect(isValidEnvKey(k)).toBe(false);
    },
  );
  it("agrees with the spec pattern on arbitrary strings", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: "binary" }), validKey), (k) => {
        expect(isValidEnvKey(k)).toBe(/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) && !k.includes("\n"));
      }),
      RUNS,
    );
  });
});

describe("parseEnvFile — spec §8.1 rules", () => {
  // "One KEY=VALUE pair per line."
  it("parses one KEY=VALUE per line", () => {
    expect(sortedEntries(vars("A=1\nB=2\nC=3\n"))).toStrictEqual([
      ["A", "1"],
      ["B", "2"],
      ["C", "3"],
    ]);
  });

  it("last line without trailing newline is still parsed", () => {
    expect(vars("A=1\nB=2").get("B")).toBe("2");
  });

  // "The key extends to the first =, and the value is everything after it to the end of the line
  // (trimmed of trailing whitespace)."
  it.each<[string, string]>([
    ["KEY=a=b=c", "a=b=c"],
    ["KEY==", "="],
    ["KEY=value   ", "value"],
    ["KEY=value\t \t", "value"],
    ["KEY=  leading", "  leading"],
    ["KEY=", ""],
    ["KEY=   ", ""],
    ["KEY=hello world", "hello world"],
  ])("value of %j is %j", (line, expected) => {
    const parsed = parseEnvFile(line + "\n", "f");
    expect(parsed.vars.get("KEY")).toBe(expected);
    expect(parsed.warnings).toStrictEqual([]);
  });

  // "No whitespace is permitted around =." → `KEY = val` has the key "KEY " which is invalid.
  it.each(["KEY = val", "KEY =val", " KEY=val", "\tKEY=val"])("whitespace around the key is invalid: %j", (line) => {
    const parsed = parseEnvFile(line + "\n", "f");
    expect(parsed.vars.size).toBe(0);
    expect(parsed.warnings).toHaveLength(1);
  });

  it("whitespace right after = is part of the value (only trailing whitespace is trimmed)", () => {
    expect(vars("KEY= val").get("KEY")).toBe(" val");
  });

  // "Lines starting with # are comments. Inline comments are not supported — a # after a value is
  // part of the value."
  it("comments and inline #", () => {
    const parsed = parseEnvFile("# a comment\n#KEY=commented\nKEY=value # not a comment\nB=#x\n", "f");
    expect(sortedEntries(parsed.vars)).toStrictEqual([
      ["B", "#x"],
      ["KEY", "value # not a comment"],
    ]);
    expect(parsed.warnings).toStrictEqual([]);
  });

  // "Blank lines are ignored."
  it("blank lines are ignored without warnings", () => {
    const parsed = parseEnvFile("\n\nA=1\n\n\nB=2\n\n", "f");
    expect(sortedEntries(parsed.vars)).toStrictEqual([
      ["A", "1"],
      ["B", "2"],
    ]);
    expect(parsed.warnings).toStrictEqual([]);
  });

  // Judgement call: whitespace-only lines count as blank (the spec says "Blank lines").
  it("whitespace-only lines are treated as blank (judgement call)", () => {
    expect(parseEnvFile("   \n\t\nA=1\n", "f").warnings).toStrictEqual([]);
  });

  // "Duplicate keys: last occurrence wins."
  it("duplicate keys: last occurrence wins", () => {
    expect(vars("KEY=first\nOTHER=x\nKEY=second\nKEY=third\n").get("KEY")).toBe("third");
    expect(vars("KEY=first\nKEY=\n").get("KEY")).toBe("");
  });

  // "Values may be optionally wrapped in double quotes (") or single quotes ('), which are stripped.
  // 'Wrapped' means the value begins and ends with the same quote character — if quotes are
  // unmatched (e.g., KEY="hello or KEY='world), the value is treated literally with no quotes
  // stripped. No escape sequence interpretation — content inside quotes is treated literally
  // (e.g., "\n" is a backslash followed by n, not a newline)."
  it.each<[string, string]>([
    ['KEY="hello world"', "hello world"],
    ["KEY='hello world'", "hello world"],
    ['KEY="hello', '"hello'],
    ["KEY='world", "'world"],
    ["KEY=hello\"", 'hello"'],
    ['KEY="mixed\'', '"mixed\''],
    ["KEY='mixed\"", "'mixed\""],
    ['KEY="\\n"', "\\n"],
    ["KEY='\\t'", "\\t"],
    ['KEY=""', ""],
    ["KEY=''", ""],
    ['KEY="', '"'],
    ["KEY='", "'"],
    ['KEY="a"b"', 'a"b'],
    ['KEY=""quoted""', '"quoted"'],
    ['KEY="  padded  "', "  padded  "],
    ['KEY="# hash"', "# hash"],
    ['KEY="a=b"', "a=b"],
    ['KEY="value"   ', "value"],
    ["KEY='it''s'", "it''s"],
    ['KEY= "x"', ' "x"'],
  ])("quotes: %j → %j", (line, expected) => {
    expect(vars(line + "\n").get("KEY")).toBe(expected);
  });

  // "Only keys matching [A-Za-z_][A-Za-z0-9_]* are recognized ... lines without =, lines with invalid
  // key names like 1BAD=val or KEY WITH SPACES=val) are ignored with a warning to stderr."
  it("invalid lines are skipped with one warning each, naming file and line", () => {
    const parsed = parseEnvFile("GOOD=1\n1BAD=val\nKEY WITH SPACES=val\nno equals\n=val\nALSO_GOOD=2\n", "my.env");
    expect(sortedEntries(parsed.vars)).toStrictEqual([
      ["ALSO_GOOD", "2"],
      ["GOOD", "1"],
    ]);
    expect(parsed.warnings).toHaveLength(4);
    expect(parsed.warnings[0]).toContain("my.env");
    expect(parsed.warnings[0]).toContain(":2");
    expect(parsed.warnings[1]).toContain(":3");
    expect(parsed.warnings[2]).toContain(":4");
    expect(parsed.warnings[3]).toContain(":5");
  });

  it("CRLF line endings: the trailing \\r is trailing whitespace and is trimmed", () => {
    const v = vars('A=1\r\nB="two"\r\nC=three  \r\n');
    expect(sortedEntries(v)).toStrictEqual([
      ["A", "1"],
      ["B", "two"],
      ["C", "three"],
    ]);
  });

  it("keys like __proto__ and constructor are ordinary keys", () => {
    const v = vars("__proto__=p\nconstructor=c\ntoString=t\n");
    expect(v.get("__proto__")).toBe("p");
    expect(v.get("constructor")).toBe("c");
    expect(v.get("toString")).toBe("t");
    expect(v.size).toBe(3);
  });

  it("empty file → no vars, no warnings", () => {
    expect(parseEnvFile("", "f")).toStrictEqual({ vars: new Map(), warnings: [] });
  });
});

describe("parseEnvLines", () => {
  it("reports 1-based line numbers, raw text, and key/value/problem", () => {
    const lines = parseEnvLines('# c\n\nA="x"\nbad line\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatchObject({ line: 1, raw: "# c" });
    expect(lines[0]!.key).toBeUndefined();
    expect(lines[0]!.problem).toBeUndefined();
    expect(lines[1]).toMatchObject({ line: 2, raw: "" });
    expect(lines[1]!.problem).toBeUndefined();
    expect(lines[2]).toMatchObject({ line: 3, raw: 'A="x"', key: "A", value: "x" });
    expect(lines[2]!.problem).toBeUndefined();
    expect(lines[3]).toMatchObject({ line: 4, raw: "bad line" });
    expect(typeof lines[3]!.problem).toBe("string");
    expect(lines[3]!.key).toBeUndefined();
  });

  it("a trailing newline does not add an extra line", () => {
    expect(parseEnvLines("A=1\n")).toHaveLength(1);
    expect(parseEnvLines("A=1")).toHaveLength(1);
    expect(parseEnvLines("")).toHaveLength(0);
  });
});

describe("envValueProblem — values containing \\n or \\r are rejected (spec §4.3)", () => {
  it.each(["a\nb", "\n", "a\r", "\r\n", "x\ry"])("rejects %j", (v) => {
    expect(typeof envValueProblem(v)).toBe("string");
  });
  it.each(["", "plain", "with space", "#", "=", '"', "'", "\t", "\\n", "\u2028", "😀"])("accepts %j", (v) => {
    expect(envValueProblem(v)).toBeUndefined();
  });
  it("accepts exactly the strings without \\n, \\r and NUL", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: "binary" }), fc.string({ unit: fc.constantFrom("a", "\n", "\r", "\0", " ") })), (v) => {
        expect(envValueProblem(v) === undefined).toBe(!v.includes("\n") && !v.includes("\r") && !v.includes("\0"));
      }),
      RUNS,
    );
  });
});

describe("serializeEnvAssignment / withEnvVar / withoutEnvVar", () => {
  // "loopx env set writes the value as KEY="<literal value>" followed by a newline. No escape
  // sequences are applied — the value is written literally within double quotes."
  it.each<[string, string, string]>([
    ["KEY", "value", 'KEY="value"'],
    ["KEY", "", 'KEY=""'],
    ["KEY", 'has "quotes" and # and = ', 'KEY="has "quotes" and # and = "'],
    ["KEY", "\\n", 'KEY="\\n"'],
    ["KEY", "'single'", "KEY=\"'single'\""],
  ])("serializeEnvAssignment(%j, %j) = %j", (k, v, expected) => {
    expect(serializeEnvAssignment(k, v)).toBe(expected);
  });

  it("withEnvVar on an empty file writes KEY=\"value\" followed by a newline", () => {
    expect(withEnvVar("", "KEY", "value")).toBe('KEY="value"\n');
  });

  it("withEnvVar appends a new key, keeping comments, blank lines and odd lines verbatim", () => {
    const before = "# comment\n\nA=1\nbad line\n";
    expect(withEnvVar(before, "B", "two words")).toBe('# comment\n\nA=1\nbad line\nB="two words"\n');
  });

  it("withEnvVar adds a newline before appending when the file lacks one", () => {
    expect(withEnvVar("A=1", "B", "2")).toBe('A=1\nB="2"\n');
  });

  it("withEnvVar replaces the first assignment in place and drops later duplicates", () => {
    const before = "A=old\nB=keep\nA=older\n# end\n";
    expect(withEnvVar(before, "A", "new")).toBe('A="new"\nB=keep\n# end\n');
  });

  it("withoutEnvVar removes every assignment of the key and nothing else", () => {
    expect(withoutEnvVar("A=1\nB=2\nA=3\n# c\n", "A")).toBe("B=2\n# c\n");
    expect(withoutEnvVar("A=1\n", "A")).toBe("");
  });

  // "If the variable does not exist, this is a silent no-op" — signalled by undefined (no rewrite).
  it("withoutEnvVar returns undefined when the key is absent (commented or invalid lines don't count)", () => {
    expect(withoutEnvVar("B=2\n", "A")).toBeUndefined();
    expect(withoutEnvVar("#A=1\n", "A")).toBeUndefined();
    expect(withoutEnvVar("A = 1\n", "A")).toBeUndefined();
    expect(withoutEnvVar("", "A")).toBeUndefined();
  });
});

describe("env file properties", () => {
  it("parseEnvFile and parseEnvLines never throw on any input", () => {
    fc.assert(
      fc.property(fc.oneof(existingText, fc.string({ unit: "binary" })), (text) => {
        const parsed = parseEnvFile(text, "f");
        for (const [k, v] of parsed.vars) {
          expect(isValidEnvKey(k)).toBe(true);
          expect(typeof v).toBe("string");
          expect(v.includes("\n")).toBe(false);
        }
        parseEnvLines(text);
      }),
      { numRuns: 1000 },
    );
  });

  it("a single `KEY=v` line follows the trailing-trim + matching-quote-strip model", () => {
    fc.assert(
      fc.property(validKey, settableValue, (k, v) => {
        const t = v.trimEnd();
        const q = t[0];
        const expected = t.length >= 2 && (q === '"' || q === "'") && t[t.length - 1] === q ? t.slice(1, -1) : t;
        expect(vars(`${k}=${v}\n`).get(k)).toBe(expected);
      }),
      { numRuns: 1000 },
    );
  });

  it("serializeEnvAssignment round-trips every settable value", () => {
    fc.assert(
      fc.property(validKey, settableValue, (k, v) => {
        const parsed = parseEnvFile(serializeEnvAssignment(k, v) + "\n", "f");
        expect(parsed.vars.get(k)).toBe(v);
        expect(parsed.warnings).toStrictEqual([]);
      }),
      { numRuns: 1000 },
    );
  });

  it("parseEnvFile(withEnvVar(text, k, v)) yields v for k and keeps every other key's value", () => {
    fc.assert(
      fc.property(existingText, validKey, settableValue, (text, k, v) => {
        const before = vars(text);
        const afterText = withEnvVar(text, k, v);
        const after = vars(afterText);
        expect(after.get(k)).toBe(v);
        const expected = new Map(before);
        expected.set(k, v);
        expect(sortedEntries(after)).toStrictEqual(sortedEntries(expected));
        expect(afterText.endsWith("\n")).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it("repeated withEnvVar: the last set wins and earlier sets of other keys survive", () => {
    fc.assert(
      fc.property(existingText, fc.array(fc.tuple(validKey, settableValue), { minLength: 1, maxLength: 6 }), (text, sets) => {
        const expected = new Map(vars(text));
        let current = text;
        for (const [k, v] of sets) {
          current = withEnvVar(current, k, v);
          expected.set(k, v);
        }
        expect(sortedEntries(vars(current))).toStrictEqual(sortedEntries(expected));
      }),
      RUNS,
    );
  });

  it("withoutEnvVar removes exactly that key", () => {
    fc.assert(
      fc.property(existingText, validKey, fc.boolean(), settableValue, (text, k, ensurePresent, v) => {
        const source = ensurePresent ? withEnvVar(text, k, v) : text;
        const before = vars(source);
        const afterText = withoutEnvVar(source, k);
        if (!before.has(k)) {
          expect(afterText).toBeUndefined();
          return;
        }
        expect(afterText).toBeDefined();
        const after = vars(afterText!);
        expect(after.has(k)).toBe(false);
        const expected = new Map(before);
        expected.delete(k);
        expect(sortedEntries(after)).toStrictEqual(sortedEntries(expected));
      }),
      { numRuns: 1000 },
    );
  });

  it("lines whose key is invalid are never recognised and each produce a warning", () => {
    fc.assert(
      fc.property(
        invalidKey.filter((k) => !k.includes("=") && !k.includes("\n") && !k.startsWith("#") && k.trim() !== ""),
        settableValue,
        (k, v) => {
          const parsed = parseEnvFile(`${k}=${v}\n`, "f");
          expect(parsed.vars.size).toBe(0);
          expect(parsed.warnings).toHaveLength(1);
        },
      ),
      RUNS,
    );
  });
});
