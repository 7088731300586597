import { isUtf8 } from "node:buffer";
import { decodeJsonString, scanJsonObject } from "../core/json-fields.js";
import { unescapeInPlace } from "../core/json-unescape.js";
import { KNOWN_FIELDS } from "../core/output.js";
import { isJsonSpace, stdoutOfText, utf8Slices, type ObjectRead, type StdoutText } from "../core/stdout-text.js";

/**
 * What a script writes to stdout, as loopx keeps it until the script ends (node.ts and bun.ts
 * read into it). Above the cap (LOOPX_MAX_STDOUT, default 400 MiB; loopx's own addition) nothing
 * more is kept — what was kept is let go at once — but the pipe is still read to its end (the
 * script is neither blocked nor killed), and the iteration fails with one line naming the script,
 * the size and the cap (script-runner.ts): never the runtime's own "Cannot create a string longer
 * than ..." error, whose limit (~512 M characters) a text this size would come close to.
 *
 * A stdout over 1 MiB is kept in one buffer that grows in place up to the cap (only the pages
 * written are taken from the system), so it costs what the script wrote — where a list of chunks
 * joined at the end cost twice that, and three times with the string. It is decoded only when its
 * text is needed (core/stdout-text.ts): then it costs twice its size for a moment.
 */

/** The default cap, in bytes. */
const STDOUT_CAP_BYTES = 400 * 1024 * 1024;

