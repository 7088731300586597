import { type BaseContext, Command } from "clipanion";

/**
 * What a command works with: clipanion's streams and environment, plus the working directory and
 * the arguments after "loopx". main() gives the process's own (processContext) or a caller's, and
 * commands read these only — never process.* — so that a command can run against any directory,
 * environment and streams.
 */
export interface LoopxContext extends BaseContext {
  cwd: string;
  /** The arguments after "loopx", as given (a run keeps them in its record). */
  argv: string[];
}

/** The process's own context, for the command line `argv`. */
export function processContext(argv: string[]): LoopxContext {
  return { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env, colorDepth: 1, cwd: process.cwd(), argv };
}

/** A loopx command: clipanion's Command with loopx's context. */
export abstract class LoopxCommand extends Command<LoopxContext> {
  /** Writes `text` to the command's stdout. */
  protected out(text: string): void {
    this.context.stdout.write(text);
  }

  /** True if the command's stdout is a terminal. */
  protected stdoutIsTerminal(): boolean {
    return (this.context.stdout as { isTTY?: boolean }).isTTY === true;
  }
}
