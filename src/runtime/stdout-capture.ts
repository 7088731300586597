/**
 * What a script writes to stdout, as loopx keeps it until the script ends (node.ts and bun.ts
 * read into it). Above the cap (LOOPX_MAX_STDOUT, default 400 MiB; loopx's own addition) nothing
 * more is kept — what was kept is let go at once — but the pipe is still read to its end (the
 * script is neither blocked nor killed), and the iteration fails with one line naming the script,
 * the size and the cap (script-runner.ts): never the runtime's own "Cannot create a string longer
 * than ..." error, whose limit (~512 M characters) a text this size would come close to.
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

export class StdoutCapture {
  private chunks: Uint8Array[] = [];
  /** Every byte the script wrote, kept or not. */
  bytes = 0;
  /** Reads so far (stopReadingOnceGroupGone watches it for quiet). */
  reads = 0;

  constructor(readonly cap: number = stdoutCap()) {}

  push(chunk: Uint8Array): void {
    this.reads++;
    this.bytes += chunk.byteLength;
    if (this.bytes > this.cap) this.chunks = [];
    else this.chunks.push(chunk);
  }

  /** True once the script wrote more than the cap. */
  get over(): boolean {
    return this.bytes > this.cap;
  }

  /** What was kept, as one buffer; the chunks are let go (read it once). */
  take(): Buffer {
    const chunks = this.chunks;
    this.chunks = [];
    if (chunks.length === 1) return Buffer.from(chunks[0]!.buffer, chunks[0]!.byteOffset, chunks[0]!.byteLength);
    const out = Buffer.allocUnsafe(chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0));
    let at = 0;
    for (let i = 0; i < chunks.length; i++) {
      out.set(chunks[i]!, at);
      at += chunks[i]!.byteLength;
      chunks[i] = EMPTY; // each copied chunk can be collected while the rest are copied
    }
    return out;
  }
}

const EMPTY = new Uint8Array(0);