/** The cap from LOOPX_MAX_STDOUT (bytes, or with a unit: 100M, 1G), else the default. */
function stdoutCap(env: Record<string, string | undefined> = process.env): number {
  const match = /^([0-9]+)\s*([kmg]?)i?b?$/i.exec(env.LOOPX_MAX_STDOUT?.trim() ?? "");
  if (!match) return STDOUT_CAP_BYTES;
  const unit = { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[match[2]!.toLowerCase() as "" | "k" | "m" | "g"];
  const cap = Number(match[1]) * unit;
  return Number.isSafeInteger(cap) && cap > 0 ? Math.min(cap, STDOUT_CAP_BYTES) : STDOUT_CAP_BYTES;
}

/** A resizable ArrayBuffer (ES2024: Node 20, Bun), typed here where the ES2023 lib does not know it. */
interface GrowingStore extends ArrayBuffer {
  readonly resizable: boolean;
  resize(byteLength: number): void;
}

export class StdoutCapture {
  private chunks: Uint8Array[] = [];
  /** Everything kept, once it is over SMALL_BYTES, and a view of it that grows with it. */
  private store: GrowingStore | undefined;
  private view: Uint8Array | undefined;
  /** Every byte the script wrote, kept or not. */
  bytes = 0;
  /** Reads so far (stopReadingOnceGroupGone watches it for quiet). */
  reads = 0;

  constructor(readonly cap: number = stdoutCap()) {}

  /** Keeps `chunk` (a copy of it when the reader `reuses` its memory for the next read). */
  push(chunk: Uint8Array, reuses = false): void {
    this.reads++;
    const at = this.bytes;
    this.bytes += chunk.byteLength;
    if (this.bytes > this.cap) {
      this.chunks = [];
      this.store?.resize(0); // Node gives the memory back at once
      this.store = this.view = undefined;
    } else if (this.store) {
      if (this.bytes > this.store.byteLength) this.store.resize(Math.min(this.cap, this.bytes + GROW_BYTES));
      this.view!.set(chunk, at);
    } else {
      this.chunks.push(reuses ? Uint8Array.from(chunk) : chunk);
      if (this.bytes > SMALL_BYTES) this.gather();
    }
  }

  /** True once the script wrote more than the cap. */
  get over(): boolean {
    return this.bytes > this.cap;
  }

  /** What was kept (a small stdout decoded now, as it always was; a large one when needed); the capture lets go of it. */
  take(): StdoutText {
    const { store, chunks } = this;
    this.store = this.view = undefined;
    this.chunks = [];
    // Shrunk once decoded: Node gives its memory back at once, not at the next collection.
    if (store) return new CapturedStdout(Buffer.from(store, 0, this.bytes), () => store.resize(0));
    const bytes = chunks.length === 1 ? asBuffer(chunks[0]!) : Buffer.concat(chunks, this.bytes);
    return stdoutOfText(bytes.toString("utf8"), this.bytes);
  }

  /**
   * The chunks so far into one resizable buffer that may grow to the cap: the system reserves its
   * addresses at once but gives it memory only as it is written, and it grows in place, never
   * copied. Where a runtime has no such buffer, or will not reserve it, the chunks stay chunks.
   */
  private gather(): void {
    try {
      const store = new (ArrayBuffer as unknown as new (length: number, options: { maxByteLength: number }) => GrowingStore)(2 * this.bytes, { maxByteLength: this.cap });
      if (!store.resizable) return;
      this.store = store;
    } catch {
      return;
    }
    // A view without a length follows the buffer as it grows.
    this.view = new Uint8Array(this.store);
    let at = 0;
    for (const chunk of this.chunks) {
      this.view.set(chunk, at);
      at += chunk.byteLength;
    }
    this.chunks = [];
  }
}

/**
 * How far the buffer grows past what it holds. Little: shrinking it (once decoded) zeroes what it
 * gives back, and pages never written would be taken then.
 */
const GROW_BYTES = 8 * 1024 * 1024;

/** Up to this size a stdout is kept as the chunks read and decoded when the script ends. */
const SMALL_BYTES = 1024 * 1024;

function asBuffer(chunk: Uint8Array): Buffer {
  return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

const continues = (byte: number): boolean => (byte & 0xc0) === 0x80;

/**
 * A large stdout, decoded as Buffer#toString("utf8") does: all of it once, when asked (its bytes
 * are let go then), or only its ends. A UTF-8 decoder (Buffer#toString, every WHATWG one) starts
 * afresh at a byte that does not continue a character (whose top bits are not 0b10) and at one that follows
 * three continuation bytes, and whether a character is whole shows within four bytes of its start.
 */
class CapturedStdout implements StdoutText {
  private decoded: string | undefined;
  private buffer: Buffer | undefined;
  private free: (() => void) | undefined;
  readonly bytes: number;

  /** `free` gives the memory under `buffer` back (called once, on release). */
  constructor(buffer: Buffer, free: () => void) {
    this.buffer = buffer;
    this.free = free;
    this.bytes = buffer.length;
  }

  text(): string {
    if (this.decoded === undefined) {
      this.decoded = this.data.toString("utf8");
      this.release();
    }
    return this.decoded;
  }

  release(): void {
    this.buffer = undefined;
    this.free?.();
    this.free = undefined;
  }

  /** The bytes, until released: reading them after that is loopx's own mistake, said loudly. */
  private get data(): Buffer {
    if (this.buffer === undefined) throw new Error("loopx: a script's stdout was read after it was let go");
    return this.buffer;
  }

  edges(): readonly [number, number] {
    if (this.decoded !== undefined) return stdoutOfText(this.decoded, this.bytes).edges();
    const first = this.data.findIndex((byte) => !isJsonSpace(byte));
    const last = this.data.findLastIndex((byte) => !isJsonSpace(byte));
    return first < 0 ? [-1, -1] : [this.data[first]!, this.data[last]!];
  }

  prefix(units: number): string {
    // Each of the first `units` units comes from at most three bytes.
    const end = 3 * units + 4;
    if (this.decoded !== undefined || end >= this.bytes) return this.text().slice(0, units);
    return this.data.toString("utf8", 0, end).slice(0, units);
  }

  suffix(units: number): { text: string; whole: boolean } {
    // Each unit takes at most three bytes; at most three are skipped to start on a character.
    let start = this.decoded === undefined ? this.bytes - 3 * units - 3 : 0;
    if (start <= 0) return { text: this.text(), whole: true };
    for (let skipped = 0; skipped < 3 && continues(this.data[start]!); skipped++) start++;
    return { text: this.data.toString("utf8", start), whole: false };
  }

  utf8Length(): number {
    return this.decoded === undefined && isUtf8(this.data) ? this.bytes : Buffer.byteLength(this.text());
  }

  *utf8Chunks(): Generator<Uint8Array> {
    if (this.decoded === undefined && isUtf8(this.data)) yield this.data;
    else yield* utf8Slices(this.text());
  }

  /**
   * Its known fields when it is one JSON object (core/json-fields.ts), its text never decoded
   * whole. A string `result` over 1 MiB stays bytes: its escapes undone where it lies (its UTF-8
   * is never longer than its JSON), it becomes a text of its own, which takes over the bytes (the
   * stdout reads no more: the object no longer lies in them). Such a result that is not valid
   * UTF-8 or holds a lone surrogate (\ud800) is decoded to a string, as JSON.parse makes it.
   */
  readObject(): ObjectRead | undefined {
    if (this.decoded !== undefined) return undefined;
    const data = this.data;
    const scanned = scanJsonObject(data, KNOWN_FIELDS);
    if (scanned === undefined) return undefined;
    const { object, result: span } = scanned;
    if (span === undefined) return { object };
    if (span.string === undefined) return { object, result: { value: JSON.parse(data.toString("utf8", span.start, span.end)) } };
    if (span.string.loneSurrogate || !isUtf8(data.subarray(span.start, span.end))) return { object, result: { value: decodeJsonString(data, span.start, span.end) } };
    const end = span.string.escapes ? unescapeInPlace(data, span.start, span.end) : span.end;
    // Unescaped where it lay, the object is no longer in the bytes: a read of them now is loopx's own mistake.
    if (span.string.escapes) this.buffer = undefined;
    if (end - span.start <= LARGE_RESULT_BYTES) return { object, result: { value: data.toString("utf8", span.start, end) } };
    const text = new CapturedStdout(data.subarray(span.start, end), this.free ?? (() => undefined));
    this.buffer = this.free = undefined;
    return { object, result: { text } };
  }
}

/** A string result over this size is kept as bytes, not decoded (the CLI never reads it whole). */
const LARGE_RESULT_BYTES = 1024 * 1024;
