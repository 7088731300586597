/**
 * Text loopx did not write itself — a script's result, error or note, a goto value, anything read
 * back from a run record (which any process of the user can write) — shown on a terminal without
 * being obeyed: control characters (C0, DEL, C1), and the Unicode characters that reorder or break
 * lines (bidi controls, line/paragraph separators), are shown escaped. `\e[2J` cannot clear the
 * screen and a cut colour sequence cannot leave the terminal red. Printable text is unchanged.
 */

const UNSAFE = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
/** The same class, for a quick test (no /g state): most text has nothing to escape. */
const HAS_UNSAFE = new RegExp(UNSAFE.source);

const NAMED: Record<string, string> = { "\x1b": "\\e", "\n": "\\n", "\r": "\\r", "\t": "\\t" };

function escapeChar(char: string): string {
  const named = NAMED[char];
  if (named !== undefined) return named;
  const code = char.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
}

/** `text` with every control character shown as an escape (`\e`, `\n`, `\x07`, `\u202e`). */
export function shownText(text: string): string {
  return HAS_UNSAFE.test(text) ? text.replace(UNSAFE, escapeChar) : text;
}

/**
 * One JSON line for `--json` output: JSON.stringify escapes C0 controls but leaves DEL, C1 and
 * the line separators as they are; here they are `\u` escapes too (the same JSON value).
 */
export function jsonLine(value: unknown): string {
  return JSON.stringify(value).replace(/[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
