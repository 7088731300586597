import { LoopxError } from "../core/errors.js";
import { shownText } from "../core/untrusted-text.js";
import { describeIterationStart, describeRunEnd, describeSteering } from "../records/report.js";
import type { IterationEndEvent, RunResumeEvent, RunStartEvent } from "../core/events.js";
import type { RunPart } from "../core/run-session.js";
import { stderrKind, stderrLine } from "../os/stderr.js";

/**
 * Progress (loopx's own extension): one line before each script starts (iteration, target,
 * elapsed time) and one summary line when the run ends — on stderr when it is a terminal
 * (LOOPX_PROGRESS=0 turns them off), anywhere with LOOPX_PROGRESS=1; `--summary` asks for the
 * summary line alone wherever stderr goes. Never on stdout. Styled on a terminal unless NO_COLOR is
 * set or TERM=dumb. The summary of a failed run says why it failed, so the CLI prints no second
 * line for the same failure (the error is marked as reported).
 */

const DIM = ["\x1b[2m", "\x1b[22m"] as const;
const COLOURS: Record<string, readonly [string, string]> = {
  stopped: ["\x1b[32m", "\x1b[39m"],
  "stopped-on-request": ["\x1b[32m", "\x1b[39m"],
  limit: ["\x1b[32m", "\x1b[39m"],
  failed: ["\x1b[31m", "\x1b[39m"],
};
const YELLOW = ["\x1b[33m", "\x1b[39m"] as const;

/** The part, or undefined when neither progress nor the summary line is asked for here. */
export function progressPart(env: Record<string, string | undefined>, options: { summary?: boolean } = {}): RunPart | undefined {
  const terminal = stderrKind() === "terminal";
  const iterations = env.LOOPX_PROGRESS === "1" || (terminal && env.LOOPX_PROGRESS !== "0");
  if (!iterations && !options.summary) return undefined;
  const styled = terminal && !env.NO_COLOR && env.TERM !== "dumb";
  const paint = (text: string, [on, off]: readonly [string, string]) => (styled ? `${on}${text}${off}` : text);
  // What a line says may quote what a script wrote (a goto value): shown, never obeyed.
  const write = (text: string, colour: readonly [string, string]) => stderrLine(paint(`loopx: ${shownText(text)}`, colour));
  let start: RunStartEvent | RunResumeEvent | undefined;
  let startedAt = 0;
  let last: IterationEndEvent | undefined;
  let ending: unknown;
  return {
    end(end) {
      ending = end.error;
    },
    onEvent(event) {
      switch (event.type) {
        case "run.start":
          start = event;
          startedAt = Date.now();
          break;
        case "run.resume":
          start = event;
          startedAt = Date.now();
          if (iterations) write(`resuming run ${event.run} at ${event.target} (iteration ${event.iterations + 1})`, DIM);
          break;
        case "run.pause":
        case "run.continue":
        case "run.stop":
          if (iterations) {
            const line = describeSteering(event);
            if (line !== undefined) write(line, YELLOW);
          }
          break;
        case "iteration.start":
          if (iterations) write(describeIterationStart(event, start?.maxIterations ?? null, Date.now() - startedAt), DIM);
          break;
        case "iteration.end":
          last = event;
          break;
        case "run.end":
          write(describeRunEnd(event, start?.maxIterations ?? null, last), COLOURS[event.reason] ?? YELLOW);
          if (ending instanceof LoopxError) ending.reported = true;
          break;
      }
    },
  };
}
