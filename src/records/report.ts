import { LoopxError } from "../core/errors.js";
import { shownText } from "../core/untrusted-text.js";
import {
  EVENT_VERSION,
  type IterationEndEvent,
  type IterationStartEvent,
  type GapEvent,
  type WarningEvent,
  type NoteEvent,
  type RecordEvent,
  type RunEndEvent,
  type RunEndReason,
  type RunResumeEvent,
  type RunStartEvent,
} from "../core/events.js";
import { addReceipt, addRunTotals, addTotals, describeCost, emptyRunTotals, emptyTotals, formatTokens, receiptTotals, recordedReceipt, tokenSum, type RunTotals, type Totals } from "../core/receipts.js";
import { describeReceipt, totalsLines } from "./receipts-report.js";


/** The one wording for a record this loopx cannot read: written by a newer loopx. */
export function newerRecordError(id: string, version: number): LoopxError {
  return new LoopxError(`run ${id} was recorded by a newer loopx (record format v${version}; this loopx reads v${EVENT_VERSION})`);
}

/**
 * Pure reading and wording of run events (loopx's own extension of the spec): what terminal
 * progress prints, and what `loopx runs` makes of a run record. No I/O here: the reader in
 * src/records/store.ts gives the text of a record and says whether its process is alive.
 */

