/**
 * Errors that loopx reports to the user. Every one of them becomes a single line on stderr
 * (`loopx: <message>`) and an exit code; none of them should ever surface as a stack trace.
 */
export class LoopxError extends Error {
  /**
   * Process exit code the CLI uses for this error (spec §12: 1 for every error; loopx's own
   * additions may choose another, as TimeoutError's 124).
   */
  readonly exitCode: number;
  /**
   * Set once the user has been told (the progress summary line carries the reason): the CLI then
   * prints no second line for the same failure, and exits with `exitCode`.
   */
  reported = false;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.name = "LoopxError";
    this.exitCode = exitCode;
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
    readonly script: { exitCode: number | null; signal: string | null; stdoutBytes: number; /** its last stderr lines, where loopx saw them */ stderr?: string } = { exitCode: null, signal: null, stdoutBytes: 0 },
    /** One line on what likely made it fail (a bash script with CRLF line endings), if loopx knows. */
    readonly hint?: string,
  ) {
    super(message);
    this.name = "ScriptFailedError";
  }
}

/**
 * A time limit expired (`--timeout` / `--max-time`, RunOptions.timeout / maxTime): loopx's own
 * addition. Exit code 124, the convention of timeout(1).
 */
export class TimeoutError extends LoopxError {
  constructor(message: string) {
    super(message, 124);
    this.name = "TimeoutError";
  }
}

/**
 * A budget was reached (`--max-cost` / `--max-tokens`, RunOptions.maxCost / maxTokens): loopx's own
 * addition. No further script started; the run ended "budget". Exit code 3 (BUDGET_EXIT_CODE).
 */
export class BudgetError extends LoopxError {
  constructor(message: string, exitCode: number) {
    super(message, exitCode);
    this.name = "BudgetError";
  }
}

const FS_REASONS: Record<string, string> = {
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EISDIR: "is a directory",
  ENOENT: "no such file or directory",
  ENOTDIR: "not a directory",
  ELOOP: "too many levels of symbolic links",
  EIO: "input/output error",
};

/**
 * The OS reason of a failed file-system call, for one-line messages: "permission denied (EACCES)".
 * Node and Bun word their messages differently; the errno code is what both agree on.
 */
export function fsReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  const text = (code && FS_REASONS[code]) ?? message.match(/^[A-Z][A-Z0-9]+: ([^,]+)/)?.[1] ?? message;
  const line = text.replace(/\s*[\r\n]+\s*/g, " ").trim();
  return code && !line.includes(code) ? `${line} (${code})` : line;
}

/** What an aborted run rejects with: the signal's reason, or an AbortError when it has none. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("The loop was aborted", "AbortError");
}
