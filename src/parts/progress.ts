import { LoopxError } from "../core/errors.js";
import { shownText } from "../core/untrusted-text.js";
import { describeIterationStart, describeRunEnd, describeSteering } from "../records/wording.js";
import type { IterationEndEvent, RunResumeEvent, RunStartEvent } from "../core/events.js";
import type { RunPart } from "../core/run-part.js";
import { stderrKind, stderrLine } from "../os/stderr.js";
import { uniquePrefixLengths } from "../records/run-id.js";
import { describeTotals, type RunTotals } from "../core/receipts.js";

/** " · $0.0369 · 12.3k tokens" once the run has receipts; "" before. */
function runningTotal(totals: RunTotals | undefined): string {
  return totals && totals.receipts > 0 ? ` · ${describeTotals(totals)}` : "";
}

/**
 * Progress (loopx's own extension): one line before each script starts (iteration, target,
 * elapsed time) and one summary line when the run ends — on stderr when it is a terminal
 * (LOOPX_PROGRESS=0 turns them off), anywhere with LOOPX_PROGRESS=1; `--summary` asks for the
 * summary line alone wherever stderr goes. Never on stdout. Styled on a terminal unless NO_COLOR is
 * set or TERM=dumb. The summary of a failed run says why it failed, so the CLI prints no second
 * line for the same failure (the error is marked as reported). The first line and the summary name
 * the run (its id's first 8 characters, longer if they name another run too; on a terminal those
 * are bold): what `loopx runs stop` and the other steering commands take.
 */

const DIM = ["\x1b[2m", "\x1b[22m"] as const;
const COLOURS: Record<string, readonly [string, string]> = {
  stopped: ["\x1b[32m", "\x1b[39m"],
  "stopped-on-request": ["\x1b[32m", "\x1b[39m"],
  limit: ["\x1b[32m", "\x1b[39m"],
  failed: ["\x1b[31m", "\x1b[39m"],
};
const YELLOW = ["\x1b[33m", "\x1b[39m"] as const;
const BOLD = ["\x1b[1m", "\x1b[22m"] as const;
/**
 * How much of the run's id the lines show and highlight, at least: its whole start time (8 base-36
 * digits of milliseconds, core/run-id.ts). A shorter prefix can name a run that starts after this
 * line was written (6 digits: any run started in the same 1.3 s), so runs started together would
 * show the same one; 8 differ unless they started in the same millisecond, and those are told
 * apart by the runs known when the line is written and again at the summary.
 */
const SHOWN_ID = 8;

/**
 * The run's id as the lines show and highlight it: at least its first 8 characters, as many as
 * name it alone among the runs known now (recorded, or with a control channel), and never fewer
 * than `before` (what an earlier line showed).
 */
function shownRunId(id: string, known: () => Set<string>, before = 0): { text: string; unique: number } {
  const ids = known();
  ids.add(id);
  const unique = Math.max(SHOWN_ID, before, uniquePrefixLengths([...ids]).get(id) ?? id.length);
  return { text: id.slice(0, unique), unique };
}

/** True when progress lines show before each script here (stderr a terminal, or LOOPX_PROGRESS=1). */
export function progressShown(env: Record<string, string | undefined>): boolean {
  return env.LOOPX_PROGRESS === "1" || (stderrKind() === "terminal" && env.LOOPX_PROGRESS !== "0");
}

/** Writes the part's lines to stderr; `named` once a line has named the run. */
interface LineWriter {
  /**
   * One line; `run` names the run's id at the line's start ("run <id> · <text>") or end ("<text>
   * · run <id>"). The id is loopx's own text: its bold prefix is styled inside the line's colour.
   */
  write(text: string, colour: readonly [string, string], run?: { id: string; at: "start" | "end" }): void;
  readonly named: boolean;
}

function lineWriter(styled: boolean, knownIds: () => Set<string>): LineWriter {
  const paint = (text: string, [on, off]: readonly [string, string]) => (styled ? `${on}${text}${off}` : text);
  // What a line says may quote what a script wrote (a goto value): shown, never obeyed.
  let id: { text: string; unique: number } | undefined;
  return {
    get named() {
      return id !== undefined;
    },
    write(text, colour, run) {
      let line = shownText(text);
      if (run) {
        // The summary checks again: a run that started in the same millisecond is known by now.
        id = id === undefined || run.at === "end" ? shownRunId(run.id, knownIds, id?.unique) : id;
        const named = styled ? `run ${BOLD[0]}${id.text.slice(0, id.unique)}${BOLD[1]}${colour[0]}${id.text.slice(id.unique)}` : `run ${id.text}`;
        line = run.at === "start" ? `${named} · ${line}` : `${line} · ${named}`;
      }
      stderrLine(paint(`loopx: ${line}`, colour));
    },
  };
}

/**
 * The part, or undefined when neither progress nor the summary line is asked for here. With
 * `receipts` (the run's live totals), each line shows the running total once there is one.
 * `knownIds`: the ids a run id prefix can name now (recorded runs, runs with a control channel).
 */
export function progressPart(
  env: Record<string, string | undefined>,
  options: { summary?: boolean; receipts?: { readonly totals: RunTotals; readonly notCounted?: string }; knownIds?: () => Set<string> } = {},
): RunPart | undefined {
  const terminal = stderrKind() === "terminal";
  const iterations = progressShown(env);
  if (!iterations && !options.summary) return undefined;
  const styled = terminal && !env.NO_COLOR && env.TERM !== "dumb";
  const lines = lineWriter(styled, options.knownIds ?? (() => new Set()));
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
          if (iterations) lines.write(`resuming at ${event.target} (iteration ${event.iterations + 1})`, DIM, { id: event.run, at: "start" });
          break;
        case "run.pause":
        case "run.continue":
        case "run.stop":
          if (iterations) {
            const line = describeSteering(event);
            if (line !== undefined) lines.write(line, YELLOW);
          }
          break;
        case "iteration.start": {
          if (!iterations) break;
          const line = `${describeIterationStart(event, start?.maxIterations ?? null, Date.now() - startedAt)}${runningTotal(options.receipts?.totals)}`;
          // The first line of the run names it.
          lines.write(line, DIM, lines.named ? undefined : { id: event.run, at: "start" });
          break;
        }
        case "iteration.end":
          last = event;
          break;
        case "run.end":
          lines.write(`${describeRunEnd(event, start?.maxIterations ?? null, last)}${runningTotal(options.receipts?.totals)}${options.receipts?.notCounted ?? ""}`, COLOURS[event.reason] ?? YELLOW, { id: event.run, at: "end" });
          if (ending instanceof LoopxError) ending.reported = true;
          break;
      }
    },
  };
}
