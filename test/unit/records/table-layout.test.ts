/**
 * Tables laid out in characters (src/records/table-layout.ts): the fast paths of `runs show`'s
 * 100,000 rows (plain ASCII cells measured by one test, a repeated cell escaped once, the last
 * column never measured, lines trimmed only when they can end in blanks) give exactly what the
 * plain rule gives: every cell escaped (shownText), padded to its column's widest in characters,
 * two spaces between columns, the line's trailing whitespace trimmed.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { shownText } from "../../../src/core/untrusted-text.js";
import { formatTable } from "../../../src/records/table-layout.js";

/** The plain rule, spelled out. */
function reference(cells: string[][]): string {
  const width = (text: string) => [...text].length;
  const widths: number[] = [];
  for (const row of cells) for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, width(shownText(cell)));
  return cells
    .map((row) => {
      const shown = row.map(shownText);
      const last = shown.length - 1;
      const line = shown.map((cell, i) => (i === last ? cell : `${cell}${" ".repeat(widths[i]! - width(cell))}  `)).join("");
      return `${line.trimEnd()}\n`;
    })
    .join("");
}

/** Cells as records hold them: mostly plain, some with escapes, wide characters, blanks, repeats. */
const cell = fc.oneof(
  fc.constantFrom("", "0", "w:index", "████████············", "goto a:b", "stop", " ", "x\t", "end\u00a0", "\u001b[2J", "😀x", "a\u202eb"),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: "binary", maxLength: 8 }),
);

describe("layOutTable", () => {
  it("lays out any cells as the plain rule does", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5 }).chain((columns) => fc.array(fc.array(cell, { minLength: columns, maxLength: columns }), { maxLength: 12 })), (cells) => {
        expect(formatTable(cells)).toBe(reference(cells));
      }),
      { numRuns: 2000 },
    );
  });

  it("pads a column of bars and escapes by characters, and trims a last cell that ends in blanks", () => {
    const bar = "██········";
    expect(formatTable([["1", bar, "done"], ["22", bar, "a\u00a0"], ["3", "\u001b", ""]])).toBe(
      `1   ██········  done\n22  ██········  a\n3   \\e\n`,
    );
  });
});
