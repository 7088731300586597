/**
 * Output in pieces (pure): lines gathered and handed to a writer a few thousand at a time, so that
 * a 100,000-line `runs show` is never one string.
 */

/**
 * Characters per write, about: each piece stays an ordinary heap string (past V8's large-object
 * size, ~128 KiB, a string costs far more to make and collect; a bar's characters take two bytes).
 */
const CHUNK_CHARS = 32 * 1024;

/** Lines gathered and written about CHUNK_CHARS at a time, each with its newline. */
export class ChunkedLines {
  private lines: string[] = [];
  private chars = 0;
  constructor(private readonly write: (text: string) => void) {}

  add(line: string): void {
    this.lines.push(line);
    this.chars += line.length + 1;
    if (this.chars >= CHUNK_CHARS) this.flush();
  }

  flush(): void {
    if (this.lines.length === 0) return;
    this.write(`${this.lines.join("\n")}\n`);
    this.lines = [];
    this.chars = 0;
  }
}
