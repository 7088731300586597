/**
 * A structured stdout held as bytes is read field by field (core/json-fields.ts), never decoded
 * whole: whatever the bytes, it must read exactly as JSON.parse of their decoded text does — the
 * same bytes accepted as one object, the same known fields in the same order with the same values
 * (duplicate keys: the last value, the first place), the same result string (escapes, surrogate
 * pairs, lone surrogates, invalid UTF-8, a byte-order mark in a key). A large one goes through the
 * loop's reading (readOutput, the record's excerpt, the near-miss check) as the old whole-text
 * parse did.
 */
import { isUtf8 } from "node:buffer";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeJsonString, scanJsonObject } from "../../../src/core/json-fields.js";
import { unescapeInPlace } from "../../../src/core/json-unescape.js";
import { outputNearMiss } from "../../../src/core/output-check.js";
import { KNOWN_FIELDS, readOutput, settledOutput } from "../../../src/core/output.js";
import { outputForEvent } from "../../../src/core/run-events.js";
import { stdoutOfText, type StdoutText } from "../../../src/core/stdout-text.js";
import { StdoutCapture } from "../../../src/runtime/stdout-capture.js";

const KEYS = ["result", "goto", "stop", "Result", "STOP", "Goto", "other", "__proto__", "\ufeffresult", "r\\u0065sult", "1", ""];
const tricky = fc.oneof(
  fc.string(),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }),
  fc.string({ unit: fc.constantFrom("a", "é", "中", "😀", "\n", '"', "\\", "\u0001", "\ud800", "\udc00", "\u2028") }),
);
const value: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    tricky,
    fc.constantFrom(true, false, null, 0, -0, 1.5e300, -12, 3),
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom(...KEYS), tie("value"), { maxKeys: 3 }),
  ),
})).value;

/** An object's JSON with every key of KEYS possible, spaces anywhere JSON allows them, keys repeated. */
const objectText = fc
  .tuple(fc.array(fc.tuple(fc.constantFrom(...KEYS), value), { maxLength: 6 }), fc.constantFrom("", " ", "\n", "\t\r\n "))
  .map(([members, space]) => `${space}{${members.map(([key, v]) => `${space}${key.includes("\\") ? `"${key}"` : JSON.stringify(key)}${space}:${space}${JSON.stringify(v) ?? "null"}`).join(`,${space}`)}${space}}${space}`);

/** Bytes of an object's JSON, sometimes broken: a byte changed, inserted or cut (invalid UTF-8 among them). */
const bytesOfObject = fc
  .tuple(objectText, fc.array(fc.tuple(fc.nat(), fc.constantFrom(-1, 0x22, 0x5c, 0x01, 0x7d, 0x2c, 0x75, 0x30, 0xff, 0x80, 0xe4, 0xed, 0xef), fc.boolean()), { maxLength: 2 }))
  .map(([text, edits]) => {
    let bytes = Buffer.from(text);
    for (const [where, byte, insert] of edits) {
      const at = where % (bytes.length + 1);
      const head = bytes.subarray(0, at);
      const tail = bytes.subarray(insert || byte < 0 ? at : at + 1);
      bytes = Buffer.concat([head, byte < 0 ? Buffer.alloc(0) : Buffer.from([byte]), byte < 0 ? tail.subarray(1) : tail]);
    }
    return bytes;
  });

