/**
 * The top-level fields of a JSON object held as UTF-8 bytes, read without decoding the whole text
 * (a structured stdout of hundreds of MB: JSON.parse would hold the text and the parsed result at
 * once). One pass checks the bytes exactly as JSON.parse checks their decoded text — the same
 * grammar, the same whitespace, a control character or a bad escape in a string fails it — and
 * keeps where each value of a field loopx reads lies; only those values are decoded. Bytes that are
 * not valid UTF-8 decode to U+FFFD as Buffer#toString and TextDecoder do: outside a string that
 * is never valid JSON, inside one it is a character like any other.
 */

/** Where a top-level value lies: [start, end) of its bytes; for a string, of what is between its quotes. */
interface ValueSpan {
  start: number;
  end: number;
  /** A string value: how its content is written. */
  string?: { escapes: boolean; loneSurrogate: boolean };
}

export interface ScannedObject {
  /**
   * The object's fields whose name is a known field in any case (what the near-miss check looks
   * at), in JSON.parse's key order; each value decoded, except that of "result" (null here).
   */
  object: Record<string, unknown>;
  /** The value of "result" (its last occurrence, as JSON.parse keeps), when it has one. */
  result?: ValueSpan;
}

class NotJson extends Error {}

const fail = (): never => {
  throw new NotJson();
};

const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
const isSpace = (byte: number | undefined): boolean => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
const isDigit = (byte: number | undefined): boolean => byte !== undefined && byte >= 0x30 && byte <= 0x39;

function hexValue(byte: number | undefined): number {
  if (byte === undefined) return -1;
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  const lower = byte | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x57 : -1;
}

/** The UTF-16 unit of the four hex digits at `at`, or fails. */
export function hexUnit(bytes: Uint8Array, at: number): number {
  let unit = 0;
  for (let i = 0; i < 4; i++) {
    const digit = hexValue(bytes[at + i]);
    if (digit < 0) fail();
    unit = unit * 16 + digit;
  }
  return unit;
}

export const SIMPLE_ESCAPES = new Map<number, number>([
  [0x22, 0x22],
  [0x5c, 0x5c],
  [0x2f, 0x2f],
  [0x62, 0x08],
  [0x66, 0x0c],
  [0x6e, 0x0a],
  [0x72, 0x0d],
  [0x74, 0x09],
]);

export const isHigh = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff;
const isLow = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff;

class Scanner {
  at = 0;
  constructor(readonly bytes: Uint8Array) {}

  space(): void {
    while (isSpace(this.bytes[this.at])) this.at++;
  }

  expect(byte: number): void {
    if (this.bytes[this.at] !== byte) fail();
    this.at++;
  }

  /** A string at `at` (its opening quote): checked, and its content's span. */
  string(): ValueSpan {
    const { bytes } = this;
    this.expect(QUOTE);
    const start = this.at;
    let escapes = false;
    let loneSurrogate = false;
    let pendingHigh = false;
    for (let at = start; ; ) {
      const byte = bytes[at];
      if (byte === undefined || byte < 0x20) fail();
      if (byte === QUOTE) {
        this.at = at + 1;
        return { start, end: at, string: { escapes, loneSurrogate: loneSurrogate || pendingHigh } };
      }
      if (byte !== BACKSLASH) {
        if (pendingHigh) loneSurrogate = true;
        pendingHigh = false;
        at++;
        continue;
      }
      escapes = true;
      const kind = bytes[at + 1]!;
      if (kind === 0x75) {
        const unit = hexUnit(bytes, at + 2);
        // A high surrogate pairs only with a low one right after it: anything else leaves it (or the low one) alone.
        if (pendingHigh && isLow(unit)) pendingHigh = false;
        else {
          if (pendingHigh || isLow(unit)) loneSurrogate = true;
          pendingHigh = isHigh(unit);
        }
        at += 6;
      } else {
        if (!SIMPLE_ESCAPES.has(kind)) fail();
        if (pendingHigh) loneSurrogate = true;
        pendingHigh = false;
        at += 2;
      }
    }
  }

