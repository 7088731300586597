import { serializeOutput, type Output } from "../core/output.js";
import { writeAllSync } from "../runtime/write-all.js";

// A note in the run's record (loopx's own addition), with output and input: the standalone
// binary's "loopx" for scripts is this module, bundled.
export { note } from "../records/note.js";

/** Builds the Output that `output(value)` emits (spec §6.4); throws for values it rejects. */
export function outputFromValue(value: unknown): Output {
  if (value === null || value === undefined) throw new TypeError(`output() needs a value, got ${value}`);
  if (typeof value !== "object") return { result: String(value) };
  const record = value as Record<string, unknown>;
  const picked: Record<string, unknown> = {};
  for (const field of ["result", "goto", "stop"] as const) {
    if (record[field] !== undefined) picked[field] = record[field];
  }
  if (Object.keys(picked).length === 0) {
    throw new TypeError("output() needs an object with at least one of result, goto or stop set");
  }
  return picked as Output;
}

/**
 * Emits structured output and ends the script with exit code 0 (spec §6.4). Nothing after the
 * call runs; stdout is flushed first.
 */
export function output(value: unknown): never {
  const text = serializeOutput(outputFromValue(value));
  writeAllSync(1, text); // process.exit must not lose any of it
  process.exit(0);
}

let cachedInput: Promise<string> | undefined;

/** Reads the whole of stdin once (the previous script's `result` after a goto, else ""). */
export function input(): Promise<string> {
  cachedInput ??= (async () => {
    if (process.stdin.isTTY) return "";
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
    return Buffer.concat(chunks).toString("utf8");
  })();
  return cachedInput;
}
