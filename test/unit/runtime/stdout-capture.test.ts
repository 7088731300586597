/**
 * A large stdout (over 1 MiB) is kept as bytes and read from its ends: what the
 * loop makes of it — the output (spec §2.3), the near-miss warning, the record's excerpt and size —
 * and its text when read must be exactly what decoding all of it at once (the old way) gives, for
 * any bytes: characters cut between reads, invalid UTF-8, blanks and JSON at either end.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { outputNearMiss } from "../../../src/core/output-check.js";
import { readOutput, settledOutput } from "../../../src/core/output.js";
import { outputForEvent } from "../../../src/core/run-events.js";
import { stdoutOfText, type StdoutText } from "../../../src/core/stdout-text.js";
import { StdoutCapture } from "../../../src/runtime/stdout-capture.js";

const MIB = 1024 * 1024;

/** What the loop makes of `stdout`: every field compared, the result read last. */
function reading(stdout: StdoutText) {
  const { output, object } = readOutput(stdout);
  const event = outputForEvent(output);
  const nearMiss = outputNearMiss(stdout, object);
  const prefix = stdout.prefix(4096);
  const utf8 = stdout.utf8Length();
  return { event, nearMiss, prefix, utf8, output: { ...settledOutput(output) }, text: stdout.text() };
}

/** `bytes` read in chunks cut at `cuts`, each read into a buffer the reader reuses when `reuses`. */
function captured(bytes: Buffer, cuts: number[], reuses: boolean): StdoutText {
  const capture = new StdoutCapture(64 * MIB);
  const reads = Buffer.alloc(bytes.length);
  let start = 0;
  for (const end of [...new Set(cuts)].sort((a, b) => a - b).concat(bytes.length)) {
    if (end <= start) continue;
    const chunk = reuses ? reads.subarray(0, end - start) : bytes.subarray(start, end);
    if (reuses) bytes.copy(chunk, 0, start, end);
    capture.push(chunk, reuses);
    if (reuses) chunk.fill(0x21); // the reader's next read overwrites it
    start = end;
  }
  return capture.take();
}

const FILLERS = ["a", "é", "中", "😀", "a\n", "日本\n", "  "];
const HEADS = ["", "  \n", "{", " {\"x\":\"", "\xef\xbb\xbf{", "\x80\x80", "\xff"];
const TAILS = ["", "\n", '\n{"stop":true}\n', '\n{"Stop":true}  \n\n', '{"goto":5}', "}", '"}', "\n\xe4\xb8", "\xff\xfe", "\xf0\x9f\x98", "\x80\x80\x80\x80}"];

/** A stdout of about 1–2.5 MiB: a head, a filler with invalid bytes here and there, a tail. */
const largeStdout = fc
  .record({
    head: fc.constantFrom(...HEADS),
    filler: fc.constantFrom(...FILLERS),
    size: fc.integer({ min: MIB + 1, max: 2.5 * MIB }),
    junk: fc.array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom("\xff", "\x80", "\xe4\xb8", "\xc3", "\xed\xa0\x80")), { maxLength: 4 }),
    tail: fc.constantFrom(...TAILS),
  })
  .map(({ head, filler, size, junk, tail }) => {
    const body = Buffer.from(filler.repeat(Math.ceil(size / Buffer.byteLength(filler))));
    const parts = [Buffer.from(head, "latin1")];
    let at = 0;
    for (const [where, bytes] of junk.sort((a, b) => a[0] - b[0])) {
      const to = Math.floor(where * body.length);
      parts.push(body.subarray(at, to), Buffer.from(bytes, "latin1"));
      at = to;
    }
    parts.push(body.subarray(at), Buffer.from(tail, "latin1"));
    return Buffer.concat(parts);
  });

describe("a large stdout is kept as bytes and read from its ends", () => {
  it("reads exactly as the whole text decoded at once, however it was cut into reads", { timeout: 120_000 }, () => {
    fc.assert(
      fc.property(largeStdout, fc.array(fc.nat(), { maxLength: 30 }), fc.boolean(), (bytes, cuts, reuses) => {
        const text = bytes.toString("utf8");
        const got = captured(bytes, cuts.map((cut) => cut % bytes.length), reuses);
        expect(got.bytes).toBe(bytes.length);
        for (const units of [1, 4096, 100_000]) {
          const tail = got.suffix(units);
          expect(text.endsWith(tail.text) && tail.text.length >= units && !tail.whole).toBe(true);
        }
        expect(reading(got)).toEqual(reading(stdoutOfText(text, bytes.length)));
      }),
      { numRuns: 40 },
    );
  });

  it("a structured output of several MiB is parsed whole; reads of 64 KiB cut its characters", () => {
    const result = "日本語のテキスト😀".repeat(200_000);
    const bytes = Buffer.from(JSON.stringify({ result, goto: "next" }));
    const cuts = Array.from({ length: Math.floor(bytes.length / 65536) }, (_, i) => (i + 1) * 65536);
    const { output } = readOutput(captured(bytes, cuts, true));
    expect(output).toEqual({ result, goto: "next" });
  });

  it("a raw result over 1 MiB is decoded once, when read; the API gets it as plain data", () => {
    const bytes = Buffer.from(`${"x".repeat(MIB)}\nlast`);
    const { output } = readOutput(captured(bytes, [4096, 70_000], false));
    expect(outputForEvent(output)).toEqual({ result: "x".repeat(4096), resultBytes: bytes.length });
    const plain = settledOutput(output);
    expect(Object.getOwnPropertyDescriptor(plain, "result")?.value).toBe(bytes.toString());
    expect(output.result).toBe(plain.result);
  });

  it("released (the loop is done with it), its bytes are gone; a text decoded before stays", () => {
    const bytes = Buffer.from("y".repeat(2 * MIB));
    const kept = captured(bytes, [], false);
    kept.release();
    expect(() => kept.text()).toThrow("read after it was let go");
    const read = captured(bytes, [], false);
    expect(read.text()).toBe(bytes.toString());
    read.release();
    expect(read.text()).toBe(bytes.toString());
  });

  it("over the cap nothing is kept", () => {
    const capture = new StdoutCapture(2 * MIB);
    for (let i = 0; i < 3; i++) capture.push(Buffer.alloc(MIB, 0x61));
    expect(capture.over).toBe(true);
    expect(capture.bytes).toBe(3 * MIB);
    expect(capture.take().text()).toBe("");
  });
});
