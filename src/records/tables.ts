import { shownText } from "../core/untrusted-text.js";
import type { GapEvent, NoteEvent, RecordEvent, RunHookEvent, RunResumeEvent, WarningEvent } from "../core/events.js";
import { describeHook } from "./hook-report.js";
import { addReceipt, addRunTotals, addTotals, describeCost, emptyRunTotals, emptyTotals, formatTokens, receiptTotals, recordedReceipt, tokenSum, type RunTotals, type Totals } from "../core/receipts.js";
import { totalsLines } from "./receipts-report.js";
import type { RunSummary } from "./run-state.js";
import { describeGap, describeNext, describeResume, describeNote, describeWarning, exitOf, formatElapsed, formatLocalTime, formatRunDuration, resultExcerpt, stderrLines } from "./wording.js";

/**
 * The tables of `loopx runs` (one row per run) and `loopx runs show` (one row per iteration, with
 * duration bars), laid out in characters (pure). Cells come from records: shown escaped.
 */

/**
 * Left-aligned columns separated by two spaces; the last column is not padded. Cells come from
 * records (untrusted): their control characters are shown escaped.
 */
function formatTable(cells: string[][]): string {
  const rows = cells.map((row) => row.map(shownText));
  // Characters, not UTF-16 units; spread only what holds a surrogate pair (100,000 rows, `runs show`).
  const width = (cell: string) => (/[\ud800-\udbff]/.test(cell) ? [...cell].length : cell.length);
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => {
    widths[i] = Math.max(widths[i] ?? 0, width(cell));
  });
  const pads = widths.map((most) => Array.from({ length: most + 1 }, (_, n) => " ".repeat(n)));
  let out = "";
  for (const row of rows) {
    let line = "";
    for (let i = 0; i < row.length; i++) {
      const cell = row[i]!;
      line += i === row.length - 1 ? cell : `${cell}${pads[i]![widths[i]! - width(cell)]}  `;
    }
    out += `${line.trimEnd()}\n`;
  }
  return out;
}

/**
 * The table of `loopx runs`, newest first (the caller's order); the PROJECT column with `project`.
 * `idPrefix`: the length of each id's shortest unique prefix, shown in bold.
 */
export function formatRunList(summaries: RunSummary[], options: { project?: boolean; idPrefix?: Map<string, number> } = {}): string {
  // COST and TOKENS only when a listed run had receipts: a user of none sees the table as before.
  // BRANCH only when a listed run had its own worktree (--worktree).
  const costs = summaries.some((run) => run.totals);
  const branches = summaries.some((run) => run.worktree);
  const rows = [["ID", "STATE", "STARTED", "DURATION", "ITER", ...(costs ? ["COST", "TOKENS"] : []), "TARGET", ...(branches ? ["BRANCH"] : []), ...(options.project === false ? [] : ["PROJECT"])]];
  for (const run of summaries) {
    const used = costs ? [run.totals ? describeCost(run.totals) || "-" : "", tokensCell(run.totals)] : [];
    rows.push([
      run.id,
      run.state,
      formatLocalTime(run.start),
      formatRunDuration(run),
      String(run.iterations),
      ...used,
      run.target,
      ...(branches ? [run.worktree?.branch ?? "-"] : []),
      ...(options.project === false ? [] : [run.project]),
    ]);
  }
  const table = formatTable(rows);
  const prefixes = options.idPrefix;
  if (!prefixes) return table;
  // After the layout (widths count characters, not escape sequences); ids are [0-9a-z] only.
  return table
    .split("\n")
    .map((line, i) => {
      const run = summaries[i - 1];
      const length = run && prefixes.get(run.id);
      return run && length && line.startsWith(run.id) ? `\x1b[1m${line.slice(0, length)}\x1b[22m${line.slice(length)}` : line;
    })
    .join("\n");
}

/** A proportional bar: `width` cells for `max`. */
export function durationBar(ms: number, max: number, width = 20): string {
  const filled = max <= 0 ? 0 : Math.max(ms > 0 ? 1 : 0, Math.round((ms / max) * width));
  const key = width * 1000 + filled;
  let bar = bars.get(key);
  if (bar === undefined) bars.set(key, (bar = "█".repeat(filled) + "·".repeat(width - filled)));
  return bar;
}
/** Bars by width and fill: one string each, however many rows show them. */
const bars = new Map<number, string>();

/** One iteration of `runs show`, kept small (100,000 of them: no event objects retained). */
interface DetailRow {
  n: number;
  target: string;
  startMs: number;
  /** Set once its iteration.end was read. */
  ms?: number;
  exit?: string;
  next?: string;
  result?: string;
  stderr?: string[];
  /** What its script's receipts added up to, when it sent any. */
  totals?: Totals;
}

/**
 * What `runs show` needs of a record, gathered event by event (a 100,000-iteration record is read
 * without keeping its events): the rows, the notes and gaps, and the events a summary needs.
 */
