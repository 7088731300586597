/**
 * Unit + property tests for src/core/output.ts (spec §2.3 structured output parsing, §4.3 `output`).
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { parseOutput, serializeOutput, type Output } from "../../../src/core/output.js";
import { normalized, utf16, validOutput } from "../../fixtures/arbitraries.js";

const RUNS = { numRuns: 500 };

/** Strings over several alphabets, including lone UTF-16 surrogates and control characters. */
const anyString = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary" }),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }),
  fc.string({ unit: fc.constantFrom("{", "}", "[", "]", '"', ":", ",", " ", "\n", "\t", "\\", "r", "e", "s", "u", "l", "t", "g", "o", "p", "0", "1", "n", "true", "null") }),
);

/** Keys that are dangerous for naive object handling, plus the known fields. */
const trickyKey = fc.oneof(
  fc.constantFrom(
    "result",
    "goto",
    "stop",
    "__proto__",
    "constructor",
    "prototype",
    "toString",
    "valueOf",
    "hasOwnProperty",
    "isPrototypeOf",
    "toJSON",
    "Symbol.toPrimitive",
    "length",
    "",
  ),
  fc.string(),
);

/** Arbitrary JSON text for an object, written by hand so `__proto__` keys and duplicates survive. */
const jsonValueText: fc.Arbitrary<string> = fc.letrec<{ value: string; object: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
    tie("object"),
  ),
  object: fc
    .array(fc.tuple(trickyKey, tie("value")), { maxLength: 6 })
    .map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",")}}`),
})).object;

function isValidOutputShape(o: Output): boolean {
  const keys = Object.keys(o);
  for (const k of keys) if (!["result", "goto", "stop"].includes(k)) return false;
  if ("result" in o && typeof o.result !== "string") return false;
  if ("goto" in o && typeof o.goto !== "string") return false;
  if ("stop" in o && o.stop !== true) return false;
  return true;
}

describe("parseOutput — spec §2.3 examples", () => {
  // "Empty stdout (0 bytes) is treated as { result: "" }."
  it("empty stdout → { result: '' }", () => {
    expect(parseOutput("")).toStrictEqual({ result: "" });
  });

  // "If stdout is a valid JSON object containing at least one known field (result, goto, stop), it is parsed as structured output."
  it.each<[string, Output]>([
    ['{"result":"hello"}', { result: "hello" }],
    ['{"goto":"next-step"}', { goto: "next-step" }],
    ['{"stop":true}', { stop: true }],
    ['{"result":"hello","goto":"next-step"}', { result: "hello", goto: "next-step" }],
    ['{"result":"done","goto":"review-adr:request-feedback","stop":true}', { result: "done", goto: "review-adr:request-feedback", stop: true }],
    ['{"goto":"check-ready"}', { goto: "check-ready" }],
    // goto values are not validated at parse time (§4.1: validation applies at transition time)
    ['{"goto":"a:b:c"}', { goto: "a:b:c" }],
    ['{"goto":""}', { goto: "" }],
    ['{"result":""}', { result: "" }],
  ])("structured: %s", (stdout, expected) => {
    expect(parseOutput(stdout)).toStrictEqual(expected);
  });

  // "Extra JSON fields beyond result, goto, and stop are silently ignored."
  it("extra fields are ignored", () => {
    expect(parseOutput('{"result":"x","extra":1,"nested":{"goto":"no"}}')).toStrictEqual({ result: "x" });
    expect(parseOutput('{"stop":true,"__proto__":{"goto":"evil"},"constructor":1}')).toStrictEqual({ stop: true });
  });

  // "Only a top-level JSON object can be treated as structured output. Arrays, primitives (strings,
  // numbers, booleans), and null fall back to raw result treatment."
  it.each([
    '[{"result":"x"}]',
    "[]",
    '"a string"',
    "42",
    "-1.5e3",
    "true",
    "false",
    "null",
  ])("non-object JSON %s → raw result", (stdout) => {
    expect(parseOutput(stdout)).toStrictEqual({ result: stdout });
  });

  // "If stdout is not valid JSON, ... the entire stdout content is treated as { result: <raw output> }."
  it.each([
    "hello world",
    "hello\n",
    "{not json}",
    '{"result":"x"',
    '{"result":"x"} trailing',
    "{'result':'x'}",
    "   ",
    "\n",
  ])("invalid JSON %j → raw result (entire content, untrimmed)", (stdout) => {
    expect(parseOutput(stdout)).toStrictEqual({ result: stdout });
  });

  // "... or is a valid JSON object but contains none of the known fields ..."
  it.each(["{}", '{"foo":"bar"}', '{"Result":"x","GOTO":"y","Stop":true}', '{"__proto__":{"result":"x"}}', '{"nested":{"stop":true}}'])(
    "object without known fields %s → raw result",
    (stdout) => {
      expect(parseOutput(stdout)).toStrictEqual({ result: stdout });
    },
  );

  // "If result is present but not a string, it is coerced via String(value). This includes null:
  // {"result": null} produces result "null"."
  it.each<[string, string]>([
    ['{"result":null}', "null"],
    ['{"result":42}', "42"],
    ['{"result":1.5}', "1.5"],
    ['{"result":true}', "true"],
    ['{"result":false}', "false"],
    ['{"result":[1,2,3]}', "1,2,3"],
    ['{"result":[]}', ""],
    ['{"result":{"a":1}}', "[object Object]"],
    ['{"result":1e400}', "Infinity"],
  ])("result coercion %s → %j", (stdout, expected) => {
    expect(parseOutput(stdout)).toStrictEqual({ result: expected });
  });

  // "If goto is present but not a string, it is treated as absent."
  it.each(['{"goto":5}', '{"goto":null}', '{"goto":true}', '{"goto":["a"]}', '{"goto":{"x":"y"}}'])(
    "non-string goto %s is absent (object still structured, so no raw result)",
    (stdout) => {
      expect(parseOutput(stdout)).toStrictEqual({});
    },
  );

  it("non-string goto alongside result keeps result only", () => {
    expect(parseOutput('{"result":"r","goto":7}')).toStrictEqual({ result: "r" });
  });

  // "stop must be exactly true (boolean). Any other value (including truthy strings like "true",
  // numbers, etc.) is treated as absent. This prevents surprises like {"stop": "false"} halting the loop."
  it.each(['{"stop":"false"}', '{"stop":"true"}', '{"stop":1}', '{"stop":false}', '{"stop":null}', '{"stop":[true]}', '{"stop":{}}'])(
    "non-true stop %s is absent",
    (stdout) => {
      expect(parseOutput(stdout)).toStrictEqual({});
    },
  );

  it("stop absent but goto kept", () => {
    expect(parseOutput('{"goto":"x","stop":"true"}')).toStrictEqual({ goto: "x" });
  });

  // JSON insignificant whitespace (e.g. the trailing newline of `echo '{...}'`) is still valid JSON.
  it("surrounding JSON whitespace (trailing newline from echo) still parses as structured", () => {
    expect(parseOutput('{"stop": true}\n')).toStrictEqual({ stop: true });
    expect(parseOutput('  \n\t{"result": "a"}  \r\n')).toStrictEqual({ result: "a" });
  });

  it("duplicate keys: last one wins (JSON.parse semantics)", () => {
    expect(parseOutput('{"goto":"a","goto":"b"}')).toStrictEqual({ goto: "b" });
    expect(parseOutput('{"stop":true,"stop":false}')).toStrictEqual({});
  });

  // Judgement call: String() throws for these (non-callable toString/valueOf); the implementation
  // documents the fallback "[object Object]". The spec is silent; we only require a string.
  it("result objects whose String() would throw still yield a string and never throw", () => {
    for (const stdout of [
      '{"result":{"toString":1}}',
      '{"result":{"toString":{},"valueOf":{}}}',
      '{"result":{"toString":null,"valueOf":null}}',
      '{"result":{"__proto__":null}}',
    ]) {
      const parsed = parseOutput(stdout);
      expect(Object.keys(parsed)).toStrictEqual(["result"]);
      expect(typeof parsed.result).toBe("string");
    }
    expect(parseOutput('{"result":{"toString":1}}')).toStrictEqual({ result: "[object Object]" });
  });

  it("returns only own known fields, never prototype keys", () => {
    const parsed = parseOutput('{"result":"x","__proto__":{"stop":true,"goto":"g"}}');
    expect(parsed).toStrictEqual({ result: "x" });
    expect(parsed.stop).toBeUndefined();
    expect(parsed.goto).toBeUndefined();
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
  });
});

describe("parseOutput — properties", () => {
  it("never throws on any string and always returns a well-typed Output", () => {
    fc.assert(
      fc.property(anyString, (s) => {
        const out = parseOutput(s);
        expect(isValidOutputShape(out)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it("never throws on any JSON value text (including tricky keys)", () => {
    fc.assert(
      fc.property(fc.oneof(jsonValueText, fc.jsonValue().map((v) => JSON.stringify(v))), (text) => {
        const out = parseOutput(text);
        expect(isValidOutputShape(out)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it("any string that is not a JSON object is a raw result", () => {
    fc.assert(
      fc.property(anyString, (s) => {
        let obj = false;
        try {
          const v = JSON.parse(s);
          obj = typeof v === "object" && v !== null && !Array.isArray(v);
        } catch {
          /* not JSON */
        }
        fc.pre(!obj);
        expect(parseOutput(s)).toStrictEqual({ result: s });
      }),
      RUNS,
    );
  });

  it("non-object JSON values are raw results", () => {
    fc.assert(
      fc.property(
        fc.jsonValue().filter((v) => typeof v !== "object" || v === null || Array.isArray(v)),
        (v) => {
          const text = JSON.stringify(v);
          expect(parseOutput(text)).toStrictEqual({ result: text });
        },
      ),
      RUNS,
    );
  });

  it("objects with no known field are raw results", () => {
    const unknownKey = trickyKey.filter((k) => !["result", "goto", "stop"].includes(k));
    fc.assert(
      fc.property(fc.array(fc.tuple(unknownKey, fc.jsonValue({ maxDepth: 2 })), { maxLength: 5 }), (entries) => {
        const text = `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(",")}}`;
        expect(parseOutput(text)).toStrictEqual({ result: text });
      }),
      RUNS,
    );
  });

  it("known fields follow the coercion rules for any JSON values", () => {
    const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
    fc.assert(
      fc.property(
        maybe(fc.jsonValue({ maxDepth: 2 })),
        maybe(fc.jsonValue({ maxDepth: 2 })),
        maybe(fc.jsonValue({ maxDepth: 2 })),
        fc.array(fc.tuple(fc.string().filter((k) => !["result", "goto", "stop"].includes(k)), fc.jsonValue({ maxDepth: 1 })), { maxLength: 3 }),
        (result, goto, stop, extra) => {
          fc.pre(result !== undefined || goto !== undefined || stop !== undefined);
          const parts: string[] = [];
          for (const [k, v] of extra) parts.push(`${JSON.stringify(k)}:${JSON.stringify(v)}`);
          if (result !== undefined) parts.push(`"result":${JSON.stringify(result)}`);
          if (goto !== undefined) parts.push(`"goto":${JSON.stringify(goto)}`);
          if (stop !== undefined) parts.push(`"stop":${JSON.stringify(stop)}`);
          const expected: Output = {};
          // JSON.parse(JSON.stringify(x)) normalises e.g. -0 → 0 exactly as the parser will see it.
          // String(), except that an object whose own toString/valueOf are not functions (e.g.
          // {"toString": ""}) cannot be converted: it reads as a plain object does.
          const coerce = (v: unknown): string => {
            try {
              return String(v);
            } catch {
              return Object.prototype.toString.call(v);
            }
          };
          if (result !== undefined) expected.result = coerce(JSON.parse(JSON.stringify(result)));
          if (typeof goto === "string") expected.goto = goto;
          if (stop === true) expected.stop = true;
          expect(parseOutput(`{${parts.join(",")}}`)).toStrictEqual(expected);
        },
      ),
      RUNS,
    );
  });
});

describe("serializeOutput", () => {
  it("emits known fields only, in result/goto/stop order", () => {
    expect(serializeOutput({ stop: true, goto: "g", result: "r" })).toBe('{"result":"r","goto":"g","stop":true}');
    expect(serializeOutput({ result: "done", goto: "next-step" })).toBe('{"result":"done","goto":"next-step"}');
    expect(serializeOutput({ goto: "review-adr:request-feedback" })).toBe('{"goto":"review-adr:request-feedback"}');
    expect(serializeOutput({ stop: true })).toBe('{"stop":true}');
    expect(serializeOutput({ result: "x", extra: 1 } as Output)).toBe('{"result":"x"}');
    expect(serializeOutput({ result: "x", goto: undefined })).toBe('{"result":"x"}');
  });

  it("escapes nothing literally: quotes, newlines and unicode survive through JSON", () => {
    const o: Output = { result: 'a "quoted"\nline\t\\ ✓ \u2028 \ud800' };
    expect(JSON.parse(serializeOutput(o))).toStrictEqual(o);
  });

  it("round-trips every valid Output through parseOutput", () => {
    const outputArb = fc
      .record(
        { result: anyString, goto: anyString, stop: fc.constant(true as const) },
        { requiredKeys: [], noNullPrototype: true },
      )
      .filter((o) => Object.keys(o).length > 0);
    fc.assert(
      fc.property(outputArb, (o) => {
        expect(parseOutput(serializeOutput(o))).toStrictEqual(o);
      }),
      { numRuns: 1000 },
    );
  });
});

describe("parseOutput — hostile stdout (in-process)", () => {
  it("arbitrary bytes, decoded as loopx decodes stdout: never throws; non-structured → the decoded text", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.constantFrom("", '{"result":"', '{"goto":"x","result":"'), (bytes, prefix) => {
        const stdout = Buffer.concat([Buffer.from(prefix), Buffer.from(bytes)]).toString("utf8");
        const parsed = parseOutput(stdout);
        let structured = false;
        try {
          const value = JSON.parse(stdout);
          structured = typeof value === "object" && value !== null && !Array.isArray(value) && ["result", "goto", "stop"].some((k) => Object.hasOwn(value, k));
        } catch {
          structured = false;
        }
        if (!structured) expect(parsed).toEqual({ result: stdout });
        for (const [key, value] of Object.entries(parsed)) {
          expect(["result", "goto", "stop"]).toContain(key);
          expect(key === "stop" ? value === true : typeof value === "string").toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });

  it("any JSON layout of a valid Output — indentation, padding, extra keys, key order — parses to that Output", () => {
    const ws = fc.array(fc.constantFrom(" ", "\t", "\n", "\r"), { maxLength: 4 }).map((a) => a.join(""));
    const extraKey = fc.string({ maxLength: 8 }).filter((k) => !["result", "goto", "stop", "__proto__"].includes(k));
    fc.assert(
      fc.property(validOutput, fc.dictionary(extraKey, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }), fc.constantFrom(0, 1, 2, "\t"), ws, ws, fc.boolean(), (output, extras, indent, before, after, extrasFirst) => {
        const known = JSON.parse(serializeOutput(output)) as Record<string, unknown>;
        const object = extrasFirst ? { ...extras, ...known } : { ...known, ...extras };
        const text = before + JSON.stringify(object, null, indent) + after;
        expect(parseOutput(text)).toEqual(normalized(output));
      }),
      { numRuns: 500 },
    );
  });

  it("a stop that is not exactly true, or a goto that is not a string, never survives any layout", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 2 }).filter((v) => v !== true), fc.jsonValue({ maxDepth: 2 }).filter((v) => typeof v !== "string"), utf16(), (stop, goto, result) => {
        const parsed = parseOutput(JSON.stringify({ goto, stop, result }, null, 1));
        expect(parsed).toEqual({ result });
      }),
      { numRuns: 300 },
    );
  });

  it("pathologically deep nesting (up to 200,000 levels) in and around known fields never throws", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 200_000 }), fc.constantFrom("[", "{\"a\":"), fc.constantFrom("bare", "result", "goto", "stop"), (depth, open, where) => {
        const close = open === "[" ? "]" : "}";
        const nested = open.repeat(depth) + (open === "[" ? "" : "1") + close.repeat(depth);
        const text = where === "bare" ? nested : `{"${where}":${nested}}`;
        const parsed = parseOutput(text);
        if (where === "result") expect(typeof parsed.result).toBe("string");
        if (where === "goto" || where === "stop") expect(parsed).toEqual({});
        if (where === "bare") expect(parsed).toEqual({ result: text });
      }),
      { numRuns: 40 },
    );
  });
});
