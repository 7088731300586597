import type { Totals } from "../core/receipts.js";

/**
 * The rows of `runs show`, one per iteration, kept by column (pure): 100,000 iterations are a few
 * arrays of numbers and strings, not 100,000 objects for the collector to copy while the record is
 * read. A row is made an object only when it is asked for (`row`).
 */

/** One iteration of `runs show`. */
export interface DetailRow {
  n: number;
  target: string;
  /** When it started, while it has not ended. */
  startMs?: number;
  /** Set once its iteration.end was read. */
  ms?: number;
  exit?: string;
  next?: string;
  result?: string;
  stderr?: string[];
  /** What its script's receipts added up to, when it sent any. */
  totals?: Totals;
}

export class DetailRows {
  private readonly ns: number[] = [];
  private readonly targets: string[] = [];
  /**
   * When each row started, as the record says (ISO), kept only until it ends: only an open row's
   * duration is counted from it. Parsing 100,000 times, or keeping 100,000 strings for the
   * collector to copy, each cost `runs show` ~20 ms.
   */
  private readonly starts: Array<string | undefined> = [];
  private readonly mss: Array<number | undefined> = [];
  private readonly exits: Array<string | undefined> = [];
  private readonly nexts: Array<string | undefined> = [];
  private readonly results: Array<string | undefined> = [];
  /** By row: the few that have them. */
  private readonly stderrs = new Map<number, string[]>();
  private readonly totals = new Map<number, Totals>();
  /** Row by n, for the rows before `indexed`: made only when a lookup is not of the last row. */
  private readonly byN = new Map<number, number>();
  private indexed = 0;
  /** The highest n of the rows, while every n is a number (else undefined: lookups go by byN). */
  private highest: number | undefined = -Infinity;

  get length(): number {
    return this.ns.length;
  }

  /** The row of iteration `n`, or -1. */
  find(n: number): number {
    const last = this.ns.length - 1;
    if (last >= 0 && this.ns[last] === n) return last; // the iteration going: nearly every lookup
    if (this.highest !== undefined && typeof n === "number" && n > this.highest) return -1; // the next one
    for (; this.indexed <= last; this.indexed++) this.byN.set(this.ns[this.indexed]!, this.indexed);
    return this.byN.get(n) ?? -1;
  }

  add(n: number, target: string, startTime: string | undefined): void {
    this.highest = typeof n === "number" && this.highest !== undefined && !Number.isNaN(n) ? Math.max(this.highest, n) : undefined;
    this.ns.push(n);
    this.targets.push(target);
    this.starts.push(startTime);
    this.mss.push(undefined);
    this.exits.push(undefined);
    this.nexts.push(undefined);
    this.results.push(undefined);
  }

  /** Row `i` started again (a resume re-runs the iteration the run ended in): the new try, marked; its receipts stay. */
  retry(i: number, target: string, startTime: string): void {
    this.targets[i] = target.endsWith(" (retry)") ? target : `${target} (retry)`;
    this.starts[i] = startTime;
    this.mss[i] = this.exits[i] = this.nexts[i] = this.results[i] = undefined;
    this.stderrs.delete(i);
  }

  ended(i: number): boolean {
    return this.exits[i] !== undefined;
  }

  end(i: number, ms: number, exit: string, next: string, result: string, stderr: string[] | undefined): void {
    this.mss[i] = ms;
    this.exits[i] = exit;
    this.nexts[i] = next;
    this.results[i] = result;
    this.starts[i] = undefined;
    if (stderr) this.stderrs.set(i, stderr);
  }

  /** Row `i`'s receipt totals, made empty by `empty` the first time. */
  totalsOf(i: number, empty: () => Totals): Totals {
    let totals = this.totals.get(i);
    if (!totals) this.totals.set(i, (totals = empty()));
    return totals;
  }

  n(i: number): number {
    return this.ns[i]!;
  }

  /** Its duration, when ended (else undefined), and when it started. */
  ms(i: number): number | undefined {
    return this.mss[i];
  }

  /** When an open row started (ms since 1970); NaN once it has ended, or if its time is unreadable. */
  startMs(i: number): number {
    const time = this.starts[i];
    return time === undefined ? Number.NaN : Date.parse(time);
  }

  row(i: number): DetailRow {
    const row: DetailRow = { n: this.ns[i]!, target: this.targets[i]! };
    if (this.exits[i] === undefined) row.startMs = this.startMs(i);
    else {
      row.ms = this.mss[i];
      row.exit = this.exits[i];
      row.next = this.nexts[i];
      row.result = this.results[i];
    }
    const stderr = this.stderrs.get(i);
    if (stderr) row.stderr = stderr;
    const totals = this.totals.get(i);
    if (totals) row.totals = totals;
    return row;
  }

  /** Each failed script's last stderr lines, by its row's n, in row order. */
  stderrLines(): Array<[number, string[]]> {
    return [...this.stderrs.keys()].sort((a, b) => a - b).map((i) => [this.ns[i]!, this.stderrs.get(i)!]);
  }

  /** Rows `from` on, as objects (a few: --markdown's last ones). */
  list(from = 0): DetailRow[] {
    const rows: DetailRow[] = [];
    for (let i = from; i < this.ns.length; i++) rows.push(this.row(i));
    return rows;
  }

  /** The rows whose n is past `after`, in a new store (`runs show --last`). */
  after(after: number): DetailRows {
    const rows = new DetailRows();
    for (let i = 0; i < this.ns.length; i++) {
      if (!(this.ns[i]! > after)) continue;
      const j = rows.length;
      rows.add(this.ns[i]!, this.targets[i]!, this.starts[i]);
      if (this.exits[i] !== undefined) rows.end(j, this.mss[i]!, this.exits[i]!, this.nexts[i]!, this.results[i]!, this.stderrs.get(i));
      const totals = this.totals.get(i);
      if (totals) rows.totals.set(j, totals);
    }
    return rows;
  }
}