export class RunDetail {
  readonly rows: DetailRow[] = [];
  private readonly byN = new Map<number, DetailRow>();
  readonly notes: NoteEvent[] = [];
  readonly gaps: GapEvent[] = [];
  /** The run's receipts added up, every sitting and what a capped record dropped included. */
  readonly totals: RunTotals = emptyRunTotals();
  readonly warnings: WarningEvent[] = [];
  /** Where the run was resumed (`runs show` marks it above the first iteration of each sitting). */
  readonly resumes: RunResumeEvent[] = [];
  /** The end-of-run hook's outcomes (one per ending: a resumed run's hook runs again), shown last. */
  readonly hooks: RunHookEvent[] = [];
  /**
   * The run's own events (run.start, run.resume, pause/continue/stop, run.end), in record order:
   * with the last iteration.start/end, enough for summarizeRun.
   */
  private readonly runEvents: RecordEvent[] = [];
  private lastStart: RecordEvent | undefined;
  private lastEnd: RecordEvent | undefined;
  lastTime = "";

  add(event: RecordEvent): void {
    this.lastTime = event.time;
    switch (event.type) {
      case "iteration.start": {
        // A resumed run runs the interrupted iteration again: one row, the latest try, marked as a retry.
        const earlier = this.byN.get(event.n);
        if (earlier) Object.assign(earlier, retriedRow(earlier, event.target, Date.parse(event.time)));
        else {
          const row: DetailRow = { n: event.n, target: event.target, startMs: Date.parse(event.time) };
          this.rows.push(row);
          this.byN.set(event.n, row);
        }
        this.lastStart = event;
        break;
      }
      case "iteration.end": {
        this.lastEnd = event;
        const row = this.byN.get(event.n);
        if (!row || row.exit !== undefined) break;
        row.ms = event.durationMs;
        row.exit = exitOf(event);
        row.next = describeNext(event.output);
        row.result = event.output ? resultExcerpt(event.output.result) : resultExcerpt(event.error);
        const stderr = stderrLines(event);
        if (stderr.length) row.stderr = stderr;
        break;
      }
      case "note":
        this.notes.push(event);
        break;
      case "gap":
        this.gaps.push(event);
        if (event.receipts) addRunTotals(this.totals, event.receipts);
        break;
      case "receipt": {
        const receipt = recordedReceipt(event);
        if (!receipt) break;
        addReceipt(this.totals, receipt);
        const row = event.n === undefined ? undefined : this.byN.get(event.n);
        if (row) addTotals((row.totals ??= emptyTotals()), receiptTotals(receipt));
        break;
      }
      case "warning":
        this.warnings.push(event);
        break;
      case "run.resume":
        this.resumes.push(event);
        this.runEvents.push(event);
        break;
      case "run.hook":
        this.hooks.push(event);
        break;
      default:
        this.runEvents.push(event);
    }
  }

  /** The same detail from iteration `after` + 1 on (`runs show --last`). */
  from(after: number): RunDetail {
    const detail = new RunDetail();
    detail.rows.push(...this.rows.filter((row) => row.n > after));
    detail.notes.push(...this.notes.filter((note) => note.n === undefined || note.n > after));
    detail.gaps.push(...this.gaps.filter((gap) => gap.after >= after));
    addRunTotals(detail.totals, this.totals);
    detail.warnings.push(...this.warnings.filter((warning) => warning.n > after));
    detail.resumes.push(...this.resumes.filter((resume) => resume.iterations >= after));
    detail.hooks.push(...this.hooks);
    detail.lastTime = this.lastTime;
    return detail;
  }

  /** The events summarizeRun reads, in record order (a run.end stays last). */
  forSummary(): RecordEvent[] {
    const last = [this.lastStart, this.lastEnd].filter((event): event is RecordEvent => event !== undefined);
    const end = this.runEvents.at(-1)?.type === "run.end" ? this.runEvents.length - 1 : this.runEvents.length;
    return [...this.runEvents.slice(0, end), ...last, ...this.runEvents.slice(end)];
  }
}

/**
 * `loopx runs show`: a header, then one row per iteration with a bar proportional to its duration
 * (`hidden`: iterations left out before these, `--last`), and a failed script's last stderr lines.
 * `events`: the record's events, or a RunDetail already gathered from them.
 */
