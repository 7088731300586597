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
  /**
   * Lets go of the bytes (the loop is done with them; a text decoded before stays): the next
   * script's huge stdout must not be read while the last one's bytes are still held.
   */
  release(): void;
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
