import { shownText } from "../core/untrusted-text.js";

/**
 * Tables laid out in characters (pure): left-aligned columns separated by two spaces, the last
 * column not padded. Cells come from records (untrusted): their control characters are shown
 * escaped (`loopx runs`, `loopx runs show`).
 */

/** Characters, not UTF-16 units; spread only what holds a surrogate pair (100,000 rows, `runs show`). */
function cellWidth(cell: string): number {
  return /[\ud800-\udbff]/.test(cell) ? [...cell].length : cell.length;
}

/**
 * The `count` rows that `rowAt` gives, laid out, each line (without its newline) to `line`, in order.
 * `rowAt` is asked for each row twice — once for the column widths, once for its line — so a long
 * table is never held as cells, only as the rows it is made from.
 */
export function layOutTable(count: number, rowAt: (i: number) => string[], line: (text: string, i: number) => void): void {
  const widths: number[] = [];
  for (let r = 0; r < count; r++) {
    const row = rowAt(r);
    for (let i = 0; i < row.length; i++) widths[i] = Math.max(widths[i] ?? 0, cellWidth(shownText(row[i]!)));
  }
  const pads = widths.map((most) => Array.from({ length: most + 1 }, (_, n) => " ".repeat(n)));
  for (let r = 0; r < count; r++) {
    const row = rowAt(r);
    const last = row.length - 1;
    let text = "";
    for (let i = 0; i < last; i++) {
      const cell = shownText(row[i]!);
      text += `${cell}${pads[i]![widths[i]! - cellWidth(cell)]}  `;
    }
    if (last >= 0) text += shownText(row[last]!);
    line(text.trimEnd(), r);
  }
}

/** `cells` laid out, each line ending in a newline. */
export function formatTable(cells: string[][]): string {
  const lines: string[] = [];
  layOutTable(cells.length, (i) => cells[i]!, (text) => void lines.push(`${text}\n`));
  return lines.join("");
}
