/**
 * A TypeScript/JSX script that does not compile, told under Node as Bun tells it: the source line
 * with a caret under the column, the message, and `at file:line:column` — nothing of esbuild's
 * failure object or of the loader's stack. The error carries the report as `loopxReport` (an own
 * string property, so it survives the copy from Node's hooks thread), and register.ts prints it
 * when the error would end the script.
 */

interface EsbuildMessage {
  text: string;
  location: { file: string; line: number; column: number; lineText: string } | null;
}

/** The report of one esbuild message: esbuild's column counts UTF-8 bytes from 0; the report's counts characters from 1. */
function reportOf(message: EsbuildMessage, path: string): { text: string; where: string } {
  const at = message.location;
  if (!at) return { text: `error: ${message.text}\n    at ${path}\n`, where: path };
  const before = Buffer.from(at.lineText, "utf8").subarray(0, at.column).toString("utf8");
  const gutter = `${at.line} | `;
  const caret = " ".repeat(gutter.length) + before.replace(/[^\t]/g, " ") + "^";
  // The transformed file itself (esbuild's own `file` is only its name: transform.ts sourceName).
  const where = `${path}:${at.line}:${before.length + 1}`;
  return { text: `${gutter}${at.lineText}\n${caret}\nerror: ${message.text}\n    at ${where}\n`, where };
}

/** esbuild's failure as one SyntaxError whose message is `file:line:column: text` and whose report is the caret form. */
export function syntaxErrorOf(failure: unknown, path: string): unknown {
  const errors = (failure as { errors?: EsbuildMessage[] } | null)?.errors;
  if (!Array.isArray(errors) || errors.length === 0) return failure;
  const reports = errors.map((message) => reportOf(message, path));
  const error = new SyntaxError(`${reports[0]!.where}: ${errors[0]!.text}`);
  error.stack = `SyntaxError: ${error.message}`;
  Object.assign(error, { loopxReport: reports.map((report) => report.text).join("\n") });
  return error;
}

/** A plain error whose report is its message alone (no stack), e.g. a script that is CommonJS. */
export function reportedError(message: string): SyntaxError {
  const error = new SyntaxError(message);
  error.stack = `SyntaxError: ${message}`;
  Object.assign(error, { loopxReport: `error: ${message}\n` });
  return error;
}

/** The report an error carries, if it is one of these. */
export function reportOfError(error: unknown): string | undefined {
  const report = (error as { loopxReport?: unknown } | null)?.loopxReport;
  return typeof report === "string" ? report : undefined;
}
