/**
 * What a script gets from `import ... from "loopx"` when loopx itself provides the package (spec
 * §3.3): the Node loader hooks resolve "loopx" here, Bun's NODE_PATH package and the standalone
 * binary's helper cache hold this module bundled. Only output() and input() (spec §6.4, §6.5),
 * note() and the public types: a script starts once per iteration, so its "loopx" must cost no more than
 * those small functions. run()/runPromise() are for programs with loopx installed as a local
 * dependency (spec §9), which resolve the full package (index.ts) by ordinary resolution — as does
 * a workflow with its own node_modules/loopx.
 */
// note(): a line in the run's record (loopx's own addition).
// receipt(): what the script's work used — cost, tokens, model (loopx's own addition).
// progress(): a progress signal for the run's stall sensor, --stall-after (loopx's own addition).
export { output, input, note, receipt, progress } from "./api/script-helpers.js";
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
  ReceiptEvent,
  RecordEvent,
} from "./core/events.js";
export type { Receipt, ReceiptTokens, UsageWindow, CostKind } from "./core/receipt-types.js";
