import type { RunPart } from "../core/run-part.js";

/**
 * Shows loopx's own `warning` events (a near-miss output, a CRLF script, a held stdout: see
 * core/events.ts WarningEvent) as one `loopx: warning:` line each on stderr, never on stdout.
 * The record part keeps the same event. Every run has it; it costs one type test per event.
 */
export function warningsPart(): RunPart {
  let warn: ((message: string) => void) | undefined;
  return {
    begin(controls) {
      warn = (message) => controls.warn(message);
    },
    onEvent(event) {
      if (event.type === "warning") warn?.(event.message);
    },
  };
}