const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** scanJsonObject against JSON.parse of the decoded text. */
function checkScan(bytes: Buffer): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString("utf8"));
  } catch {
    parsed = undefined;
  }
  const scanned = scanJsonObject(bytes, KNOWN_FIELDS);
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    expect(scanned).toBeUndefined();
    return;
  }
  const record = parsed as Record<string, unknown>;
  expect(scanned).toBeDefined();
  const known = Object.keys(record).filter((key) => (KNOWN_FIELDS as readonly string[]).includes(key.toLowerCase()));
  expect(Object.keys(scanned!.object)).toEqual(known);
  for (const key of ["stop", "goto"]) if (Object.hasOwn(record, key)) expect(scanned!.object[key]).toEqual(record[key]);
  expect(scanned!.result !== undefined).toBe(Object.hasOwn(record, "result"));
  const span = scanned!.result;
  if (!span) return;
  if (!span.string) {
    expect(JSON.parse(bytes.toString("utf8", span.start, span.end))).toEqual(record.result);
    return;
  }
  const result = record.result as string;
  expect(decodeJsonString(bytes, span.start, span.end)).toBe(result);
  expect(span.string.loneSurrogate).toBe(LONE.test(result));
  expect(span.string.escapes).toBe(bytes.subarray(span.start, span.end).includes(0x5c));
  if (!span.string.loneSurrogate && isUtf8(bytes.subarray(span.start, span.end))) {
    const copy = Buffer.from(bytes);
    const end = unescapeInPlace(copy, span.start, span.end);
    expect(copy.toString("utf8", span.start, end)).toBe(result);
  }
}

const MIB = 1024 * 1024;

/** `bytes` as the runtime keeps a large stdout (in one growing buffer), read in 64 KiB pieces. */
function captured(bytes: Buffer): StdoutText {
  const capture = new StdoutCapture(64 * MIB);
  for (let at = 0; at < bytes.length; at += 65536) capture.push(bytes.subarray(at, at + 65536));
  return capture.take();
}

/** What the loop makes of a stdout: the output, the record's excerpt, the near-miss warning. */
function reading(stdout: StdoutText) {
  const { output, object } = readOutput(stdout);
  const event = outputForEvent(output);
  const nearMiss = outputNearMiss(stdout, object);
  return { event, nearMiss, output: { ...settledOutput(output) } };
}

describe("the fields of a JSON object read from its bytes", () => {
  it("read exactly as JSON.parse reads the decoded text, for any object and any broken one", () => {
    fc.assert(fc.property(bytesOfObject, checkScan), { numRuns: 3000 });
  });

  it("a nesting 100,000 deep is read without overflowing the stack", () => {
    const deep = Buffer.from(`{"stop":true,"x":${"[".repeat(100_000)}${"]".repeat(100_000)}}`);
    expect(scanJsonObject(deep, KNOWN_FIELDS)?.object).toEqual({ stop: true });
    expect(scanJsonObject(deep.subarray(0, deep.length - 2), KNOWN_FIELDS)).toBeUndefined();
  });

  it("a stdout over 1 MiB reads as the whole text parsed at once: output, record excerpt, near miss", { timeout: 120_000 }, () => {
    const pad = "p".repeat(MIB);
    fc.assert(
      fc.property(bytesOfObject, fc.constantFrom("lead", "result", "tail"), (bytes, where) => {
        // Over 1 MiB: a padding member first or last, or the result itself made large.
        const text = bytes.toString("latin1");
        const big =
          where === "lead" ? Buffer.from(text.replace("{", `{"pad":"${pad}",`), "latin1")
          : where === "tail" ? Buffer.from(text.replace(/}(\s*)$/, `,"pad":"${pad}"}$1`), "latin1")
          : Buffer.concat([Buffer.from(`{"result":"${pad}\\n\\u00e9\\ud83d\\ude00`), Buffer.from(text.replace(/^\s*{/, '", '), "latin1")]);
        expect(reading(captured(big))).toEqual(reading(stdoutOfText(big.toString("utf8"), big.length)));
      }),
      { numRuns: 60 },
    );
  });

  it("a huge string result is kept as its own bytes, unescaped where it lay: its text and UTF-8 are the value's", () => {
    const result = `${"line of text\n\t\"quoted\" é 中 😀 \\ /\n".repeat(100_000)}\u2028end`;
    const stdout = captured(Buffer.from(JSON.stringify({ goto: "next", result, other: [1, { result: 2 }] })));
    const { output } = readOutput(stdout);
    expect(output.goto).toBe("next");
    expect(outputForEvent(output).resultBytes).toBe(Buffer.byteLength(result));
    expect(output.result === result).toBe(true);
  });
});
