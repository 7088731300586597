/**
 * Errors that loopx reports to the user. Every one of them becomes a single line on stderr
 * (`loopx: <message>`) and an exit code; none of them should ever surface as a stack trace.
 */
export class LoopxError extends Error {
  /** Process exit code the CLI uses for this error (spec §12: 1 for every error). */
  readonly exitCode: number = 1;
  constructor(message: string) {
    super(message);
    this.name = "LoopxError";
  }
}

/** A malformed command line (spec §12 "usage errors"). Detected before anything touches disk. */
export class UsageError extends LoopxError {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** A script exited non-zero, was killed, or could not be started (spec §7.2). */
export class ScriptFailedError extends LoopxError {
  constructor(
    message: string,
    /** How the script ended: its exit code, or the signal that killed it (both null: never started). */
    readonly script: { exitCode: number | null; signal: string | null; stdoutBytes: number } = { exitCode: null, signal: null, stdoutBytes: 0 },
  ) {
    super(message);
    this.name = "ScriptFailedError";
  }
}
