import { shownText } from "../core/untrusted-text.js";

/**
 * Tables laid out in characters (pure): left-aligned columns separated by two spaces, the last
 * column not padded. Cells come from records (untrusted): their control characters are shown
 * escaped (`loopx runs`, `loopx runs show`).
 */

/** Characters, not UTF-16 units; spread only what holds a surrogate pair (100,000 rows, `runs show`). */
function cellWidth(cell: string): number {
  return SURROGATE.test(cell) ? [...cell].length : cell.length;
}

/** The patterns a 100,000-row table tests each cell against, made once (a literal in a loop is a new RegExp each time). */
const SURROGATE = /[\ud800-\udbff]/;
/** Printable ASCII only: shown as it is, a column per character (most cells; one test, not two). */
const PLAIN = /^[\x20-\x7e]*$/;
/** A line's end that trimming would change. */
const BLANK_END = /\s$/;

/**
 * The `count` rows that `rowAt` gives, laid out, each line (without its newline) to `line`, in order.
 * `rowAt` is asked for each row twice — once for the column widths, once for its line — so a long
 * table is never held as cells, only as the rows it is made from. The last column is not padded,
 * so its width is never needed.
 */
export function layOutTable(count: number, rowAt: (i: number) => string[], line: (text: string, i: number) => void): void {
  const shown = new ShownCells();
  const widths: number[] = [];
  for (let r = 0; r < count; r++) {
    const row = rowAt(r);
    for (let i = 0; i < row.length - 1; i++) {
      const cell = row[i]!;
      const width = PLAIN.test(cell) ? cell.length : shown.width(cell);
      if (!(width <= widths[i]!)) widths[i] = width;
    }
  }
  const pads = widths.map((most) => Array.from({ length: most + 1 }, (_, n) => " ".repeat(n)));
  for (let r = 0; r < count; r++) {
    const row = rowAt(r);
    const last = row.length - 1;
    let text = "";
    for (let i = 0; i < last; i++) {
      const cell = row[i]!;
      if (PLAIN.test(cell)) text += `${cell}${pads[i]![widths[i]! - cell.length]}  `;
      else text += `${shown.text(cell)}${pads[i]![widths[i]! - shown.width(cell)]}  `;
    }
    const end = last >= 0 ? shownText(row[last]!) : "";
    // Trimmed only when it can end in blanks: trimming makes V8 copy every line once more.
    line(end === "" || BLANK_END.test(end) ? (text + end).trimEnd() : text + end, r);
  }
}

/**
 * A cell that is not plain ASCII, shown and measured once while the next cells are the same
 * string: a column of duration bars (one string per fill, `runs show`) is not escaped 100,000 times.
 */
class ShownCells {
  private cell: string | undefined;
  private shown = "";
  private columns = 0;

  text(cell: string): string {
    this.take(cell);
    return this.shown;
  }

  width(cell: string): number {
    this.take(cell);
    return this.columns;
  }

  private take(cell: string): void {
    if (cell === this.cell) return;
    this.cell = cell;
    this.shown = shownText(cell);
    this.columns = cellWidth(this.shown);
  }
}

/** `cells` laid out, each line ending in a newline. */
export function formatTable(cells: string[][]): string {
  const lines: string[] = [];
  layOutTable(cells.length, (i) => cells[i]!, (text) => void lines.push(`${text}\n`));
  return lines.join("");
}
