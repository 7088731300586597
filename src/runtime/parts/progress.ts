import { writeSync } from "node:fs";
import { isatty } from "node:tty";
import { describeIterationStart, describeRunEnd, describeSteering } from "../../records/report.js";
import type { IterationEndEvent, RunResumeEvent, RunStartEvent } from "../../records/events.js";
import type { RunPart } from "../../core/run-session.js";

/**
 * Terminal progress (loopx's own extension): when stderr is a terminal, one line before each
 * script starts (iteration, target, elapsed time) and one summary line when the run ends. Never
 * on stdout, never when stderr is a pipe or a file. Styled unless NO_COLOR is set or TERM=dumb.
 */

const DIM = ["\x1b[2m", "\x1b[22m"] as const;
const COLOURS: Record<string, readonly [string, string]> = {
  stopped: ["\x1b[32m", "\x1b[39m"],
  "stopped-on-request": ["\x1b[32m", "\x1b[39m"],
  limit: ["\x1b[32m", "\x1b[39m"],
  failed: ["\x1b[31m", "\x1b[39m"],
};
const YELLOW = ["\x1b[33m", "\x1b[39m"] as const;

/** The part, or undefined when progress is off (LOOPX_PROGRESS=0) or stderr is not a terminal. */
export function progressPart(env: Record<string, string | undefined>): RunPart | undefined {
  if (env.LOOPX_PROGRESS === "0" || !isatty(2)) return undefined;
  const styled = !env.NO_COLOR && env.TERM !== "dumb";
  const paint = (text: string, [on, off]: readonly [string, string]) => (styled ? `${on}${text}${off}` : text);
  const write = (line: string) => {
    try {
      writeSync(2, `${line}\n`);
    } catch {
      // A terminal that went away costs the progress line, nothing else.
    }
  };
  let start: RunStartEvent | RunResumeEvent | undefined;
  let startedAt = 0;
  let last: IterationEndEvent | undefined;
  return {
    onEvent(event) {
      switch (event.type) {
        case "run.start":
          start = event;
          startedAt = Date.now();
          break;
        case "run.resume":
          start = event;
          startedAt = Date.now();
          write(paint(`loopx: resuming run ${event.run} at ${event.target} (iteration ${event.iterations + 1})`, DIM));
          break;
        case "run.pause":
        case "run.continue":
        case "run.stop":
          write(paint(`loopx: ${describeSteering(event)}`, YELLOW));
          break;
        case "iteration.start":
          write(paint(`loopx: ${describeIterationStart(event, start?.maxIterations ?? null, Date.now() - startedAt)}`, DIM));
          break;
        case "iteration.end":
          last = event;
          break;
        case "run.end":
          write(paint(`loopx: ${describeRunEnd(event, start?.maxIterations ?? null, last)}`, COLOURS[event.reason] ?? YELLOW));
          break;
      }
    },
  };
}
