import { stdoutOfText, type ObjectRead, type StdoutText } from "./stdout-text.js";

/** One iteration's structured output (spec §2.3). */
export interface Output {
  result?: string;
  goto?: string;
  stop?: boolean;
}

/** The fields of a structured output (spec §2.3). */
export const KNOWN_FIELDS = ["result", "goto", "stop"] as const;

/**
 * Parses a script's stdout per spec §2.3. Never throws. Only a top-level JSON object with at least
 * one known field is structured; anything else becomes `{ result: <raw stdout> }`.
 */
export function parseOutput(stdout: string): Output {
  return readOutput(stdoutOfText(stdout)).output;
}

/** Raw results over this size are decoded only when read (the CLI never reads them). */
const DEFERRED_RESULT_BYTES = 1024 * 1024;

/** The undecoded stdout of each raw result that is decoded only when read. */
const deferred = new WeakMap<Output, StdoutText>();

/**
 * The stdout behind `output`'s result when that result is decoded only once read (a raw result
 * over 1 MiB): run-events.ts takes the record's excerpt and size from its ends instead.
 */
export function deferredResult(output: Output): StdoutText | undefined {
  return deferred.get(output);
}

/** `output` as plain data, its result decoded: what the API hands over. */
export function settledOutput(output: Output): Output {
  return deferred.has(output) ? { ...output } : output;
}

function rawOutput(stdout: StdoutText): Output {
  if (stdout.bytes <= DEFERRED_RESULT_BYTES) return { result: stdout.text() };
  return withDeferredResult({}, stdout);
}

/** `output` with `text` as its result, decoded only when read. */
function withDeferredResult(output: Output, text: StdoutText): Output {
  Object.defineProperty(output, "result", { enumerable: true, configurable: true, get: () => text.text() });
  deferred.set(output, text);
  return output;
}

/** Lets go of the bytes of `output`'s result when it is still held as bytes (the loop is done with it). */
export function releaseResult(output: Output): void {
  deferred.get(output)?.release();
}

/** The output of a stdout that is one JSON object, from its fields read as bytes (ObjectRead). */
function fromObjectRead(stdout: StdoutText, read: ObjectRead): { output: Output; object: Record<string, unknown> } {
  const { object, result } = read;
  if (!KNOWN_FIELDS.some((field) => Object.hasOwn(object, field))) return { output: rawOutput(stdout), object };
  const output: Output = {};
  if (result !== undefined) {
    if ("text" in result) withDeferredResult(output, result.text);
    else output.result = coerceToString(result.value);
  }
  if (typeof object.goto === "string") output.goto = object.goto;
  if (object.stop === true) output.stop = true;
  return { output, object };
}

/**
 * parseOutput, with the JSON object stdout was when it was one (structured or not), for the
 * near-miss check of core/output-check.ts: it needs what the spec's reading leaves out. Only an
 * output that begins with `{` and ends with `}` (JSON whitespace aside) can be an object: any other
 * is a raw result without being decoded here.
 */
export function readOutput(stdout: StdoutText): { output: Output; object?: Record<string, unknown> } {
  if (stdout.bytes === 0) return { output: { result: "" } };
  const [first, last] = stdout.edges();
  if (first !== 0x7b || last !== 0x7d) return { output: rawOutput(stdout) };
  if (stdout.readObject) {
    // Held as bytes (a large stdout): read without a decoded copy of the whole text.
    const read = stdout.readObject();
    return read === undefined ? { output: rawOutput(stdout) } : fromObjectRead(stdout, read);
  }
  const text = stdout.text();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { output: { result: text } };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { output: { result: text } };
  const record = value as Record<string, unknown>;
  if (!KNOWN_FIELDS.some((field) => Object.hasOwn(record, field))) return { output: { result: text }, object: record };

  const output: Output = {};
  if (Object.hasOwn(record, "result")) output.result = coerceToString(record.result);
  if (typeof record.goto === "string" && Object.hasOwn(record, "goto")) output.goto = record.goto;
  if (record.stop === true && Object.hasOwn(record, "stop")) output.stop = true;
  return { output, object: record };
}

/**
 * `String(value)` as the spec says, except that JSON such as `{"toString": 1}` makes `String()`
 * throw; such an object reads as what `String()` gives for a plain object.
 */
function coerceToString(value: unknown): string {
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/** Serializes an Output the way `loopx output` and `output()` emit it: known fields only, in order. */
export function serializeOutput(output: Output): string {
  const ordered: Output = {};
  if (output.result !== undefined) ordered.result = output.result;
  if (output.goto !== undefined) ordered.goto = output.goto;
  if (output.stop !== undefined) ordered.stop = output.stop;
  return JSON.stringify(ordered);
}
