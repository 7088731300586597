/**
 * The env-file parser (src/core/envfile.ts) on whole generated files — every assignment style,
 * comments, blank and invalid lines, LF/CRLF endings, trailing whitespace — against a model, and
 * `env set` / `env remove` edits of such files. The line-by-line cases: envfile.test.ts.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseEnvFile, serializeEnvAssignment, withEnvVar, withoutEnvVar } from "../../../src/core/envfile.js";
import { envKey, settableValue, utf16 } from "../../fixtures/arbitraries.js";

describe("env-file parser — whole generated files against a model (in-process)", () => {
  type Line =
    | { kind: "set"; key: string; value: string; style: "double" | "single" | "bare"; trailing: string }
    | { kind: "comment"; text: string }
    | { kind: "blank"; text: string }
    | { kind: "invalid"; text: string };

  // Values are single-line; a NUL makes the line invalid (no process environment can hold one).
  const noNewline = (s: string) => !s.includes("\n") && !s.includes("\r") && !s.includes("\0");
  const trailingWs = fc.array(fc.constantFrom(" ", "\t"), { maxLength: 3 }).map((a) => a.join(""));
  const bareValue = utf16(16).filter((v) => noNewline(v) && v === v.trimEnd() && !(v.length >= 2 && (v[0] === '"' || v[0] === "'") && v.at(-1) === v[0]));
  const line: fc.Arbitrary<Line> = fc.oneof(
    { arbitrary: fc.record({ kind: fc.constant("set" as const), key: envKey, value: utf16(16).filter(noNewline), style: fc.constantFrom("double" as const, "single" as const), trailing: trailingWs }), weight: 4 },
    { arbitrary: fc.record({ kind: fc.constant("set" as const), key: envKey, value: bareValue, style: fc.constant("bare" as const), trailing: fc.constant("") }), weight: 2 },
    { arbitrary: utf16(16).filter(noNewline).map((t) => ({ kind: "comment" as const, text: `#${t}` })), weight: 1 },
    { arbitrary: trailingWs.map((t) => ({ kind: "blank" as const, text: t })), weight: 1 },
    {
      arbitrary: fc
        .oneof(
          utf16(10).filter(noNewline).map((t) => `1BAD=${t}`),
          envKey.map((k) => ` ${k}=x`),
          envKey.map((k) => `${k} =x`),
          envKey.map((k) => `export ${k}=x`),
          fc.stringMatching(/^[a-z ]{1,10}$/).filter((t) => t.trim() !== ""),
        )
        .map((text) => ({ kind: "invalid" as const, text })),
      weight: 1,
    },
  );

  function render(l: Line): string {
    switch (l.kind) {
      case "set":
        if (l.style === "bare") return `${l.key}=${l.value}`;
        return `${l.key}=${l.style === "double" ? `"${l.value}"` : `'${l.value}'`}${l.trailing}`;
      default:
        return l.text;
    }
  }

  const file = fc.record({ lines: fc.array(line, { maxLength: 12 }), endings: fc.array(fc.constantFrom("\n", "\r\n"), { minLength: 12, maxLength: 12 }), finalNewline: fc.boolean() });

  function build(f: { lines: Line[]; endings: string[]; finalNewline: boolean }): string {
    return f.lines.map((l, i) => render(l) + (i < f.lines.length - 1 || f.finalNewline ? f.endings[i]! : "")).join("");
  }

  function model(lines: Line[]): Map<string, string> {
    const vars = new Map<string, string>();
    for (const l of lines) if (l.kind === "set") vars.set(l.key, l.value);
    return vars;
  }

  const sorted = (m: Map<string, string>) => [...m].sort(([a], [b]) => (a < b ? -1 : 1));

  it("mixed LF/CRLF files: every assignment style reads back exactly, one warning per invalid line", () => {
    fc.assert(
      fc.property(file, (f) => {
        const parsed = parseEnvFile(build(f), "env");
        expect(sorted(parsed.vars)).toEqual(sorted(model(f.lines)));
        expect(parsed.warnings).toHaveLength(f.lines.filter((l) => l.kind === "invalid").length);
      }),
      { numRuns: 1000 },
    );
  });

  it("env set / env remove on such files keep every other variable and write a parseable file", () => {
    fc.assert(
      fc.property(file, envKey, settableValue, fc.boolean(), (f, key, value, remove) => {
        const text = build(f);
        const expected = model(f.lines);
        let next: string;
        if (remove) {
          next = withoutEnvVar(text, key) ?? text;
          expected.delete(key);
        } else {
          next = withEnvVar(text, key, value);
          expected.set(key, value);
          expect(next.split("\n")).toContain(serializeEnvAssignment(key, value));
        }
        const parsed = parseEnvFile(next, "env");
        expect(sorted(parsed.vars)).toEqual(sorted(expected));
        expect(parsed.warnings).toHaveLength(f.lines.filter((l) => l.kind === "invalid").length);
      }),
      { numRuns: 1000 },
    );
  });
});
