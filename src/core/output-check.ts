import { KNOWN_FIELDS } from "./output.js";
import type { StdoutText } from "./stdout-text.js";
import { shownText } from "./untrusted-text.js";

/**
 * Near misses of a structured output (loopx's own addition to spec §2.3, whose reading it never
 * changes): stdout that is not one JSON object but whose last line is one with a known field
 * (`echo "committing..."; loopx output --stop`), and a known field of the wrong type or case
 * (`{"stop":"true"}`, `{"Stop":true}`, `{"goto":5}`). The spec takes these as a raw result or
 * ignores the field, so an unattended loop would go on for ever without a word; the run says so
 * once per script (parts/warnings.ts). Pure; cheap when there is nothing to say: text whose last
 * non-blank character is not `}` is never parsed.
 */

/** Longest last line looked at: a JSON output line is short; a huge one is not a near miss. */
const MAX_LINE = 64 * 1024;

const lowerKnown = new Map<string, string>(KNOWN_FIELDS.map((field) => [field, field]));

/** What is wrong with `object`'s known fields, if anything. */
function fieldProblems(object: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const key of Object.keys(object)) {
    const known = lowerKnown.get(key.toLowerCase());
    if (known !== undefined && known !== key) problems.push(`"${shownText(key.slice(0, 20))}" is not a field loopx reads (fields are lower case: "${known}")`);
  }
  if (Object.hasOwn(object, "stop") && object.stop !== true && object.stop !== false) {
    problems.push(`"stop" is ${describe(object.stop)}, and only true stops the loop`);
  }
  if (Object.hasOwn(object, "goto") && typeof object.goto !== "string") {
    problems.push(`"goto" is ${describe(object.goto)}, not a string like "workflow:script", so it is ignored`);
  }
  return problems;
}

function describe(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return shownText(text.length > 24 ? `${text.slice(0, 24)}…` : text);
}

/** How much of stdout's end is looked at first: a line of MAX_LINE and room for blanks after it. */
const TAIL_UNITS = 2 * MAX_LINE;

/**
 * The last non-blank line of `text` (a suffix of stdout; `whole` when all of it) when it ends in
 * `}`, undefined when it is not such a line, or "unknown" when the suffix does not tell (it holds
 * only blanks, or a line that may start before it).
 */
function lastObjectLineOf(text: string, whole: boolean): string | undefined | "unknown" {
  let end = text.length;
  while (end > 0 && /\s/.test(text[end - 1]!)) end--;
  if (end === 0) return whole ? undefined : "unknown";
  if (text[end - 1] !== "}") return undefined;
  const start = text.lastIndexOf("\n", end - 1) + 1;
  if (start === 0 && !whole) return end > MAX_LINE ? undefined : "unknown";
  if (start === 0 || end - start > MAX_LINE) return undefined;
  const line = text.slice(start, end).trim();
  return line.startsWith("{") ? line : undefined;
}

/** The last non-blank line of `stdout` when it ends in `}`, undefined otherwise (nothing parsed); a huge stdout is read from its end. */
function lastObjectLine(stdout: StdoutText): string | undefined {
  const tail = stdout.suffix(TAIL_UNITS);
  const line = lastObjectLineOf(tail.text, tail.whole);
  return line === "unknown" ? (lastObjectLineOf(stdout.text(), true) as string | undefined) : line;
}

/**
 * One line saying what looks mistaken in `stdout` (its JSON object `object` when it was one, from
 * core/output.ts readOutput), or undefined when nothing does.
 */
export function outputNearMiss(stdout: StdoutText, object: Record<string, unknown> | undefined): string | undefined {
  if (object !== undefined) {
    const problems = fieldProblems(object);
    return problems.length > 0 ? `its output ${problems.join("; ")}` : undefined;
  }
  const line = lastObjectLine(stdout);
  if (line === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const fields = Object.keys(value).filter((key) => lowerKnown.has(key.toLowerCase()));
  if (fields.length === 0) return undefined;
  const shown = shownText(line.length > 60 ? `${line.slice(0, 60)}…` : line);
  return (
    `its stdout is not one JSON object (text comes before its last line ${shown}), so all of it is a plain result ` +
    `and that line's ${fields.map((field) => `"${shownText(field.slice(0, 20))}"`).join(", ")} is ignored: write only the JSON object to stdout (other output to stderr: echo ... >&2)`
  );
}
