// Reporting an agent call's usage to loopx as receipts (`receipt()` from "loopx", loopx's own
// addition): once per call — when the call ends, or earlier when the script is being ended
// (SIGTERM, Ctrl-C) and the agent has not finished within PARTIAL_REPORT_MS, with what its stream
// showed so far. A loopx without receipt(), or a script outside a run: nothing is reported.
// Shared by the ralph and converge workflows.
import * as loopx from "loopx";
import type { AgentSpec } from "./agent.ts";
import { homedir } from "node:os";
import { join } from "node:path";
import { codexSnapshots, snapshotWindow } from "./caps.ts";
import { codexReceipts } from "./codex.ts";
import { streamPreset, streamReceipts, type StreamAgentType } from "./presets/index.ts";
import { agentReceipts, type Receipt, type UsageContext } from "./usage.ts";

type Json = Record<string, any>;

/**
 * After a signal, how long the agent gets to finish on its own before the usage seen so far is
 * reported and the agent is ended: well inside loopx's 5 s grace, so the report is written and
 * the workflow closes its iteration before loopx's SIGKILL.
 */
export const PARTIAL_REPORT_MS = 3000;

type ReceiptFn = (receipt: Receipt) => boolean;

/** Sends each receipt to loopx; a refused one is one line on stderr (the run goes on). */
export function sendReceipts(receipts: Receipt[], who: string): void {
  const receipt = (loopx as { receipt?: ReceiptFn }).receipt;
  if (typeof receipt !== "function") return;
  for (const r of receipts) {
    try {
      receipt(r);
    } catch (error) {
      process.stderr.write(`${who}: usage not recorded: ${(error as Error).message}\n`);
    }
  }
}

/** The windows a codex call's session rollout reported (caps.ts), a receipt each (source codex-rollout). */
function codexWindowReceipts(events: Json[]): Receipt[] {
  const home = process.env.CODEX_HOME || join(process.env.HOME || homedir(), ".codex");
  return codexSnapshots(events, home).map((s) => ({ window: snapshotWindow(s), agent: "codex", provider: "openai" }));
}

/** The usage of one agent call, reported at most once. */
export class CallUsage {
  private reported?: Receipt[];
  private partial?: NodeJS.Timeout;

  constructor(
    private readonly spec: AgentSpec,
    private readonly events: Json[],
  ) {}

  /** The call's receipts from its stream so far, each with the call's failure class if it failed; reported to loopx the first time only. */
  report(balanceCost?: number, failure?: string): Receipt[] {
    if (this.reported) return this.reported;
    const context: UsageContext = { env: process.env, costKind: this.spec.costKind, balanceCost };
    const type = this.spec.type;
    if (type === "codex") this.reported = [...codexReceipts(this.spec, this.events, process.env), ...codexWindowReceipts(this.events)];
    else if (streamPreset(type)) this.reported = streamReceipts(type as StreamAgentType, this.events, process.env, this.spec.args, this.spec.costKind);
    else this.reported = agentReceipts(type, this.events, context);
    if (failure) this.reported = this.reported.map((receipt) => ({ ...receipt, failure }));
    sendReceipts(this.reported, this.spec.cli);
    return this.reported;
  }

  /**
   * The call's receipts once it has ended, with the balance it spent (`before` minus what
   * `measure` gives) when there is a usage command and the class of its failure when it failed; a
   * call reported while being interrupted is not measured again (the script is about to end).
   */
  settle(before: number | undefined, measure: () => number | undefined, failure?: string): { receipts: Receipt[]; balance?: number } {
    const balance = before !== undefined && !this.reported ? measure() : undefined;
    return { receipts: this.report(balance !== undefined ? Math.max(0, before! - balance) : undefined, failure), balance };
  }

  /** After a signal: unless the agent exits first, its usage so far is reported, then `end` ends it. */
  reportIfStillRunning(end: () => void): void {
    this.partial ??= setTimeout(() => {
      this.report();
      end();
    }, PARTIAL_REPORT_MS);
  }

  /** The agent is gone: no partial report is due any more. */
  exited(): void {
    clearTimeout(this.partial);
  }
}
