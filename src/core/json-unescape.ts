import { BACKSLASH, SIMPLE_ESCAPES, hexUnit, isHigh } from "./json-fields.js";

/**
 * A JSON string's value written as UTF-8 over its own JSON text (json-fields.ts found it): a huge
 * structured result becomes the bytes a next script reads on stdin where it lay, never copied.
 */

/** The UTF-8 bytes of `unit` (not a surrogate) at `to`; how many. */
function putUnit(bytes: Uint8Array, to: number, unit: number): number {
  if (unit < 0x80) {
    bytes[to] = unit;
    return 1;
  }
  if (unit < 0x800) {
    bytes[to] = 0xc0 | (unit >> 6);
    bytes[to + 1] = 0x80 | (unit & 0x3f);
    return 2;
  }
  bytes[to] = 0xe0 | (unit >> 12);
  bytes[to + 1] = 0x80 | ((unit >> 6) & 0x3f);
  bytes[to + 2] = 0x80 | (unit & 0x3f);
  return 3;
}

/**
 * Rewrites a string's content (valid JSON, valid UTF-8, its surrogate escapes all paired) in place
 * as the UTF-8 of its value, which is never longer; returns where that ends. Runs of plain bytes
 * move with copyWithin.
 */
export function unescapeInPlace(bytes: Uint8Array, start: number, end: number): number {
  let to = start;
  let from = start;
  while (from < end) {
    let next = bytes.indexOf(BACKSLASH, from);
    if (next < 0 || next > end) next = end;
    if (next > from) {
      if (to !== from) bytes.copyWithin(to, from, next);
      to += next - from;
      from = next;
      continue;
    }
    const kind = bytes[from + 1]!;
    if (kind !== 0x75) {
      bytes[to++] = SIMPLE_ESCAPES.get(kind)!;
      from += 2;
      continue;
    }
    const unit = hexUnit(bytes, from + 2);
    if (!isHigh(unit)) {
      to += putUnit(bytes, to, unit);
      from += 6;
      continue;
    }
    const point = 0x10000 + ((unit - 0xd800) << 10) + (hexUnit(bytes, from + 8) - 0xdc00);
    bytes[to] = 0xf0 | (point >> 18);
    bytes[to + 1] = 0x80 | ((point >> 12) & 0x3f);
    bytes[to + 2] = 0x80 | ((point >> 6) & 0x3f);
    bytes[to + 3] = 0x80 | (point & 0x3f);
    to += 4;
    from += 12;
  }
  return to;
}