export function formatRunDetail(summary: RunSummary, events: RecordEvent[] | RunDetail, now: number, hidden = 0): string {
  let detail: RunDetail;
  if (events instanceof RunDetail) detail = events;
  else {
    detail = new RunDetail();
    for (const event of events) detail.add(event);
  }
  const headerLines = [
    `run ${summary.id} · ${summary.state === "running" ? "running" : summary.ending ?? summary.state} · ` +
      `${summary.iterations} iteration${summary.iterations === 1 ? "" : "s"} · ${formatRunDuration(summary)}`,
    `started ${formatLocalTime(summary.start)} · ${summary.target} · ${summary.project} · pid ${summary.pid} · loopx ${summary.version} (${summary.runtime})`,
    ...(summary.worktree ? [`worktree ${summary.worktree.branch} · ${summary.worktree.path}`] : []),
    ...(summary.message !== undefined && summary.state !== "stopped" && summary.state !== "limit" ? [summary.message] : []),
    ...(detail.totals.receipts > 0 ? totalsLines(detail.totals) : []),
  ];
  const header = headerLines.map((line) => `${shownText(line)}\n`).join("");
  // A run that crashed without a run.end: its open iteration lasted until its last sign of life at least.
  const until = summary.state === "running" ? now : summary.durationAtLeast ? Date.parse(summary.start) + summary.durationMs : Date.parse(detail.lastTime);
  const before = hidden > 0 ? [`… ${hidden} earlier iteration${hidden === 1 ? "" : "s"} not shown (--last)`] : [];
  const iterations = detail.rows;
  const hooks = detail.hooks.flatMap(describeHook).map((line) => `${line}\n`).join("");
  if (iterations.length === 0) return header + [...before, ...detail.notes.map(describeNote)].map((line) => `${line}\n`).join("") + hooks;
  const msOf = (row: DetailRow) => row.ms ?? Math.max(0, until - row.startMs);
  const max = iterations.reduce((most, row) => Math.max(most, msOf(row)), 0);
  // COST and TOKENS only for a run whose scripts sent receipts.
  const costs = detail.totals.receipts > 0;
  const rows = [["N", "TARGET", "DURATION", "", "EXIT", "NEXT", ...(costs ? ["COST", "TOKENS"] : []), "RESULT"]];
  for (const row of iterations) {
    const open = row.exit === undefined;
    const ms = msOf(row);
    rows.push([
      String(row.n),
      row.target,
      `${open && summary.durationAtLeast ? "≥" : ""}${formatElapsed(ms)}`,
      durationBar(ms, max),
      open ? (summary.state === "running" ? "running" : "-") : row.exit!,
      open ? "" : row.next!,
      ...(costs ? [row.totals ? describeCost(row.totals) : "", tokensCell(row.totals)] : []),
      open ? "" : row.result!,
    ]);
  }
  const { above, under, orphans } = linesAround(detail, iterations);
  const table = formatTable(rows);
  if (under.size === 0 && orphans.length === 0 && above.size === 0) return `${header}${before.map((line) => `${line}\n`).join("")}${table}${hooks}`;
  const lines = table.split("\n");
  const out = [...before, lines[0]!];
  iterations.forEach((row, i) => {
    out.push(...(above.get(row.n) ?? []), lines[i + 1]!, ...(under.get(row.n) ?? []));
  });
  out.push(...orphans);
  return `${header}${out.join("\n")}\n${hooks}`;
}

/**
 * The lines around `runs show`'s rows. Under each row: the notes its script wrote, a failed
 * script's last stderr lines, loopx's warnings, and where the record's size cap dropped
 * iterations, a line saying how many. Above a row: where a resume began, and a gap before the
 * first row shown (a full disk lost the first iterations). Notes of no row shown: orphans.
 */
function linesAround(detail: RunDetail, iterations: DetailRow[]): { above: Map<number, string[]>; under: Map<number, string[]>; orphans: string[] } {
  const under = new Map<number, string[]>();
  const above = new Map<number, string[]>();
  const put = (map: Map<number, string[]>, n: number, line: string) => map.set(n, [...(map.get(n) ?? []), line]);
  const orphans: string[] = [];
  const known = new Set(iterations.map((row) => row.n));
  for (const event of detail.notes) {
    if (event.n !== undefined && known.has(event.n)) put(under, event.n, describeNote(event));
    else orphans.push(describeNote(event));
  }
  for (const row of iterations) for (const line of row.stderr ?? []) put(under, row.n, line);
  for (const warning of detail.warnings) if (known.has(warning.n)) put(under, warning.n, describeWarning(warning));
  for (const resume of detail.resumes) put(above, resume.iterations + 1, describeResume(resume));
  const firstN = iterations[0]!.n;
  for (const gap of detail.gaps) {
    if (gap.after < firstN) put(above, firstN, describeGap(gap));
    else put(under, gap.after, describeGap(gap));
  }
  return { above, under, orphans };
}

/** Iteration `earlier.n` started again (a resume re-runs the iteration the run ended in): the new try, marked. */
function retriedRow(earlier: DetailRow, target: string, startMs: number): DetailRow {
  return { n: earlier.n, target: target.endsWith(" (retry)") ? target : `${target} (retry)`, startMs, ms: undefined, exit: undefined, next: undefined, result: undefined, stderr: undefined, totals: earlier.totals };
}

/** A TOKENS cell: blank for receipts that reported a cost only (no "0"). */
function tokensCell(totals: Totals | undefined): string {
  return totals && (tokenSum(totals) > 0 || !describeCost(totals)) ? formatTokens(tokenSum(totals)) : "";
}
