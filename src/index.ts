/** The public API of loopx (spec §9): run loops from programs, and output/input inside scripts (script.ts). */
export { run, runPromise, type RunOptions } from "./api/run.js";
export * from "./script.js";
/**
 * What a run rejects with, for `instanceof` (loopx's own addition). Every one is a LoopxError with
 * `exitCode` (the CLI's exit code for it) and a one-line `message`:
 * - UsageError: a malformed command line (the CLI's; a bad option or target given to run() is a plain LoopxError);
 * - ScriptFailedError: a script exited non-zero, was killed or could not start (`script`: its
 *   `exitCode`, `signal`, `stdoutBytes`, last `stderr` lines; `hint`: a likely cause, if known);
 * - TimeoutError: `timeout` or `maxTime` expired (exitCode 124);
 * - BudgetError: `maxCost` or `maxTokens` was reached (exitCode 3).
 * An aborted run rejects with the signal's reason (a DOMException named "AbortError" without one).
 */
export { LoopxError, UsageError, ScriptFailedError, TimeoutError, BudgetError } from "./core/errors.js";
