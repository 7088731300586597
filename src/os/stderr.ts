import { fs, nodeModule } from "./builtins.js";
import { writeAllSync } from "./write-all.js";

// On bin.js's path (delegation warnings): the plain built-ins, not their ESM facades.
const { fstatSync, readSync, openSync, closeSync } = fs;

/**
 * loopx's own lines on stderr, and the one rule they follow: each starts on a fresh line, even
 * after a script whose stderr ended without a newline (`fatal: could not connect` then
 * `loopx: ...` must not share a line). How loopx knows where the previous output ended depends on
 * what its stderr is, decided once:
 * - a terminal: scripts write to it directly (never take a script's terminal away from it), so
 *   loopx cannot see the last byte; it writes as many spaces as the terminal is wide, then a
 *   carriage return: from column 0 that stays on the line (a terminal defers the wrap at the last
 *   column) and `\r` goes back to its start; from any other column the spaces wrap to a new line.
 *   No escape sequence, nothing visible;
 * - a regular file (`2>log`): its last byte, read back;
 * - a pipe (CI, `2>&1 | tee`): scripts' stderr passes through loopx (stderr-relay.ts), which forwards it
 *   as it comes and so knows its last byte; a pipe for a pipe changes nothing a script can see;
 * - anything else (/dev/null): nobody reads it; no fresh-line logic.
 */

export type StderrKind = "terminal" | "file" | "pipe" | "other";

let kind: StderrKind | undefined;

/** What this process's fd 2 is. */
export function stderrKind(): StderrKind {
  if (kind !== undefined) return kind;
  try {
    const { isatty } = nodeModule.createRequire(import.meta.url)("node:tty") as typeof import("node:tty");
    if (isatty(2)) kind = "terminal";
    else {
      const stat = fstatSync(2);
      kind = stat.isFile() ? "file" : stat.isFIFO() || stat.isSocket() ? "pipe" : "other";
    }
  } catch {
    kind = "other";
  }
  return kind;
}

/** Set once a script has run with this stderr: the terminal's cursor may then be anywhere. */
let scriptsWrote = false;
/** The last byte written to stderr through loopx (forwarded script output or loopx's own lines). */
let lastByte = 0x0a;

/** A script is about to run with loopx's stderr as its own (terminal, file). */
export function noteScriptStderr(): void {
  scriptsWrote = true;
}

/**
 * Writes all of `data` to fd 2, synchronously, so that it stays in order with forwarded script
 * output. A stderr that is gone (EPIPE) costs the output only.
 */
export function writeStderr(data: string | Uint8Array): void {
  if (data.length === 0) return;
  try {
    writeAllSync(2, data);
  } catch {
    return;
  }
  lastByte = typeof data === "string" ? data.charCodeAt(data.length - 1) : data[data.length - 1]!;
}

/** What to write before a line of loopx's own so that it starts on a fresh line. */
function freshLine(): string {
  switch (stderrKind()) {
    case "pipe":
      return lastByte === 0x0a ? "" : "\n";
    case "file":
      return fileEndsWithoutNewline() ? "\n" : "";
    case "terminal": {
      if (!scriptsWrote) return "";
      const columns = (process.stderr as { columns?: number }).columns || Number(process.env.COLUMNS) || 80;
      return `${" ".repeat(columns)}\r`;
    }
    default:
      return "";
  }
}

function fileEndsWithoutNewline(): boolean {
  try {
    const size = fstatSync(2).size;
    if (size === 0) return false;
    const last = readStderrFile(size - 1, 1);
    return last !== undefined && last.length === 1 && last[0] !== 0x0a;
  } catch {
    return false;
  }
}

/**
 * `length` bytes at `position` of the file loopx's stderr is (`2>log`), or undefined when it cannot
 * be read. The one place fd 2 is reopened: through a new descriptor, because fd 2 is usually
 * write-only (Linux /proc; elsewhere nothing is read). Used for the fresh-line check above and for
 * a failed script's last stderr lines (runtime/stderr-relay.ts).
 */
export function readStderrFile(position: number, length: number): Buffer | undefined {
  try {
    const fd = openSync("/proc/self/fd/2", "r");
    try {
      const buffer = Buffer.alloc(length);
      const read = readSync(fd, buffer, 0, length, position);
      return buffer.subarray(0, read);
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

/** One line of loopx's own on stderr (`text` without its newline), on a fresh line. */
export function stderrLine(text: string): void {
  writeStderr(`${freshLine()}${text}\n`);
  scriptsWrote = false;
}

/** Writes one `loopx: warning: ...` line to stderr. loopx never writes warnings to stdout. */
export function warnToStderr(message: string): void {
  stderrLine(`loopx: warning: ${message}`);
}
