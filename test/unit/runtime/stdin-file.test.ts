/**
 * A script's stdin file (runtime/stdin-file.ts) holds the text's UTF-8 exactly, however long: a
 * large stdin is written a slice at a time, and a slice never ends between the
 * two halves of a surrogate pair (each half alone would be written as U+FFFD).
 */
import { closeSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { stdinFile } from "../../../src/runtime/stdin-file.js";

function written(data: string): string {
  const fd = stdinFile(data);
  try {
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}

describe("stdinFile", () => {
  it.each([
    ["empty", ""],
    ["small", "hello\nwörld 😀"],
    ["a pair across the first slice's end", `${"a".repeat(1024 * 1024 - 1)}😀${"b".repeat(10)}`],
    ["pairs across every slice's end", "x😀".repeat(1_500_000)],
    ["3 M characters of 1 to 4 bytes", "aé中😀".repeat(600_000)],
  ])("%s: the file holds exactly its UTF-8", (_name, data) => {
    expect(written(data) === data).toBe(true);
  });
});
