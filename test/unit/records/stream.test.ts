/**
 * `runs show` reads a whole record in 64 KiB pieces (src/records/stream.ts over follow.ts
 * readLines) instead of as one string, and `--json --last N` adds up the run's receipts without
 * parsing the lines that cannot be one. Both must read exactly what parseRecord of the whole text
 * reads: lines across piece boundaries, characters of several bytes cut by one, a line longer than
 * a piece, a last line without its newline, broken and blank lines, a newer format.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { RecordEvent } from "../../../src/core/events.js";
import { recordTotals } from "../../../src/core/receipts.js";
import { ChunkedLines } from "../../../src/records/chunked-lines.js";
import { parseRecord } from "../../../src/records/parse.js";
import { streamRecord, totalsEvents } from "../../../src/records/stream.js";

const ID = "0streamtest0001";
const T0 = Date.parse("2026-01-01T00:00:00.000Z");
const line = (type: string, n: number, extra: object = {}) => JSON.stringify({ v: 1, type, time: new Date(T0 + n).toISOString(), run: ID, ...extra });

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function record(text: string): string {
  dir = mkdtempSync(join(tmpdir(), "loopx-stream-"));
  writeFileSync(join(dir, `${ID}.jsonl`), text);
  return dir;
}

/** A record of `n` iterations whose results hold characters of 2, 3 and 4 bytes, so that pieces cut them. */
function varied(n: number): string[] {
  const lines = [line("run.start", 0, { pid: 1, projectRoot: "/p", target: "w:index", version: "t", runtime: "node", maxIterations: null })];
  for (let i = 1; i <= n; i++) {
    lines.push(line("iteration.start", i, { n: i, target: "w:index" }));
    if (i % 97 === 0) lines.push(line("note", i, { n: i, text: `long ${"ü😀☃".repeat(30_000)}` })); // past a piece
    if (i % 13 === 0) lines.push(line("receipt", i, { n: i, cost: { usd: 0.01 * i, kind: "billed" }, tokens: { input: i, output: 1 }, model: "m" }));
    if (i % 31 === 0) lines.push("{broken", "", "   ");
    lines.push(line("iteration.end", i, { n: i, target: "w:index", durationMs: i, exitCode: 0, signal: null, stdoutBytes: 1, output: { result: `${"é".repeat(i % 7)}😀 ${i}` } }));
  }
  return lines;
}

function streamed(at: string, keep?: (line: string) => boolean): { events: RecordEvent[]; bytes: number; newerVersion?: number } {
  const events: RecordEvent[] = [];
  const read = streamRecord(at, ID, (event) => void events.push(event), keep);
  return { events, ...read };
}

describe("streamRecord: a whole record in pieces", () => {
  it("reads what parseRecord of the whole text reads, across piece boundaries and long lines", () => {
    for (const ending of ["\n", ""]) {
      const text = `${varied(400).join("\n")}${ending}`;
      expect(Buffer.byteLength(text)).toBeGreaterThan(1_000_000); // many pieces
      const read = streamed(record(text));
      expect(read.events).toEqual(parseRecord(text).events);
      expect(read.bytes).toBe(Buffer.byteLength(text));
      rmSync(dir!, { recursive: true, force: true });
    }
  });

  it("says a line of a newer format, and an empty record", () => {
    const text = `${varied(3).join("\n")}\n${JSON.stringify({ v: 99, type: "x" })}\n${JSON.stringify({ v: 7, type: "y" })}`;
    expect(streamed(record(text)).newerVersion).toBe(99);
    rmSync(dir!, { recursive: true, force: true });
    expect(streamed(record(""))).toEqual({ events: [], bytes: 0 });
  });

  it("throws for a record that is not there, as reading its text would", () => {
    dir = mkdtempSync(join(tmpdir(), "loopx-stream-"));
    expect(() => streamRecord(dir!, ID, () => {})).toThrow(/ENOENT/);
  });
});

describe("totalsEvents: what --json --last adds up, the other lines unparsed", () => {
  it("adds up to what the whole record does, and parses no iteration line", () => {
    const text = `${varied(300).join("\n")}\n`;
    const read = totalsEvents(record(text), ID);
    expect(recordTotals(read.events)).toEqual(recordTotals(parseRecord(text).events));
    expect(read.events.every((event) => event.type === "receipt" || event.type === "gap")).toBe(true);
  });

  it("still reads a receipt or gap however it is spelled, and a newer line hidden by a second v", () => {
    const receipt = line("receipt", 1, { n: 1, cost: { usd: 1, kind: "billed" } });
    const gap = line("gap", 2, { after: 1, iterations: 3, bytes: 10, receipts: { costUsd: { billed: 2, estimate: 0 }, tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 }, receipts: 1, models: {} } });
    const lines = [
      receipt.replace('"type":"receipt"', '"type":"\\u0072eceipt"'), // escaped: JSON.parse reads "receipt"
      line("note", 1, { n: 1, text: "x" }).replace('"type":"note"', '"type":"note","type":"receipt","cost":{"usd":3,"kind":"billed"}'), // a later key wins
      ` ${gap}`, // not ours as written, still an event
    ];
    const text = `${varied(2).join("\n")}\n${lines.join("\n")}\n`;
    const read = totalsEvents(record(text), ID);
    expect(recordTotals(read.events)).toEqual(recordTotals(parseRecord(text).events));
    expect(recordTotals(read.events).run.costUsd.billed).toBe(1 + 3 + 2);
    rmSync(dir!, { recursive: true, force: true });
    const newer = `${varied(2).join("\n")}\n${line("note", 1, { text: "x" }).replace('"text"', '"v":2,"text"')}\n`;
    expect(totalsEvents(record(newer), ID).newerVersion).toBe(2);
  });
});

describe("ChunkedLines", () => {
  it("writes each line with its newline, in pieces of ordinary-string size", () => {
    const pieces: string[] = [];
    const out = new ChunkedLines((text) => void pieces.push(text));
    const lines = Array.from({ length: 5000 }, (_, i) => `${i} ${"█".repeat(i % 50)}`);
    for (const text of lines) out.add(text);
    out.flush();
    out.flush(); // nothing more
    expect(pieces.join("")).toBe(lines.map((text) => `${text}\n`).join(""));
    expect(pieces.length).toBeGreaterThan(1);
    expect(Math.max(...pieces.map((piece) => piece.length))).toBeLessThan(64 * 1024);
  });
});