/** An elapsed time for display, rounded: 850ms, 12.3s, 4m05s, 2h03m (exact limits: core/duration.ts formatDuration). */
export function formatElapsed(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 60_000) return `${(Math.floor(ms / 100) / 10).toFixed(1)}s`;
  const seconds = Math.floor(ms / 1000);
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, "0")}s`;
  return `${Math.floor(seconds / 3600)}h${String(Math.floor(seconds / 60) % 60).padStart(2, "0")}m`;
}

/** "iteration 3/10 · ralph:index · 12.3s" (the count as `-n` counts it). */
export function describeIterationStart(event: Pick<IterationStartEvent, "n" | "target">, maxIterations: number | null, elapsedMs: number): string {
  return `iteration ${event.n}${maxIterations === null ? "" : `/${maxIterations}`} · ${event.target} · ${formatElapsed(elapsedMs)}`;
}

/**
 * How a run ended, in words: stopped by <target> / reached -n N / <target> exited with code X /
 * interrupted by SIGINT / timed out. `last` is the run's last iteration.end, if any.
 */
export function describeEnding(end: Pick<RunEndEvent, "reason" | "target" | "signal" | "iterations" | "message">, maxIterations: number | null, last?: IterationEndEvent): string {
  switch (end.reason) {
    case "stopped":
      return `stopped by ${end.target ?? last?.target ?? "a script"}`;
    case "stopped-on-request":
      return "stopped on request";
    case "limit":
      return `reached -n ${maxIterations ?? end.iterations}`;
    case "failed": {
      const target = end.target ?? last?.target ?? "the run";
      if (last && last.n === end.iterations) {
        if (last.exitCode !== null && last.exitCode !== 0) return `${target} exited with code ${last.exitCode}`;
        if (last.signal) return `${target} was killed by ${last.signal}`;
      }
      // The reason itself (an invalid goto, a script that cannot start): the summary line is the
      // one failure line a terminal shows.
      return end.message ?? `failed at ${target}`;
    }
    case "interrupted":
      return `interrupted by ${end.signal ?? "a signal"}`;
    case "hangup":
      return "hung up (SIGHUP)";
    case "quit":
      return "quit (SIGQUIT)";
    case "killed":
      return end.signal ? `killed by ${end.signal}` : "killed (signal unknown)";
    case "crashed":
      return end.signal ? `crashed (${end.signal})` : "crashed";
    case "timed-out":
      return end.message ?? "timed out";
    case "aborted":
      return "aborted";
    case "returned":
      return "left early by its caller";
    case "budget":
      return end.message ?? "budget reached";
  }
}

/** "stopped by ralph:check · 3 iterations · 1m05s" */
export function describeRunEnd(end: RunEndEvent, maxIterations: number | null, last?: IterationEndEvent): string {
  return `${describeEnding(end, maxIterations, last)} · ${end.iterations} iteration${end.iterations === 1 ? "" : "s"} · ${formatElapsed(end.durationMs)}`;
}

/**
 * The state `loopx runs` shows: how it ended, `running` (`paused` / `stopping` after `loopx runs
 * pause` / `stop`), or `crashed` (gone without `run.end`).
 */
export type RunState = RunEndReason | "running" | "paused" | "stopping" | "crashed";

/** A record's events, as far as they can be read. */
export interface ParsedRecord {
  /** The run's events and its scripts' notes, in the order they were written. */
  events: RecordEvent[];
  /** Set when a line was written by a newer loopx (a `v` this one does not know). */
  newerVersion?: number;
}

/**
 * Parses a record's JSON lines. A line that is not complete JSON (the event in flight when the
 * process died) is skipped; a line of a newer format makes the whole record "newer", never misread.
 */
export function parseRecord(text: string, sink?: (event: RecordEvent) => void): ParsedRecord {
  const events: RecordEvent[] = [];
  const take = sink ?? ((event: RecordEvent) => void events.push(event));
  let newerVersion: number | undefined;
  for (let from = 0; from < text.length; ) {
    let to = text.indexOf("\n", from);
    if (to < 0) to = text.length;
    const line = text.slice(from, to);
    from = to + 1;
    if (line.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    const event = recordEvent(value);
    if (typeof event === "number") newerVersion = Math.max(newerVersion ?? 0, event);
    else if (event) take(event);
  }
  return newerVersion === undefined ? { events } : { events, newerVersion };
}

/**
 * One parsed line of a record: its event; the version of a newer format (never misread); or
 * undefined for anything else.
 */
export function recordEvent(value: unknown): RecordEvent | number | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const v = (value as { v?: unknown }).v;
  if (typeof v === "number" && v > EVENT_VERSION) return v;
  if (v !== EVENT_VERSION || typeof (value as { type?: unknown }).type !== "string") return undefined;
  return value as RecordEvent;
}

/** One row of `loopx runs`. */
export interface RunSummary {
  id: string;
  state: RunState;
  /** ISO 8601 time of `run.start`. */
  start: string;
  durationMs: number;
  iterations: number;
  target: string;
  project: string;
  pid: number;
  maxIterations: number | null;
  runtime: string;
  version: string;
  /** The CLI's exit code, once ended. */
  exitCode?: number | null;
  /** The ending in words ("stopped by ralph:check"), once ended. */
  ending?: string;
  message?: string;
  /** What its receipts added up to (when it had any): from run.end, or the whole record (runs.ts). */
  totals?: RunTotals;
  /** --worktree: the run's branch and the worktree it works in (`project` is the tree it was started from). */
  worktree?: { branch: string; path: string };
}

/**
 * The project a run belongs to: where it was started. A --worktree run works in its worktree, at
 * the same place below the worktree's top as the project is below its repository's.
 */
export function projectOf(start: RunStartEvent): string {
  const worktree = start.worktree;
  if (!worktree || !start.projectRoot.startsWith(worktree.path)) return start.projectRoot;
  return `${worktree.repo}${start.projectRoot.slice(worktree.path.length)}`;
}

export function startEvent(events: RecordEvent[]): RunStartEvent | undefined {
  const first = events[0];
  return first?.type === "run.start" ? first : undefined;
}

/** The process running the loop now and since when: `run.start`'s, or the last `run.resume`'s. */
export function lastSitting(events: RecordEvent[]): RunStartEvent | RunResumeEvent | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!;
    if (event.type === "run.resume" || event.type === "run.start") return event;
  }
  return undefined;
}

/** The steering state of a run that is going: paused, stopping, or (undefined) running. */
function steering(events: RecordEvent[]): "paused" | "stopping" | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const type = events[i]!.type;
    if (type === "run.stop") return "stopping";
    if (type === "run.pause") return "paused";
    if (type === "run.continue" || type === "run.resume" || type === "run.start") return undefined;
  }
  return undefined;
}

export function lastIterationEnd(events: RecordEvent[]): IterationEndEvent | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!;
    if (event.type === "iteration.end") return event;
  }
  return undefined;
}

/**
 * What a record says about its run (`events`: all of them, or its first and last ones). `alive` tells whether the run's process still exists (asked
 * only for records without `run.end`); `now` is used for the duration of a running run.
 */
export function summarizeRun(id: string, events: RecordEvent[], alive: (sitting: Pick<RunStartEvent, "pid" | "time">) => boolean, now: number): RunSummary | undefined {
  const start = startEvent(events);
  if (!start) return undefined;
  const sitting = lastSitting(events)!;
  const end = events[events.length - 1]?.type === "run.end" ? (events[events.length - 1] as RunEndEvent) : undefined;
  const startMs = Date.parse(start.time);
  const summary: RunSummary = {
    id,
    state: "running",
    start: start.time,
    durationMs: 0,
    // The highest iteration seen: `events` may be a record's first line and its last lines only.
    iterations: events.reduce((max, event) => (event.type === "iteration.start" || event.type === "iteration.end" ? Math.max(max, event.n) : max), 0),
    target: start.target,
    project: projectOf(start),
    pid: sitting.pid,
    maxIterations: sitting.maxIterations,
    runtime: start.runtime,
    version: start.version,
    ...(start.worktree ? { worktree: { branch: start.worktree.branch, path: start.worktree.path } } : {}),
  };
  if (end) {
    summary.state = end.reason;
    summary.durationMs = end.durationMs;
    summary.iterations = end.iterations;
    summary.exitCode = end.exitCode;
    summary.ending = describeEnding(end, start.maxIterations, lastIterationEnd(events));
    if (end.message !== undefined) summary.message = end.message;
    if (end.receipts) summary.totals = end.receipts;
  } else if (alive(sitting)) {
    summary.state = steering(events) ?? "running";
    summary.durationMs = Math.max(0, now - startMs);
  } else {
    summary.state = "crashed";
    summary.durationMs = Math.max(0, Date.parse(events[events.length - 1]!.time) - startMs);
    summary.ending = `crashed: process ${sitting.pid} is gone without run.end`;
  }
  return summary;
}

/** 2026-11-22 09:01:02 in local time. */
export function formatLocalTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const two = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
}

/**
 * Left-aligned columns separated by two spaces; the last column is not padded. Cells come from
 * records (untrusted): their control characters are shown escaped.
 */
export function formatTable(cells: string[][]): string {
  const rows = cells.map((row) => row.map(shownText));
  // Characters, not UTF-16 units; spread only what holds a surrogate pair (100,000 rows, `runs show`).
  const width = (cell: string) => (/[\ud800-\udbff]/.test(cell) ? [...cell].length : cell.length);
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, width(cell))));
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
  // COST and TOKENS only when a listed run had receipts, BRANCH only when one had its own worktree
  // (--worktree): a user of neither sees the table as before.
  const costs = summaries.some((run) => run.totals);
  const branches = summaries.some((run) => run.worktree);
  const rows = [["ID", "STATE", "STARTED", "DURATION", "ITER", ...(costs ? ["COST", "TOKENS"] : []), "TARGET", ...(branches ? ["BRANCH"] : []), ...(options.project === false ? [] : ["PROJECT"])]];
  for (const run of summaries) {
    const used = costs ? [run.totals ? describeCost(run.totals) || "-" : "", run.totals ? formatTokens(tokenSum(run.totals)) : ""] : [];
    rows.push([
      run.id,
      run.state,
      formatLocalTime(run.start),
      formatElapsed(run.durationMs),
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

/** A one-line excerpt of `result`: whitespace collapsed, cut to `max` characters. */
export function resultExcerpt(result: string | undefined, max = 40): string {
  if (result === undefined) return "";
  // Only the start is shown: a 4 KiB result is not flattened whole (100,000 rows in `runs show`).
  const start = result.slice(0, 4 * max);
  const flat = /\s\s|[^\S ]|^ | $/.test(start) ? start.replace(/\s+/g, " ").trim() : start;
  if (flat.length <= max) return flat; // fewer UTF-16 units than max: fewer characters too
  if (!/[\ud800-\udbff]/.test(flat)) return `${flat.slice(0, max - 1)}…`;
  const chars = [...flat];
  return chars.length > max ? `${chars.slice(0, max - 1).join("")}…` : flat;
}

/** "goto ralph:two", "stop", "goto x, stop" or "". */
export function describeNext(output: IterationEndEvent["output"]): string {
  const parts: string[] = [];
  if (output?.goto !== undefined) parts.push(`goto ${output.goto}`);
  if (output?.stop === true) parts.push("stop");
  return parts.join(", ");
}

function exitOf(event: IterationEndEvent): string {
  if (event.signal) return event.signal;
  if (event.exitCode === null) return "error";
  return String(event.exitCode);
}

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
        // A resumed run runs the interrupted iteration again: its row is the latest try.
        const row: DetailRow = { n: event.n, target: event.target, startMs: Date.parse(event.time) };
        this.rows.push(row);
        this.byN.set(event.n, row);
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
      `${summary.iterations} iteration${summary.iterations === 1 ? "" : "s"} · ${formatElapsed(summary.durationMs)}`,
    `started ${formatLocalTime(summary.start)} · ${summary.target} · ${summary.project} · pid ${summary.pid} · loopx ${summary.version} (${summary.runtime})`,
    ...(summary.worktree ? [`worktree ${summary.worktree.branch} · ${summary.worktree.path}`] : []),
    ...(summary.message !== undefined && summary.state !== "stopped" && summary.state !== "limit" ? [summary.message] : []),
    ...(detail.totals.receipts > 0 ? totalsLines(detail.totals) : []),
  ];
  const header = headerLines.map((line) => `${shownText(line)}\n`).join("");
  const until = summary.state === "running" ? now : Date.parse(detail.lastTime);
  const before = hidden > 0 ? [`… ${hidden} earlier iteration${hidden === 1 ? "" : "s"} not shown (--last)`] : [];
  const iterations = detail.rows;
  if (iterations.length === 0) return header + [...before, ...detail.notes.map(describeNote)].map((line) => `${line}\n`).join("");
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
      formatElapsed(ms),
      durationBar(ms, max),
      open ? (summary.state === "running" ? "running" : "-") : row.exit!,
      open ? "" : row.next!,
      ...(costs ? [row.totals ? describeCost(row.totals) : "", row.totals ? formatTokens(tokenSum(row.totals)) : ""] : []),
      open ? "" : row.result!,
    ]);
  }
  // Under each row: the notes its script wrote, a failed script's last stderr lines, and where
  // the record's size cap dropped iterations, a line saying how many.
  const under = new Map<number, string[]>();
  const add = (n: number, line: string) => under.set(n, [...(under.get(n) ?? []), line]);
  const orphans: string[] = [];
  const known = new Set(iterations.map((row) => row.n));
  for (const event of detail.notes) {
    if (event.n !== undefined && known.has(event.n)) add(event.n, describeNote(event));
    else orphans.push(describeNote(event));
  }
  for (const row of iterations) for (const line of row.stderr ?? []) add(row.n, line);
  for (const warning of detail.warnings) if (known.has(warning.n)) add(warning.n, describeWarning(warning));
  for (const gap of detail.gaps) add(gap.after, describeGap(gap));
  const table = formatTable(rows);
  if (under.size === 0 && orphans.length === 0) return `${header}${before.map((line) => `${line}\n`).join("")}${table}`;
  const lines = table.split("\n");
  const out = [...before, lines[0]!];
  iterations.forEach((row, i) => out.push(lines[i + 1]!, ...(under.get(row.n) ?? [])));
  out.push(...orphans);
  return `${header}${out.join("\n")}\n`;
}

/** A failed script's last stderr lines, as the record keeps them (escaped, indented). */
function stderrLines(end: IterationEndEvent | undefined): string[] {
  if (!end?.stderr) return [];
  return end.stderr.replace(/\n$/, "").split("\n").map((line) => `  stderr │ ${shownText(line)}`);
}

/** "  … 4,210 iterations (1.2 MB) dropped here: the record's size cap" */
export function describeGap(gap: GapEvent): string {
  return `  … ${gap.iterations} iteration${gap.iterations === 1 ? "" : "s"} (${gap.bytes} bytes of record) dropped here: the record's size cap (LOOPX_RECORD_MAX_BYTES)`;
}

