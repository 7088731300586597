import { Command } from "clipanion";
import { LoopxCommand } from "../context.js";
import { valueOption } from "../declare.js";
import { LoopxError } from "../../core/errors.js";

/**
 * `loopx receipt` (loopx's own addition): reports what the calling script's work used to the run
 * it belongs to (see receipts/send.ts). The whole receipt as `--json '<object>'`, or its common
 * fields as options. A malformed receipt is one error line naming the field (exit 1, nothing
 * recorded); outside a run it does nothing and exits 0.
 */

/** The options that give a receipt field, by the field's name in the receipt's own errors (`cost.usd must be ...`). */
const FLAG_OF_FIELD: Record<string, string> = {
  "cost.usd": "--cost",
  "cost.kind": "--kind",
  "tokens.input": "--input",
  "tokens.output": "--output",
  "tokens.cacheRead": "--cache-read",
  "tokens.cacheWrite": "--cache-write",
  "tokens.reasoning": "--reasoning",
  model: "--model",
  provider: "--provider",
  agent: "--agent",
  agentVersion: "--agent-version",
};

const NUMBER_FLAGS = [
  ["usd", ["cost", "usd"]],
  ["input", ["tokens", "input"]],
  ["output", ["tokens", "output"]],
  ["cacheRead", ["tokens", "cacheRead"]],
  ["cacheWrite", ["tokens", "cacheWrite"]],
  ["reasoning", ["tokens", "reasoning"]],
] as const;

export class ReceiptCommand extends LoopxCommand {
  static override paths = [["receipt"]];
  static override usage = Command.Usage({
    description: "Report what a script's work used: cost, tokens (loopx's own addition)",
    details: `loopx's own addition. From a script of a run, adds a receipt to the run: what this call of an
agent used. Receipts add up (each one is a delta); 'loopx runs', 'runs show' and 'runs tail' show
them and the totals, and --max-cost / --max-tokens budgets count them. --kind says what the cost is:
"billed" (an API-key call's price) or "estimate" (a list-price estimate, e.g. on a subscription);
estimates count against --max-cost only with --count-estimates. JS/TS scripts can call
receipt(object) from "loopx". A malformed receipt is refused with one line naming the field (exit 1);
outside a run it does nothing (exit 0).
`,
    examples: [
      ["Report a billed call", `$0 receipt --cost 0.0123 --kind billed --input 1200 --output 340 --model claude-sonnet-4-5`],
      ["Report a whole receipt", `$0 receipt --json '{"cost":{"usd":0.05,"kind":"estimate"},"tokens":{"input":900}}'`],
    ],
  });
  json = valueOption("--json", "text", "The whole receipt as a JSON object (see the README)");
  usd = valueOption("--cost", "text", "Cost in USD (needs --kind)");
  kind = valueOption("--kind", "text", "What the cost is: billed or estimate");
  input = valueOption("--input", "text", "Input tokens (not cached)");
  output = valueOption("--output", "text", "Output tokens");
  cacheRead = valueOption("--cache-read", "text", "Tokens read from the prompt cache");
  cacheWrite = valueOption("--cache-write", "text", "Tokens written to the prompt cache");
  reasoning = valueOption("--reasoning", "text", "Reasoning tokens");
  model = valueOption("--model", "text", "The model that did the work");
  provider = valueOption("--provider", "text", "Its provider (anthropic, openai, ...)");
  agent = valueOption("--agent", "text", "The agent CLI (claude-code, codex, ...)");
  agentVersion = valueOption("--agent-version", "text", "The agent CLI's version");

  async execute(): Promise<number> {
    const [{ receipt }, { RECEIPT_MAX_BYTES }] = await Promise.all([import("../../receipts/send.js"), import("../../receipts/receipt.js")]);
    const value = this.receiptValue(RECEIPT_MAX_BYTES);
    try {
      receipt(value, this.context.env);
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
      // Given as options, a field is named by its option: one wording for `--cost abc` and `--cost -1`.
      const message = this.json === undefined ? error.message.replace(/^([\w.]+) must be/, (whole, field: string) => (FLAG_OF_FIELD[field] ? `${FLAG_OF_FIELD[field]} must be` : whole)) : error.message;
      throw new LoopxError(`receipt refused: ${message}`);
    }
    return 0;
  }

  private receiptValue(maxBytes: number): unknown {
    const flagged = NUMBER_FLAGS.some(([key]) => this[key] !== undefined) || [this.kind, this.model, this.provider, this.agent, this.agentVersion].some((v) => v !== undefined);
    if (this.json !== undefined) {
      if (flagged) throw new LoopxError("receipt refused: --json takes the whole receipt; give no other option with it");
      // The receipt's own cap (README: at most 4 KiB as JSON), on the text as given.
      if (Buffer.byteLength(this.json) > maxBytes) throw new LoopxError(`receipt refused: --json is over ${maxBytes} bytes (a receipt is at most ${maxBytes} bytes as JSON)`);
      try {
        return JSON.parse(this.json) as unknown;
      } catch {
        throw new LoopxError("receipt refused: --json is not valid JSON");
      }
    }
    const value: Record<string, Record<string, unknown> | string> = {};
    for (const [key, [group, field]] of NUMBER_FLAGS) {
      const text = this[key];
      if (text === undefined) continue;
      // Not a number: the text as given, which the receipt's check refuses in the same words as -1.
      const number = /^\s*$/.test(text) ? Number.NaN : Number(text);
      ((value[group] ??= {}) as Record<string, unknown>)[field] = Number.isNaN(number) ? text : number;
    }
    if (this.kind !== undefined) ((value.cost ??= {}) as Record<string, unknown>).kind = this.kind;
    for (const key of ["model", "provider", "agent", "agentVersion"] as const) if (this[key] !== undefined) value[key] = this[key]!;
    return value;
  }
}
