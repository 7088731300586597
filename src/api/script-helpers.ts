import { serializeOutput, type Output } from "../core/output.js";
import { lazyFs } from "../os/lazy-fs.js";
import { writeAllSync } from "../os/write-all.js";

// A note in the run's record (loopx's own addition), with output and input (script.ts).
export { note } from "../records/note.js";
// A receipt of what the script's work used (loopx's own addition).
export { receipt } from "../receipts/send.js";
// A progress signal for the run's stall sensor, --stall-after (loopx's own addition).
export { progress } from "../stall/signal.js";

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

const bun = (globalThis as { Bun?: { stdin: { text(): Promise<string> } } }).Bun;

async function readStdin(): Promise<string> {
  if (bun) {
    // Under Bun, process.stdin costs a script ~20 ms to set up (and node:tty, for isatty, ~15 ms);
    // Bun.stdin reads fd 0 directly. A terminal (or /dev/null, which has nothing to read) is a
    // character device.
    try {
      if (lazyFs().fstatSync(0).isCharacterDevice()) return "";
    } catch {
      return ""; // no fd 0 at all
    }
    return bun.stdin.text();
  }
  if (process.stdin.isTTY) return "";
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}

/** Reads the whole of stdin once (the previous script's `result` after a goto, else ""). */
export function input(): Promise<string> {
  cachedInput ??= readStdin();
  return cachedInput;
}
