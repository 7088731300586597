import type { RunHookEvent } from "../core/events.js";
import { formatDuration } from "../core/duration.js";
import { shownText } from "../core/untrusted-text.js";
import { formatElapsed } from "./wording.js";

/**
 * The end-of-run hook's outcome in words (pure; `--on-end`, loopx's own addition): the warning a
 * failed hook gets, its lines in `runs show` and `runs tail`, and what the dashboard shows. The
 * hook's output is text loopx did not write: shown escaped, never obeyed.
 */

/** Lines of the hook's output `runs show` and the dashboard show (the record keeps its first 4 KiB). */
const HOOK_OUTPUT_LINES = 5;
/** Characters of one such line, at most. */
const HOOK_LINE_CHARS = 200;

/** How the hook failed, in words ("exited with code 3"); undefined when it exited 0. */
export function hookFailure(result: Pick<RunHookEvent, "error" | "timedOut" | "signal" | "exitCode">, timeoutMs?: number): string | undefined {
  if (result.error !== undefined) return result.error;
  if (result.timedOut) return `was ended at its time limit${timeoutMs === undefined ? "" : ` (${formatDuration(timeoutMs)}; LOOPX_ON_END_TIMEOUT)`}`;
  if (result.signal !== null) return `was killed by ${result.signal}`;
  if (result.exitCode !== 0) return `exited with code ${result.exitCode}`;
  return undefined;
}

/** The first lines of the hook's output (blank lines dropped), each cut to HOOK_LINE_CHARS, as written (not yet escaped). */
export function hookOutputLines(output: unknown): { lines: string[]; more: boolean } {
  const all = typeof output === "string" ? output.split("\n").filter((line) => line.trim() !== "") : [];
  const lines = all.slice(0, HOOK_OUTPUT_LINES).map((line) => {
    const chars = [...line];
    return chars.length > HOOK_LINE_CHARS ? `${chars.slice(0, HOOK_LINE_CHARS).join("")}…` : line;
  });
  return { lines, more: all.length > HOOK_OUTPUT_LINES };
}

/** "on-end hook (run by loopx) · exit 0 · 312ms", or "... · exited with code 7 · 1.2s". */
function describeHookHead(event: RunHookEvent): string {
  const by = event.by === "guardian" ? "run by the guardian after loopx died" : "run by loopx";
  const failure = hookFailure(event);
  const duration = typeof event.durationMs === "number" ? ` · ${formatElapsed(event.durationMs)}` : "";
  return shownText(`on-end hook (${by}) · ${failure ?? "exit 0"}${duration}`);
}

/** `runs show`'s lines for a hook: its head, then the first lines of its output. */
export function describeHook(event: RunHookEvent): string[] {
  const { lines, more } = hookOutputLines(event.output);
  return [describeHookHead(event), ...lines.map((line) => `  output │ ${shownText(line)}`), ...(more ? ["  output │ … (all of it: loopx runs show --json)"] : [])];
}