  number(): void {
    const { bytes } = this;
    if (bytes[this.at] === 0x2d) this.at++;
    if (bytes[this.at] === 0x30) this.at++;
    else if (isDigit(bytes[this.at])) while (isDigit(bytes[this.at])) this.at++;
    else fail();
    if (bytes[this.at] === 0x2e) {
      this.at++;
      if (!isDigit(bytes[this.at])) fail();
      while (isDigit(bytes[this.at])) this.at++;
    }
    if ((bytes[this.at]! | 0x20) === 0x65) {
      this.at++;
      if (bytes[this.at] === 0x2b || bytes[this.at] === 0x2d) this.at++;
      if (!isDigit(bytes[this.at])) fail();
      while (isDigit(bytes[this.at])) this.at++;
    }
  }

  word(text: string): void {
    for (let i = 0; i < text.length; i++) this.expect(text.charCodeAt(i));
  }

  /** One value that is not an object or array. */
  scalar(): void {
    const byte = this.bytes[this.at];
    if (byte === QUOTE) this.string();
    else if (byte === 0x74) this.word("true");
    else if (byte === 0x66) this.word("false");
    else if (byte === 0x6e) this.word("null");
    else this.number();
  }

  /** One value of any kind, its containers walked without recursion (a deep nesting is no stack overflow). */
  value(): void {
    const open: number[] = [];
    for (;;) {
      this.space();
      const byte = this.bytes[this.at];
      if (byte === 0x7b || byte === 0x5b) {
        this.at++;
        this.space();
        const close = byte === 0x7b ? 0x7d : 0x5d;
        if (this.bytes[this.at] === close) this.at++;
        else {
          open.push(close);
          if (close === 0x7d) this.memberName();
          continue;
        }
      } else this.scalar();
      if (this.closeAfterValue(open)) return;
    }
  }

  /** After a value inside `open`: past its closing brackets and the comma before the next value; true once none is open. */
  private closeAfterValue(open: number[]): boolean {
    for (;;) {
      if (open.length === 0) return true;
      this.space();
      const byte = this.bytes[this.at];
      const close = open[open.length - 1]!;
      if (byte === close) {
        this.at++;
        open.pop();
      } else if (byte === 0x2c) {
        this.at++;
        if (close === 0x7d) {
          this.space();
          this.memberName();
        }
        return false;
      } else fail();
    }
  }

  /** `"name" :` of an object member, names not kept. */
  private memberName(): void {
    this.string();
    this.space();
    this.expect(0x3a);
  }
}

/** A decoder that reads as Buffer#toString does: a leading byte-order mark is a character, not dropped. */
const utf8Decoder = (): TextDecoder => new TextDecoder("utf-8", { ignoreBOM: true });

/** A string's content (between its quotes, known to be valid JSON), decoded as JSON.parse decodes it. */
export function decodeJsonString(bytes: Uint8Array, start: number, end: number, decoder = utf8Decoder()): string {
  return JSON.parse(`"${decoder.decode(bytes.subarray(start, end))}"`) as string;
}

/**
 * The fields loopx reads of `bytes` when they are one JSON object (JSON whitespace around it),
 * else undefined (they are a raw result). `known` are the field names (lower case).
 */
export function scanJsonObject(bytes: Uint8Array, known: readonly string[]): ScannedObject | undefined {
  const scanner = new Scanner(bytes);
  const decoder = utf8Decoder();
  const object: Record<string, unknown> = {};
  let result: ValueSpan | undefined;
  try {
    scanner.space();
    scanner.expect(0x7b);
    scanner.space();
    if (bytes[scanner.at] === 0x7d) scanner.at++;
    else
      for (;;) {
        scanner.space();
        const name = scanner.string();
        scanner.space();
        scanner.expect(0x3a);
        scanner.space();
        const start = scanner.at;
        const isString = bytes[start] === QUOTE;
        const span = isString ? scanner.string() : (scanner.value(), { start, end: scanner.at });
        const key = decodeJsonString(bytes, name.start, name.end, decoder);
        if (known.includes(key.toLowerCase())) {
          if (key === "result") {
            object[key] = null;
            result = span;
          } else object[key] = key === "stop" || key === "goto" ? JSON.parse(decoder.decode(bytes.subarray(start, scanner.at))) : null;
        }
        scanner.space();
        if (bytes[scanner.at] === 0x2c) scanner.at++;
        else {
          scanner.expect(0x7d);
          break;
        }
      }
    scanner.space();
    if (scanner.at !== bytes.length) return undefined;
  } catch (error) {
    if (error instanceof NotJson) return undefined;
    throw error;
  }
  return result ? { object, result } : { object };
}
