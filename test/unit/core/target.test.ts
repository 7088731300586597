/**
 * Unit + property tests for src/core/target.ts and src/core/names.ts
 * (spec §4.1 target validation, §2.2 run vs goto addressing, §2.1/§5.3 name restrictions).
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { formatTarget, gotoTargetOf, parseTarget, runTargetOf } from "../../../src/core/target.js";
import { isValidName } from "../../../src/core/names.js";
import { utf16 } from "../../fixtures/arbitraries.js";

const RUNS = { numRuns: 800 };
const NAME = /^[a-zA-Z0-9_][a-zA-Z0-9_-]*$/;

const nameStart = fc.constantFrom(..."abcxyzABCXYZ0189_".split(""));
const nameRest = fc.constantFrom(..."abcxyzABCXYZ0189_-".split(""));
/** Every valid workflow/script name: [a-zA-Z0-9_][a-zA-Z0-9_-]* */
const validName = fc.oneof(
  fc.tuple(nameStart, fc.string({ unit: nameRest, maxLength: 12 })).map(([a, b]) => a + b),
  fc.stringMatching(/^[a-zA-Z0-9_][a-zA-Z0-9_-]{0,15}$/),
  fc.constantFrom("index", "ralph", "check-ready", "review-adr", "request-feedback", "default", "run", "version", "_", "0", "a-", "__proto__", "constructor", "toString"),
);
/** A character outside [a-zA-Z0-9_-] and not ':' (':' is covered separately). */
const badChar = fc.oneof(
  fc.constantFrom(" ", ".", "/", "\\", "\n", "\t", "\0", "@", "#", "é", "😀", "*", "$", "=", "+", "'", '"', "\u00a0", "K"),
  fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
).filter((c) => !/^[a-zA-Z0-9_:-]$/.test(c));

/** A name containing at least one invalid character, or starting with '-'. */
const invalidName = fc.oneof(
  fc.tuple(fc.string({ unit: nameRest, maxLength: 5 }), badChar, fc.string({ unit: nameRest, maxLength: 5 })).map(([a, c, b]) => a + c + b),
  fc.tuple(fc.constant("-"), fc.string({ unit: nameRest, maxLength: 8 })).map(([a, b]) => a + b),
);

describe("isValidName — [a-zA-Z0-9_][a-zA-Z0-9_-]*", () => {
  it.each(["ralph", "check-ready", "index", "a", "_", "0", "9lives", "A_B-c", "a-", "a--b", "default", "version", "run"])("valid: %j", (n) => {
    expect(isValidName(n)).toBe(true);
  });
  it.each(["", "-a", "-", "a:b", ":", "a b", "a.b", "my.script", "ralph\n", "\nralph", "é", "a/b", ".hidden", "a+b", "Ｒ"])("invalid: %j", (n) => {
    expect(isValidName(n)).toBe(false);
  });
  it("agrees with the spec pattern on arbitrary strings", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: "binary" }), validName, invalidName), (s) => {
        expect(isValidName(s)).toBe(NAME.test(s));
      }),
      RUNS,
    );
  });
});

describe("parseTarget — spec §4.1 examples", () => {
  it.each<[string, { workflow?: string; script?: string; bare?: string }]>([
    ["ralph", { bare: "ralph" }],
    ["ralph:check-ready", { workflow: "ralph", script: "check-ready" }],
    ["ralph:index", { workflow: "ralph", script: "index" }],
    ["review-adr:request-feedback", { workflow: "review-adr", script: "request-feedback" }],
    ["check-ready", { bare: "check-ready" }],
    ["default", { bare: "default" }],
    ["version", { bare: "version" }],
    ["_:_", { workflow: "_", script: "_" }],
    ["0:1", { workflow: "0", script: "1" }],
  ])("valid %j", (input, expected) => {
    expect(parseTarget(input)).toStrictEqual({ ok: true, target: expected });
  });

  // "Empty string (""): error. Bare colon (":"): error. Leading colon (e.g., ":script"): error.
  // Trailing colon (e.g., "workflow:"): error. Multiple colons (e.g., "a:b:c"): error."
  it.each([
    "",
    ":",
    ":script",
    "workflow:",
    "a:b:c",
    "::",
    "a::b",
    ":a:",
    "ralph:check-ready:x",
    // "Name restriction violations: ... either portion violates this pattern"
    "-ralph",
    "ralph:-x",
    "-a:b",
    "a b",
    "a:b c",
    " ralph",
    "ralph ",
    "ralph\n",
    "my.workflow",
    "ralph:check.sh",
    "ralph/index",
    "é:x",
    "x:é",
  ])("invalid %j", (input) => {
    const parsed = parseTarget(input);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error.length).toBeGreaterThan(0);
  });

  it("error messages quote the offending target", () => {
    const parsed = parseTarget("a:b:c");
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toContain('"a:b:c"');
  });
});

