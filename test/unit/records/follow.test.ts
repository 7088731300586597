/**
 * Following a record as it grows (src/records/follow.ts), the one reader of `loopx runs tail` and
 * the dashboard: complete lines only, a partial last line kept for the next read, a start in the
 * middle of a line skipped to the next line, a compacted (shorter) record read on from its new
 * end, lines of a newer format reported and never misread, byte offsets exact (UTF-8 included).
 */
import { appendFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { RecordEvent } from "../../../src/core/events.js";
import { RecordFollower, readLines } from "../../../src/records/follow.js";
import { tempDir } from "../../helpers.js";

const line = (n: number, text = "x") => `${JSON.stringify({ v: 1, run: "r", type: "note", time: "t", n, text })}\n`;

function follower(path: string, from = 0) {
  const follow = new RecordFollower(path, from);
  const seen: Array<{ n: number; offset: number; length: number }> = [];
  const newer: number[] = [];
  const drain = () => follow.drain((event: RecordEvent, offset, length) => seen.push({ n: (event as { n: number }).n, offset, length }), (v) => newer.push(v));
  return { follow, seen, newer, drain };
}

describe("RecordFollower", () => {
  it("reads complete lines only; a partial line waits for the rest; offsets and lengths are the lines' bytes", () => {
    const path = join(tempDir(), "r.jsonl");
    const [a, b] = [line(1), line(2, "héllo ✓")];
    writeFileSync(path, a + b.slice(0, 10));
    const f = follower(path);
    expect(f.drain()).toBe(true);
    expect(f.seen).toEqual([{ n: 1, offset: 0, length: Buffer.byteLength(a) }]);
    expect(f.follow.complete).toBe(Buffer.byteLength(a));
    appendFileSync(path, b.slice(10));
    f.drain();
    expect(f.seen[1]).toEqual({ n: 2, offset: Buffer.byteLength(a), length: Buffer.byteLength(b) });
    expect(f.follow.offset).toBe(Buffer.byteLength(a + b));
  });

  it("started inside a line, it skips to the next whole line; started on a boundary, it reads the line there", () => {
    const path = join(tempDir(), "r.jsonl");
    writeFileSync(path, line(1) + line(2) + line(3));
    const inside = follower(path, 5);
    inside.drain();
    expect(inside.seen.map((s) => s.n)).toEqual([2, 3]);
    const onBoundary = follower(path, Buffer.byteLength(line(1)));
    onBoundary.drain();
    expect(onBoundary.seen.map((s) => s.n)).toEqual([2, 3]);
  });

  it("a record found shorter than what was read (compacted) is read on from its new end", () => {
    const path = join(tempDir(), "r.jsonl");
    writeFileSync(path, line(1) + line(2) + line(3));
    const f = follower(path);
    f.drain();
    writeFileSync(path, line(1)); // compacted to less than was read
    f.drain();
    expect(f.follow.offset).toBe(Buffer.byteLength(line(1)));
    appendFileSync(path, line(4));
    f.drain();
    expect(f.seen.map((s) => s.n)).toEqual([1, 2, 3, 4]);
  });

  it("a newer format's line goes to onNewer; an unreadable line (cut by a kill) is skipped; a removed record reads false", () => {
    const path = join(tempDir(), "r.jsonl");
    writeFileSync(path, `${JSON.stringify({ v: 99, type: "future" })}\n{"v":1,"type":"note","n":\n${line(5)}`);
    const f = follower(path);
    expect(f.drain()).toBe(true);
    expect(f.newer).toEqual([99]);
    expect(f.seen.map((s) => s.n)).toEqual([5]);
    rmSync(path);
    expect(f.drain()).toBe(false);
  });
});

describe("readLines", () => {
  it("skips lines by prefix or predicate, stops at `until`, and returns the incomplete rest", () => {
    const path = join(tempDir(), "r.jsonl");
    const text = line(1, "keep") + line(2, "drop") + line(3, "keep");
    writeFileSync(path, text);
    const seen: number[] = [];
    const read = readLines(path, 0, Infinity, (e) => seen.push((e as { n: number }).n), undefined, false, (l) => l.includes('"drop"'));
    expect(seen).toEqual([1, 3]);
    expect(read).toEqual({ end: Buffer.byteLength(text), rest: Buffer.alloc(0) });
    const until = Buffer.byteLength(line(1, "keep")) + 7;
    const cut: number[] = [];
    const part = readLines(path, 0, until, (e) => cut.push((e as { n: number }).n));
    expect(cut).toEqual([1]);
    expect(part!.rest.toString()).toBe(line(2, "drop").slice(0, 7));
    expect(readLines(join(tempDir(), "absent"), 0, Infinity, () => {})).toBeUndefined();
  });

  it("any split of a record into appends is read as the same events at the same offsets", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 300 }), { minLength: 1, maxLength: 12 }), fc.array(fc.nat(), { maxLength: 8 }), (texts, cuts) => {
        const whole = texts.map((t, i) => line(i, t)).join("");
        const path = join(tempDir(), "r.jsonl");
        writeFileSync(path, "");
        const f = follower(path);
        const bytes = Buffer.from(whole);
        const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((x, y) => x - y);
        let at = 0;
        for (const p of [...points, bytes.length]) {
          appendFileSync(path, bytes.subarray(at, p));
          at = p;
          f.drain();
        }
        let offset = 0;
        const expected = texts.map((t, i) => {
          const length = Buffer.byteLength(line(i, t));
          const entry = { n: i, offset, length };
          offset += length;
          return entry;
        });
        expect(f.seen).toEqual(expected);
      }),
      { numRuns: 60 },
    );
  });
});
