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
  return readOutput(stdout).output;
}

/**
 * parseOutput, with the JSON object stdout was when it was one (structured or not), for the
 * near-miss check of core/output-check.ts: it needs what the spec's reading leaves out.
 */
export function readOutput(stdout: string): { output: Output; object?: Record<string, unknown> } {
  if (stdout.length === 0) return { output: { result: "" } };
  let value: unknown;
  try {
    value = JSON.parse(stdout);
  } catch {
    return { output: { result: stdout } };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { output: { result: stdout } };
  const record = value as Record<string, unknown>;
  if (!KNOWN_FIELDS.some((field) => Object.hasOwn(record, field))) return { output: { result: stdout }, object: record };

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
