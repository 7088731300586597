/** The public API of loopx (spec §9): run loops from programs, and output/input inside scripts. */
export { run, runPromise, type RunOptions } from "./api/run.js";
export { output, input, note } from "./api/script-helpers.js";
export type { Output } from "./core/output.js";
export type {
  LoopEvent,
  RunStartEvent,
  IterationStartEvent,
  IterationEndEvent,
  IterationOutput,
  RunEndEvent,
  RunEndReason,
  NoteEvent,
  RecordEvent,
} from "./records/events.js";
