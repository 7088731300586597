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

/**
 * The process's own context, for the command line `argv`. Its streams are made when a command
 * first uses one: under Bun each of process.stdin/stdout/stderr is a Node-compatible stream built
 * on first access, which a run, writing stderr by fd (os/stderr.ts) and nothing to stdout, would
 * hold all its life (with stdout-pipe.ts's runToEnd, ~1 MB of an idle Bun run).
 */
export function processContext(argv: string[]): LoopxContext {
  return {
    get stdin() {
      return process.stdin;
    },
    get stdout() {
      return processStdout();
    },
    get stderr() {
      return process.stderr;
    },
    env: process.env,
    colorDepth: 1,
    cwd: process.cwd(),
    argv,
  };
}

let stdoutWatched = false;

/** process.stdout; a reader that went away (`loopx runs ls | head -1`) ends loopx quietly. */
function processStdout(): NodeJS.WriteStream {
  if (!stdoutWatched) {
    stdoutWatched = true;
    process.stdout.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
    });
  }
  return process.stdout;
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
