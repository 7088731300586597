/** Writes one `loopx: warning: ...` line to stderr. loopx never writes warnings to stdout. */
export function warnToStderr(message: string): void {
  process.stderr.write(`loopx: warning: ${message}\n`);
}
