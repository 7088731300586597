/**
 * A successful script's stdout as the loop reads it (spec §2.3). A huge raw output (300 MB of log)
 * is kept as the bytes it was read into and decoded to one string only when something needs all of
 * it — the API's `result`, a JSON object to parse — and then once: holding the bytes, a joined copy
 * and the string at the same time cost three times its size. What the loop needs
 * of a raw output — is it an object, its last line, the record's excerpt and size — comes from its
 * ends. The runtime's bytes (runtime/stdout-capture.ts) decode as Buffer#toString does;
 * stdoutOfText wraps a text already decoded (a small stdout, tests, in-memory hosts).
 */
export interface StdoutText {
  /** Its size in bytes. */
  readonly bytes: number;
  /** All of it, decoded (once: every call gives the same string). */
  text(): string;
  /** Its first and its last byte (or UTF-16 unit) that is not JSON whitespace (space, tab, CR, LF); -1 for none. */
  edges(): readonly [first: number, last: number];
  /** The first `units` UTF-16 units of text() (all of it when shorter), without decoding the rest. */
  prefix(units: number): string;
  /** A suffix of text(), at least `units` UTF-16 units long unless it is all of it (`whole`), without decoding the rest. */
  suffix(units: number): { text: string; whole: boolean };
  /** The UTF-8 size of text(): `bytes`, unless stdout was not valid UTF-8. */
  utf8Length(): number;
  /** The UTF-8 of text() a piece at a time (what a next script's stdin file is written from), never encoded whole. */
  utf8Chunks(): Iterable<Uint8Array>;
  /**
   * Only a stdout held as bytes: its known fields when it is one JSON object, read without decoding
   * the rest (core/json-fields.ts), or undefined when it is not one. Absent: readOutput parses text().
   */
  readObject?(): ObjectRead | undefined;
  /**
   * Lets go of the bytes (the loop is done with them; a text decoded before stays): the next
   * script's huge stdout must not be read while the last one's bytes are still held.
   */
  release(): void;
}

/**
 * The fields of a JSON object stdout (json-fields.ts ScannedObject's `object`), and its result: the
 * value (to be made a string as the spec says), or the result's own text when it is a huge string
 * kept as bytes (its UTF-8, unescaped where it lay).
 */
export interface ObjectRead {
  object: Record<string, unknown>;
  result?: { value: unknown } | { text: StdoutText };
}

/** What a script gets on stdin: a text, or a huge goto result still held as bytes. */
export type ScriptInput = string | StdoutText;

/** The UTF-8 size of a script's input. */
export function inputBytes(input: ScriptInput): number {
  return typeof input === "string" ? utf8Bytes(input) : input.utf8Length();
}

/** The first `units` UTF-16 units of a script's input. */
export function inputPrefix(input: ScriptInput, units: number): string {
  return typeof input === "string" ? input.slice(0, units) : input.prefix(units);
}

/** UTF-16 units encoded at a time: encoding a huge text whole would hold a second copy of it. */
const SLICE_UNITS = 1024 * 1024;

/** The UTF-8 of `text`, a slice at a time; a surrogate pair is never cut in two (each half alone would be written as U+FFFD). */
export function* utf8Slices(text: string): Generator<Uint8Array> {
  const encoder = new TextEncoder();
  for (let at = 0; at < text.length; ) {
    let end = Math.min(text.length, at + SLICE_UNITS);
    if (end < text.length && (text.charCodeAt(end - 1) & 0xfc00) === 0xd800) end--;
    yield encoder.encode(text.slice(at, end));
    at = end;
  }
}

/** A text already decoded (tests, in-memory hosts), as a StdoutText. */
export function stdoutOfText(text: string, bytes: number = utf8Bytes(text)): StdoutText {
  return {
    bytes,
    text: () => text,
    edges() {
      let first = 0;
      while (first < text.length && isJsonSpace(text.charCodeAt(first))) first++;
      let last = text.length - 1;
      while (last >= first && isJsonSpace(text.charCodeAt(last))) last--;
      return first < text.length ? [text.charCodeAt(first), text.charCodeAt(last)] : [-1, -1];
    },
    prefix: (units) => text.slice(0, units),
    suffix: (units) => (units >= text.length ? { text, whole: true } : { text: text.slice(text.length - units), whole: false }),
    utf8Length: () => utf8Bytes(text),
    utf8Chunks: () => utf8Slices(text),
    release: () => undefined,
  };
}

/** Is `code` (a byte, or a UTF-16 unit) JSON whitespace? */
export function isJsonSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

/** The UTF-8 size of `text`, without encoding it (lone surrogates count as U+FFFD, as encoders write them). */
export function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code < 0xdc00 && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}