/** One line of `loopx runs tail` per event (what the record says, control characters escaped). */
export function formatTailEvent(event: RecordEvent, start: RunStartEvent | undefined, last: IterationEndEvent | undefined): string {
  const line = shownText(describeTailEvent(event, start, last));
  return event.type === "iteration.end" ? [line, ...stderrLines(event)].join("\n") : line;
}

function describeTailEvent(event: RecordEvent, start: RunStartEvent | undefined, last: IterationEndEvent | undefined): string {
  switch (event.type) {
    case "run.start":
      return `run ${event.run} started ${formatLocalTime(event.time)} · ${event.target} · ${event.projectRoot} · pid ${event.pid}`;
    case "iteration.start":
      return describeIterationStart(event, start?.maxIterations ?? null, start ? Date.parse(event.time) - Date.parse(start.time) : 0);
    case "iteration.end": {
      const next = describeNext(event.output);
      const result = event.output ? resultExcerpt(event.output.result, 60) : resultExcerpt(event.error, 60);
      return `  ${event.target} ${formatElapsed(event.durationMs)} · exit ${exitOf(event)}${next ? ` · ${next}` : ""}${result ? ` · ${result}` : ""}`;
    }
    case "run.end":
      return describeRunEnd(event, start?.maxIterations ?? null, last);
    case "note":
      return describeNote(event);
    case "gap":
      return describeGap(event);
    case "receipt":
      return describeReceipt(event, formatLocalTime);
    case "warning":
      return describeWarning(event);
    case "run.resume":
      return `run ${event.run} resumed ${formatLocalTime(event.time)} at ${event.target} · iteration ${event.iterations + 1} · pid ${event.pid}`;
    default:
      return describeSteering(event) ?? "";
  }
}

/** A pause, continuation or stop request in words (progress lines, `runs tail`); undefined for other events. */
export function describeSteering(event: RecordEvent): string | undefined {
  const at = formatLocalTime(event.time).slice(11);
  switch (event.type) {
    case "run.pause":
      return `paused at ${at}${event.running ? ` · ${event.running} finishes, then the run waits` : ""} (loopx runs continue ${event.run})`;
    case "run.continue":
      return `continued at ${at} after ${formatElapsed(event.pausedMs)} paused`;
    case "run.stop":
      return event.now ? `stop now requested at ${at}` : `stop requested at ${at}${event.running ? ` · ${event.running} finishes, no further script starts` : ""}`;
    default:
      return undefined;
  }
}

/** "  warning · main:index: its output ..." (loopx's own words around a script's text, escaped). */
function describeWarning(event: WarningEvent): string {
  return `  warning · ${shownText(String(event.message))}`;
}

/** "  note 19:55:02 · ralph: waiting for the usage limit …" (a script's note, local time). */
export function describeNote(event: NoteEvent): string {
  return `  note ${formatLocalTime(event.time).slice(11)} · ${shownText(String(event.text))}`;
}
