import { closeSync, openSync, readFileSync, writeSync } from "node:fs";
import { RESULT_EXCERPT_BYTES } from "../core/events.js";
import type { RunPart } from "../core/run-part.js";
import { inputBytes } from "../core/stdout-text.js";
import { inputPath } from "./paths.js";

/**
 * The last piped input, kept with the run record (loopx's own addition) so that `loopx runs
 * resume` can give a script exactly the bytes it got: before a script that gets a goto's result
 * of more than 4 KiB on stdin starts (a smaller one is whole in the record's iteration.end), `<records dir>/<run id>.input` is rewritten (mode 0600, in the records' 0700
 * directory) with a header line — the iteration that gets it and its size — then the bytes. Runs
 * that pipe nothing write nothing. Inputs over 16 MiB are not kept; the header says so.
 */

const KEPT_INPUT_BYTES = 16 * 1024 * 1024;


/** The header line of an input file. */
export interface InputHeader {
  /** The iteration that gets these bytes on stdin. */
  n: number;
  bytes: number;
  /** False when the input was larger than KEPT_INPUT_BYTES and only its size is kept. */
  kept: boolean;
}

/** The kept input of a run: its header and its bytes (when kept), or undefined when there is none. */
export function readKeptInput(dir: string, runId: string): { header: InputHeader; data: Buffer } | undefined {
  let file: Buffer;
  try {
    file = readFileSync(inputPath(dir, runId));
  } catch {
    return undefined;
  }
  const newline = file.indexOf(10);
  if (newline < 0) return undefined;
  try {
    const header = JSON.parse(file.subarray(0, newline).toString("utf8")) as InputHeader;
    if (!Number.isSafeInteger(header.n) || !Number.isSafeInteger(header.bytes)) return undefined;
    return { header, data: file.subarray(newline + 1) };
  } catch {
    return undefined;
  }
}

export function runInputPart(dir: string): RunPart {
  let path: string | undefined;
  return {
    onEvent(event) {
      if (event.type === "run.start" || event.type === "run.resume") path = inputPath(dir, event.run);
    },
    beforeScript(next) {
      // A result the record holds whole (its iteration.end keeps 4 KiB) needs no copy.
      if (next.stdin === undefined || path === undefined) return;
      // Measured, and encoded only when kept: a huge input is never copied to be counted.
      const bytes = inputBytes(next.stdin);
      if (bytes <= RESULT_EXCERPT_BYTES) return;
      const kept = bytes <= KEPT_INPUT_BYTES;
      const header: InputHeader = { n: next.n, bytes, kept };
      const data = kept ? (typeof next.stdin === "string" ? Buffer.from(next.stdin, "utf8") : Buffer.concat([...next.stdin.utf8Chunks()])) : undefined;
      try {
        const fd = openSync(path, "w", 0o600);
        try {
          const line = Buffer.from(`${JSON.stringify(header)}\n`);
          writeSync(fd, data ? Buffer.concat([line, data]) : line);
        } finally {
          closeSync(fd);
        }
      } catch {
        // Without it, a resume that needs this input says so; the run goes on.
      }
    },
  };
}
