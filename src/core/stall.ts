import { describeValue } from "./describe.js";
import { LoopxError } from "./errors.js";

/**
 * The stall sensor (`loopx run --stall-after <n>`, loopx's own addition), its pure half: what
 * counts as progress, and when a run has gone `n` iterations without any. The workspace's
 * fingerprints and the progress signals scripts send are read by src/stall/; the decision is here.
 *
 * Progress is a workspace state (fingerprint) this run has never seen — the state at the run's
 * start included, so A→B→A earns nothing for its return to A — or a progress signal of a script's
 * own (`loopx progress <value>`): a number that beats the run's high-water mark by at least its
 * minimum step (the mark moves only when it is beaten: jitter never adds up to progress), or a
 * text value not seen in this run.
 */

/** The exit code of a stalled run (not 0: CI must see it; not 1, 3 (budget), 124 or 128+N). */
export const STALL_EXIT_CODE = 5;

/** One progress signal a script sent: `loopx progress <value> [--min-step <step>]`. */
export interface ProgressSignal {
  value: number | string;
  /** Numbers only: how far above the high-water mark a value must be to count (default 0: any rise). */
  minStep?: number;
}

/** A workspace state, as the sensor compares it: its digest and words for it. */
export interface WorkspaceState {
  /** Digest of HEAD, the tracked files' diff and the untracked files' content. */
  digest: string;
  /** "HEAD 1a2b3c4d5e6f, 2 changed files, 1 untracked file" */
  words: string;
}

/** What a flat iteration repeated: the workspace state it left, first seen at iteration `since` (0: the run's start). */
export interface FlatIteration {
  n: number;
  /** The iteration whose end first left this state (0: the state the run started in); absent without a workspace. */
  since?: number;
  state?: string;
  /** The progress values it sent that did not count. */
  signals?: Array<number | string>;
}

/** What the `run.stall` event (events.ts) holds: `after` flat iterations in a row, and what they did. */
export interface StallEvidence {
  /** --stall-after's count. */
  after: number;
  /** The flat iterations, each with the state it left (first seen after iteration `since`; 0: the start) and its progress values. */
  flat: FlatIteration[];
  /** The run's best progress number, when a script sent one. */
  mark?: number;
  /** The one line loopx printed. */
  message: string;
}

/** --stall-after / RunOptions.stallAfter, checked: a positive integer, or undefined (no sensor). */
export function validateStallAfter(value: unknown): number | undefined {
  if (value !== undefined && (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1)) {
    throw new LoopxError(`stallAfter must be a positive integer, got ${describeValue(value)}`);
  }
  return value;
}

export class StallTracker {
  private readonly seen = new Map<string, number>();
  private readonly texts = new Set<string>();
  private highWater = Number.NEGATIVE_INFINITY;
  private flat: FlatIteration[] = [];

  constructor(readonly after: number) {}

  /** The state the run starts (or resumes) in: seen, not progress. */
  baseline(state: WorkspaceState | undefined, n: number): void {
    if (state && !this.seen.has(state.digest)) this.seen.set(state.digest, n);
  }

  /**
   * Iteration `n` has ended, leaving `state` (undefined outside a git project) after sending
   * `signals`. Returns the flat iterations once `after` of them came in a row (the run stalls).
   */
  iteration(n: number, state: WorkspaceState | undefined, signals: ProgressSignal[]): FlatIteration[] | undefined {
    let progress = false;
    let since: number | undefined;
    if (state) {
      since = this.seen.get(state.digest);
      if (since === undefined) {
        this.seen.set(state.digest, n);
        progress = true;
      }
    }
    for (const signal of signals) if (this.counts(signal)) progress = true;
    if (progress) {
      this.flat = [];
      return undefined;
    }
    this.flat.push({ n, ...(since !== undefined ? { since, state: state!.words } : {}), ...(signals.length > 0 ? { signals: signals.map((s) => s.value) } : {}) });
    return this.flat.length >= this.after ? this.flat : undefined;
  }

  /** The run's best number so far, when a script sent one. */
  get mark(): number | undefined {
    return Number.isFinite(this.highWater) ? this.highWater : undefined;
  }

  private counts(signal: ProgressSignal): boolean {
    if (typeof signal.value === "string") {
      if (this.texts.has(signal.value)) return false;
      this.texts.add(signal.value);
      return true;
    }
    const step = signal.minStep ?? 0;
    if (signal.value > this.highWater && signal.value - this.highWater >= step) {
      this.highWater = signal.value;
      return true;
    }
    return false;
  }
}

/** "2-4" or "2, 4, 7" */
function iterationList(ns: number[]): string {
  const contiguous = ns.every((n, i) => i === 0 || n === ns[i - 1]! + 1);
  if (contiguous && ns.length > 2) return `${ns[0]}-${ns[ns.length - 1]}`;
  return ns.length === 2 ? `${ns[0]} and ${ns[1]}` : ns.join(", ");
}

/** What the flat iterations repeated, in words: the workspace states they left, the signals that did not count. */
function repeated(flat: FlatIteration[], mark: number | undefined): string {
  const parts: string[] = [];
  const states = new Map<number, string>();
  for (const item of flat) if (item.since !== undefined) states.set(item.since, item.state!);
  const left = [...states].map(([since, words]) => `as it was ${since === 0 ? "at the start" : `after iteration ${since}`} (${words})`);
  if (left.length > 0) parts.push(`they left the workspace ${left.join(" or ")}`);
  const signals = flat.flatMap((item) => item.signals ?? []);
  if (signals.length > 0) {
    const distinct = [...new Set(signals.map(String))].slice(0, 3);
    parts.push(`their progress (${distinct.join(", ")}) ${mark !== undefined ? `did not beat the best (${mark}) by the minimum step` : "was seen before"}`);
  }
  return parts.length > 0 ? parts.join("; ") : "no progress signal came, and there is no git work tree to compare";
}

/** The one line a stalled run ends with. */
export function stallMessage(after: number, flat: FlatIteration[], mark: number | undefined): string {
  const ns = flat.map((item) => item.n);
  return `stalled: iteration${ns.length === 1 ? "" : "s"} ${iterationList(ns)} made no progress (--stall-after ${after}): ${repeated(flat, mark)}`;
}
