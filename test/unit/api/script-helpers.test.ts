/**
 * Tests for outputFromValue in src/api/script-helpers.ts — the value rules of `output()` (spec §6.4),
 * checked against the parser of spec §2.3.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { outputFromValue } from "../../../src/api/script-helpers.js";
import { parseOutput, serializeOutput, type Output } from "../../../src/core/output.js";

const RUNS = { numRuns: 500 };

function emitted(value: unknown): Output {
  // What a loop sees after output(value): the JSON written to stdout, parsed per §2.3.
  return parseOutput(JSON.stringify(outputFromValue(value)));
}

const anyString = fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.constantFrom("", "true", "null", "{}", '{"result":"x"}', "a:b:c"));

describe("outputFromValue — spec §6.4 examples", () => {
  // 'output({ result: "hello", goto: "next-step" });'
  it("passes result and goto through", () => {
    expect(outputFromValue({ result: "hello", goto: "next-step" })).toStrictEqual({ result: "hello", goto: "next-step" });
    expect(emitted({ result: "hello", goto: "next-step" })).toStrictEqual({ result: "hello", goto: "next-step" });
  });

  it("stop: true alone is valid", () => {
    expect(outputFromValue({ stop: true })).toStrictEqual({ stop: true });
  });

  // "Properties whose value is undefined are treated as absent (they are omitted during JSON
  // serialization). For example, output({ result: "done", goto: undefined }) is equivalent to
  // output({ result: "done" })."
  it("undefined-valued fields are absent", () => {
    const out = outputFromValue({ result: "done", goto: undefined });
    expect(out).toStrictEqual({ result: "done" });
    expect(Object.keys(out)).toStrictEqual(["result"]);
    expect("goto" in out).toBe(false);
    expect(JSON.stringify(out)).toBe(JSON.stringify(outputFromValue({ result: "done" })));
    expect(serializeOutput(out)).toBe('{"result":"done"}');
  });

  // "Calling output({}) (no known fields) throws an error."
  it("{} throws", () => {
    expect(() => outputFromValue({})).toThrow();
  });

  // "The argument must be an object containing at least one known field (result, goto, or stop) with a defined value."
  it.each<[string, unknown]>([
    ["unknown fields only", { foo: 1, bar: "x" }],
    ["all known fields undefined", { result: undefined, goto: undefined, stop: undefined }],
    ["result undefined", { result: undefined }],
    ["case-variant keys", { Result: "x", GOTO: "y", Stop: true }],
    ["nested known fields", { nested: { result: "x" } }],
    ["null-prototype empty object", Object.create(null)],
  ])("%s throws", (_label, value) => {
    expect(() => outputFromValue(value)).toThrow();
  });

  // "If called with a non-object value (e.g., a plain string, number, or boolean), the value is
  // serialized as { result: String(value) }."
  it.each<[unknown, string]>([
    ["hello", "hello"],
    ["", ""],
    ['{"goto":"x"}', '{"goto":"x"}'],
    [42, "42"],
    [0, "0"],
    [-0, "0"],
    [1.5, "1.5"],
    [NaN, "NaN"],
    [Infinity, "Infinity"],
    [true, "true"],
    [false, "false"],
    [10n, "10"],
  ])("non-object %s → { result: %j }", (value, expected) => {
    expect(outputFromValue(value)).toStrictEqual({ result: expected });
    expect(emitted(value)).toStrictEqual({ result: expected });
  });

  it("a symbol is a non-object value: { result: String(sym) }", () => {
    expect(outputFromValue(Symbol("s"))).toStrictEqual({ result: "Symbol(s)" });
  });

  // "Arrays are not treated as non-object values ... an array must contain at least one known field
  // with a defined value ... so output([1,2,3]) throws an error (no known fields)."
  it("arrays without known fields throw", () => {
    expect(() => outputFromValue([1, 2, 3])).toThrow();
    expect(() => outputFromValue([])).toThrow();
    expect(() => outputFromValue(["result", "goto"])).toThrow();
    expect(() => outputFromValue([{ result: "x" }])).toThrow();
  });

  it("an array carrying a known field is accepted like any object", () => {
    const arr = Object.assign([1, 2], { result: "from-array" });
    expect(outputFromValue(arr)).toStrictEqual({ result: "from-array" });
    expect(emitted(arr)).toStrictEqual({ result: "from-array" });
  });

  // "If called with null or undefined, an error is thrown."
  it("null and undefined throw", () => {
    expect(() => outputFromValue(null)).toThrow();
    expect(() => outputFromValue(undefined)).toThrow();
  });

  // "output() does not validate goto target syntax or existence; it only serializes the value."
  it.each(["a:b:c", "", ":x", "x:", "bad name", "-x"])("goto %j is not validated", (goto) => {
    expect(outputFromValue({ goto })).toStrictEqual({ goto });
    expect(emitted({ goto })).toStrictEqual({ goto });
  });

  // A defined value counts as "defined" even when the parser later treats it as absent/coerced.
  it("defined-but-non-string values are kept and then follow §2.3 parsing", () => {
    expect(() => outputFromValue({ stop: false })).not.toThrow();
    expect(emitted({ stop: false })).toStrictEqual({});
    expect(emitted({ result: null })).toStrictEqual({ result: "null" });
    expect(emitted({ result: 42 })).toStrictEqual({ result: "42" });
    expect(emitted({ goto: 5, result: "r" })).toStrictEqual({ result: "r" });
    expect(emitted({ stop: "true" })).toStrictEqual({});
  });

  it("extra fields never reach the parsed output", () => {
    expect(emitted({ result: "x", extra: 1, toJSON: undefined })).toStrictEqual({ result: "x" });
  });
});

describe("outputFromValue — properties", () => {
  it("non-object primitives → { result: String(v) }, surviving JSON + parseOutput", () => {
    fc.assert(
      fc.property(fc.oneof(anyString, fc.double(), fc.integer(), fc.boolean(), fc.bigInt()), (v) => {
        expect(outputFromValue(v)).toStrictEqual({ result: String(v) });
        expect(emitted(v)).toStrictEqual({ result: String(v) });
      }),
      RUNS,
    );
  });

  const extraKey = fc
    .oneof(fc.constantFrom("__proto__", "constructor", "toString", "valueOf", "hasOwnProperty", "extra", "length", "Result"), fc.string())
    .filter((k) => !["result", "goto", "stop", "toJSON"].includes(k));

  /** Builds an object with own properties only (so "__proto__" is a real key, not the prototype). */
  function build(entries: Array<[string, unknown]>): Record<string, unknown> {
    const o: Record<string, unknown> = {};
    for (const [k, v] of entries) Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
    return o;
  }

  it("valid objects: parseOutput(JSON.stringify(outputFromValue(v))) equals the defined known fields", () => {
    const ABSENT = Symbol("absent");
    const field = <T>(a: fc.Arbitrary<T>) => fc.oneof(fc.constant(ABSENT), fc.constant(undefined), a);
    fc.assert(
      fc.property(
        field(anyString),
        field(anyString),
        field(fc.constant(true as const)),
        fc.array(fc.tuple(extraKey, fc.jsonValue({ maxDepth: 1 })), { maxLength: 4 }),
        (result, goto, stop, extras) => {
          fc.pre([result, goto, stop].some((f) => f !== ABSENT && f !== undefined));
          const entries: Array<[string, unknown]> = [...extras];
          if (result !== ABSENT) entries.push(["result", result]);
          if (goto !== ABSENT) entries.push(["goto", goto]);
          if (stop !== ABSENT) entries.push(["stop", stop]);
          const value = build(entries);
          const expected: Output = {};
          if (typeof result === "string") expected.result = result;
          if (typeof goto === "string") expected.goto = goto;
          if (stop === true) expected.stop = true;
          expect(emitted(value)).toStrictEqual(expected);
          expect(parseOutput(serializeOutput(outputFromValue(value)))).toStrictEqual(expected);
        },
      ),
      RUNS,
    );
  });

  it("objects (and arrays) with no defined known field always throw", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(extraKey, fc.jsonValue({ maxDepth: 1 })), { maxLength: 5 }),
        fc.subarray(["result", "goto", "stop"]),
        fc.boolean(),
        (extras, undefinedKnown, asArray) => {
          const entries: Array<[string, unknown]> = [...extras, ...undefinedKnown.map((k): [string, unknown] => [k, undefined])];
          const value = asArray ? Object.assign([1, 2, 3], Object.fromEntries(entries.filter(([k]) => k !== "length" && k !== "__proto__"))) : build(entries);
          expect(() => outputFromValue(value)).toThrow();
        },
      ),
      RUNS,
    );
  });
});
