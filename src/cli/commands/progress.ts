import { Command } from "clipanion";
import { LoopxCommand } from "../context.js";
import { positional, valueOption } from "../declare.js";
import { LoopxError, UsageError } from "../../core/errors.js";

/**
 * `loopx progress <value> [--min-step <step>]` (loopx's own addition): a script's own progress
 * signal for the stall sensor of its run (`--stall-after`; see stall/signal.ts). Outside a run
 * with the sensor it does nothing and exits 0.
 */
export class ProgressCommand extends LoopxCommand {
  static override paths = [["progress"]];
  static override usage = Command.Usage({
    description: "Tell a run's stall sensor this script made progress (loopx's own addition)",
    details: `loopx's own addition. From a script of a run started with --stall-after, counts as progress:
a number when it beats the run's best so far by at least --min-step (default: any rise; the best
moves only when beaten, so jitter never adds up), a text when the run has not seen it before.
JS/TS scripts can call progress(value, { minStep }) from "loopx". Outside such a run it does
nothing (exit 0); a value that is neither a number nor one line of text is refused (exit 1).
`,
    examples: [
      ["A gate's confidence, counting only a rise of 5 points", `$0 progress 0.82 --min-step 0.05`],
      ["A milestone named by the script", `$0 progress "tests pass: 41/50"`],
    ],
  });
  minStep = valueOption("--min-step", "text", "How far above the best so far a number must be to count");
  value = positional("text");

  async execute(): Promise<number> {
    const { progress } = await import("../../stall/signal.js");
    const number = /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(this.value.trim()) ? Number(this.value) : undefined;
    let step: number | undefined;
    if (this.minStep !== undefined) {
      step = /^\s*$/.test(this.minStep) ? Number.NaN : Number(this.minStep);
      if (!Number.isFinite(step) || step < 0) throw new UsageError(`--min-step needs a non-negative number, got ${JSON.stringify(this.minStep)}`);
      if (number === undefined) throw new UsageError("--min-step goes with a number, not a text value");
    }
    try {
      progress(number ?? this.value, step !== undefined ? { minStep: step } : {}, this.context.env);
    } catch (error) {
      if (error instanceof TypeError) throw new LoopxError(`progress refused: ${error.message}`);
      throw error;
    }
    return 0;
  }
}
