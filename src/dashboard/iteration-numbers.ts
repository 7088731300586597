/**
 * The few numbers RunIndex (run-index.ts) keeps per iteration, each in a typed array indexed by
 * n - 1 that grows by doubling: what makes a 100,000-iteration run cost about 3 MB. Pure, no I/O.
 */

/** Bits of an iteration's `flags`. */
export const FLAG = {
  ENDED: 1,
  /** Exit code other than 0, a signal, or an error. */
  FAILED: 2,
  /** The iteration the run's time limit ended. */
  TIMEOUT: 4,
  GOTO: 8,
  STOP: 16,
} as const;

const INITIAL = 64;

export class IterationNumbers {
  /** Highest n seen. */
  count = 0;
  durationMs = new Float64Array(INITIAL);
  /** Index into RunIndex's `targets`. */
  target = new Uint16Array(INITIAL);
  flag = new Uint8Array(INITIAL);
  /** Where the iteration's `iteration.end` line is in the record (bytes). */
  endAt = new Float64Array(INITIAL);
  endLength = new Uint32Array(INITIAL);
  /** What each iteration's receipts add up to: billed and estimated USD (apart), tokens. */
  billed = new Float64Array(INITIAL);
  estimate = new Float64Array(INITIAL);
  tokens = new Float64Array(INITIAL);

  /** Index of iteration `n`, growing the arrays as needed; -1 for an n no loop writes. */
  slot(n: number): number {
    if (!Number.isInteger(n) || n < 1 || n > 2 ** 31) return -1;
    const i = n - 1;
    if (i >= this.flag.length) {
      let size = this.flag.length;
      while (size <= i) size *= 2;
      this.durationMs = grow(this.durationMs, new Float64Array(size));
      this.target = grow(this.target, new Uint16Array(size));
      this.flag = grow(this.flag, new Uint8Array(size));
      this.endAt = grow(this.endAt, new Float64Array(size));
      this.endLength = grow(this.endLength, new Uint32Array(size));
      this.billed = grow(this.billed, new Float64Array(size));
      this.estimate = grow(this.estimate, new Float64Array(size));
      this.tokens = grow(this.tokens, new Float64Array(size));
    }
    this.count = Math.max(this.count, n);
    return i;
  }

  /** Iteration index `i` has ended (its `iteration.end` was seen). */
  ended(i: number): boolean {
    return (this.flag[i]! & FLAG.ENDED) !== 0;
  }
}

function grow<T extends Float64Array | Uint16Array | Uint8Array | Uint32Array>(from: T, to: T): T {
  to.set(from as never);
  return to;
}
