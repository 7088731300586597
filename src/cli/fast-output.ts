/**
 * `loopx output` in its everyday forms, without loading the CLI: bash scripts call
 * `$LOOPX_BIN output ...` once per iteration, so this path loads nothing but itself and
 * core/output.js. Handles only `--result <v>` / `--result=<v>`, `--goto <v>` / `--goto=<v>` (each
 * at most once, value not starting with "-") and `--stop` (at most once), at least one of them;
 * for anything else it returns false and the full CLI answers (help, errors, odd values), so
 * behaviour is the CLI's exactly.
 */
import { serializeOutput, type Output } from "../core/output.js";
import { writeAllSync } from "../os/write-all.js";

function parse(args: string[]): Output | undefined {
  const output: Output = {};
  for (let i = 0; i < args.length; i++) {
    const token = args[i]!;
    if (token === "--stop") {
      if (output.stop) return undefined;
      output.stop = true;
      continue;
    }
    const match = /^--(result|goto)(?:=(.*))?$/s.exec(token);
    if (!match) return undefined;
    const field = match[1] as "result" | "goto";
    const value = match[2] ?? args[++i];
    if (value === undefined || value.startsWith("-") || output[field] !== undefined) return undefined;
    output[field] = value;
  }
  return output.result === undefined && output.goto === undefined && !output.stop ? undefined : output;
}

/** Writes the output line and returns true, or returns false (nothing written) for the full CLI. */
export function fastOutput(args: string[]): boolean {
  const output = parse(args);
  if (!output) return false;
  try {
    writeAllSync(1, `${serializeOutput(output)}\n`);
  } catch (error) {
    // The reader is gone: as the CLI treats it, exit 0 quietly.
    if ((error as NodeJS.ErrnoException).code !== "EPIPE") throw error;
  }
  return true;
}