describe("parseTarget — properties", () => {
  it("never throws on any string", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.string({ unit: fc.constantFrom("a", ":", "-", " ", "_") })), (s) => {
        const r = parseTarget(s);
        expect(typeof r.ok).toBe("boolean");
      }),
      { numRuns: 1000 },
    );
  });

  it("`a:b` with two valid names parses to {workflow: a, script: b}", () => {
    fc.assert(
      fc.property(validName, validName, (a, b) => {
        expect(parseTarget(`${a}:${b}`)).toStrictEqual({ ok: true, target: { workflow: a, script: b } });
      }),
      RUNS,
    );
  });

  it("a valid name parses as bare", () => {
    fc.assert(
      fc.property(validName, (a) => {
        expect(parseTarget(a)).toStrictEqual({ ok: true, target: { bare: a } });
      }),
      RUNS,
    );
  });

  it("2+ colons are rejected, whatever the parts", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(validName, fc.constant("")), { minLength: 3, maxLength: 5 }), (parts) => {
        expect(parseTarget(parts.join(":")).ok).toBe(false);
      }),
      RUNS,
    );
  });

  it("empty workflow or script part is rejected", () => {
    fc.assert(
      fc.property(fc.oneof(validName, fc.constant("")), fc.boolean(), (name, emptyFirst) => {
        expect(parseTarget(emptyFirst ? `:${name}` : `${name}:`).ok).toBe(false);
      }),
      RUNS,
    );
  });

  it("a name with a char outside [a-zA-Z0-9_-] or a leading '-' is rejected in any position", () => {
    fc.assert(
      fc.property(invalidName, validName, fc.constantFrom("bare", "workflow", "script"), (bad, good, where) => {
        fc.pre(!bad.includes(":"));
        const s = where === "bare" ? bad : where === "workflow" ? `${bad}:${good}` : `${good}:${bad}`;
        expect(parseTarget(s).ok).toBe(false);
      }),
      RUNS,
    );
  });

  it("accepts exactly the strings of the form NAME or NAME:NAME", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: fc.constantFrom("a", "Z", "0", "_", "-", ":", " ", ".") , maxLength: 8 }),
          fc.string({ unit: "binary", maxLength: 8 }),
          fc.tuple(validName, validName).map(([a, b]) => `${a}:${b}`),
        ),
        (s) => {
          const parts = s.split(":");
          const expectedOk = parts.length <= 2 && parts.every((p) => NAME.test(p));
          const r = parseTarget(s);
          expect(r.ok).toBe(expectedOk);
          if (r.ok) {
            expect(r.target).toStrictEqual(parts.length === 1 ? { bare: s } : { workflow: parts[0], script: parts[1] });
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe("runTargetOf — run addresses workflows (spec §2.2, §4.1)", () => {
  // "loopx run ralph runs the index script in the ralph workflow."
  it("bare name → that workflow's index, implicit", () => {
    expect(runTargetOf({ bare: "ralph" })).toStrictEqual({ workflow: "ralph", script: "index", explicitScript: false });
  });
  // "loopx run ralph:check-ready runs the check-ready script in the ralph workflow."
  it("qualified → as written, explicit", () => {
    expect(runTargetOf({ workflow: "ralph", script: "check-ready" })).toStrictEqual({ workflow: "ralph", script: "check-ready", explicitScript: true });
  });
  // "loopx run ralph:index explicitly runs the index script (same as bare loopx run ralph)."
  it("ralph:index is explicit index", () => {
    const p = parseTarget("ralph:index");
    expect(p.ok).toBe(true);
    if (p.ok) expect(runTargetOf(p.target)).toStrictEqual({ workflow: "ralph", script: "index", explicitScript: true });
  });
  it("property: bare name n → n:index", () => {
    fc.assert(
      fc.property(validName, (n) => {
        const p = parseTarget(n);
        if (!p.ok) throw new Error("expected ok");
        expect(runTargetOf(p.target)).toStrictEqual({ workflow: n, script: "index", explicitScript: false });
      }),
      RUNS,
    );
  });
});

describe("gotoTargetOf — goto addresses scripts (spec §2.2)", () => {
  // '{ "goto": "check-ready" } from a script in the ralph workflow means ralph:check-ready, not check-ready:index.'
  it("bare goto → script in the current workflow", () => {
    expect(gotoTargetOf({ bare: "check-ready" }, "ralph")).toStrictEqual({ workflow: "ralph", script: "check-ready" });
  });
  // 'Iteration 3: review-adr:request-feedback → goto "apply-feedback" ↑ bare name → resolves to review-adr:apply-feedback'
  it("bare goto from a cross-workflow context uses the current workflow, not the starting one", () => {
    expect(gotoTargetOf({ bare: "apply-feedback" }, "review-adr")).toStrictEqual({ workflow: "review-adr", script: "apply-feedback" });
  });
  it("qualified goto ignores the current workflow", () => {
    expect(gotoTargetOf({ workflow: "review-adr", script: "request-feedback" }, "ralph")).toStrictEqual({ workflow: "review-adr", script: "request-feedback" });
    // 'a script in ralph may use { "goto": "ralph:check-ready" }, which is equivalent to the bare { "goto": "check-ready" }'
    expect(gotoTargetOf({ workflow: "ralph", script: "check-ready" }, "ralph")).toStrictEqual(gotoTargetOf({ bare: "check-ready" }, "ralph"));
  });
  it("property: bare b from workflow w → w:b; qualified a:b → a:b", () => {
    fc.assert(
      fc.property(validName, validName, validName, (w, a, b) => {
        const bare = parseTarget(b);
        const qual = parseTarget(`${a}:${b}`);
        if (!bare.ok || !qual.ok) throw new Error("expected ok");
        expect(gotoTargetOf(bare.target, w)).toStrictEqual({ workflow: w, script: b });
        expect(gotoTargetOf(qual.target, w)).toStrictEqual({ workflow: a, script: b });
      }),
      RUNS,
    );
  });
});

describe("formatTarget", () => {
  it("joins with a single colon", () => {
    expect(formatTarget({ workflow: "ralph", script: "index" })).toBe("ralph:index");
  });
});

describe("parseTarget — messages and idempotence (in-process)", () => {
  it("every rejection is a single line (safe for a one-line `loopx:` error), whatever the input", () => {
    fc.assert(
      fc.property(fc.oneof(utf16(30), fc.constantFrom("\n", "a\nb", "w:\r", ":\n", "a:b\n:c", "\u0000", "\u001b[2J")), (s) => {
        const parsed = parseTarget(s);
        if (!parsed.ok) {
          expect(parsed.error).not.toMatch(/[\n\r\u0000\u001b]/);
          expect(parsed.error.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("every accepted target, resolved for run or goto and formatted, re-parses to the same target", () => {
    const name = fc.stringMatching(/^[a-zA-Z0-9_][a-zA-Z0-9_-]{0,8}$/);
    fc.assert(
      fc.property(fc.oneof(name, fc.tuple(name, name).map(([a, b]) => `${a}:${b}`)), name, (s, current) => {
        const parsed = parseTarget(s);
        expect(parsed.ok).toBe(true);
        if (!parsed.ok) return;
        for (const target of [gotoTargetOf(parsed.target, current), runTargetOf(parsed.target)]) {
          const again = parseTarget(formatTarget(target));
          expect(again.ok && again.target).toEqual({ workflow: target.workflow, script: target.script });
        }
      }),
      { numRuns: 1000 },
    );
  });
});
