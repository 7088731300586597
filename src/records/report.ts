import { shownText } from "../core/untrusted-text.js";
import {
  EVENT_VERSION,
  type IterationEndEvent,
  type IterationStartEvent,
  type GapEvent,
  type NoteEvent,
  type RecordEvent,
  type RunEndEvent,
  type RunEndReason,
  type RunStartEvent,
} from "./events.js";

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
    case "timed-out":
      return end.message ?? "timed out";
    case "aborted":
      return "aborted";
    case "returned":
      return "left early by its caller";
  }
}

/** "stopped by ralph:check · 3 iterations · 1m05s" */
export function describeRunEnd(end: RunEndEvent, maxIterations: number | null, last?: IterationEndEvent): string {
  return `${describeEnding(end, maxIterations, last)} · ${end.iterations} iteration${end.iterations === 1 ? "" : "s"} · ${formatElapsed(end.durationMs)}`;
}

/** The state `loopx runs` shows: how it ended, `running`, or `crashed` (gone without `run.end`). */
export type RunState = RunEndReason | "running" | "crashed";

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
export function parseRecord(text: string): ParsedRecord {
  const events: RecordEvent[] = [];
  let newerVersion: number | undefined;
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof value !== "object" || value === null) continue;
    const v = (value as { v?: unknown }).v;
    if (typeof v === "number" && v > EVENT_VERSION) {
      newerVersion = Math.max(newerVersion ?? 0, v);
      continue;
    }
    if (v !== EVENT_VERSION || typeof (value as { type?: unknown }).type !== "string") continue;
    events.push(value as RecordEvent);
  }
  return newerVersion === undefined ? { events } : { events, newerVersion };
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
}

export function startEvent(events: RecordEvent[]): RunStartEvent | undefined {
  const first = events[0];
  return first?.type === "run.start" ? first : undefined;
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
export function summarizeRun(id: string, events: RecordEvent[], alive: (start: RunStartEvent) => boolean, now: number): RunSummary | undefined {
  const start = startEvent(events);
  if (!start) return undefined;
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
    project: start.projectRoot,
    pid: start.pid,
    maxIterations: start.maxIterations,
    runtime: start.runtime,
    version: start.version,
  };
  if (end) {
    summary.state = end.reason;
    summary.durationMs = end.durationMs;
    summary.iterations = end.iterations;
    summary.exitCode = end.exitCode;
    summary.ending = describeEnding(end, start.maxIterations, lastIterationEnd(events));
    if (end.message !== undefined) summary.message = end.message;
  } else if (alive(start)) {
    summary.durationMs = Math.max(0, now - startMs);
  } else {
    summary.state = "crashed";
    summary.durationMs = Math.max(0, Date.parse(events[events.length - 1]!.time) - startMs);
    summary.ending = `crashed: process ${start.pid} is gone without run.end`;
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
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, [...cell].length)));
  return rows
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell + " ".repeat(widths[i]! - [...cell].length)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n")
    .concat(rows.length ? "\n" : "");
}

/**
 * The table of `loopx runs`, newest first (the caller's order); the PROJECT column with `project`.
 * `idPrefix`: the length of each id's shortest unique prefix, shown in bold.
 */
export function formatRunList(summaries: RunSummary[], options: { project?: boolean; idPrefix?: Map<string, number> } = {}): string {
  const rows = [["ID", "STATE", "STARTED", "DURATION", "ITER", "TARGET", ...(options.project === false ? [] : ["PROJECT"])]];
  for (const run of summaries) {
    rows.push([run.id, run.state, formatLocalTime(run.start), formatElapsed(run.durationMs), String(run.iterations), run.target, ...(options.project === false ? [] : [run.project])]);
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
  return "█".repeat(filled) + "·".repeat(width - filled);
}

/** A one-line excerpt of `result`: whitespace collapsed, cut to `max` characters. */
export function resultExcerpt(result: string | undefined, max = 40): string {
  if (result === undefined) return "";
  const flat = result.replace(/\s+/g, " ").trim();
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

/**
 * `loopx runs show`: a header, then one row per iteration with a bar proportional to its duration
 * (`hidden`: iterations left out before these, `--last`), and a failed script's last stderr lines.
 */
export function formatRunDetail(summary: RunSummary, events: RecordEvent[], now: number, hidden = 0): string {
  const headerLines = [
    `run ${summary.id} · ${summary.state === "running" ? "running" : summary.ending ?? summary.state} · ` +
      `${summary.iterations} iteration${summary.iterations === 1 ? "" : "s"} · ${formatElapsed(summary.durationMs)}`,
    `started ${formatLocalTime(summary.start)} · ${summary.target} · ${summary.project} · pid ${summary.pid} · loopx ${summary.version} (${summary.runtime})`,
    ...(summary.message !== undefined && summary.state !== "stopped" && summary.state !== "limit" ? [summary.message] : []),
  ];
  const header = headerLines.map((line) => `${shownText(line)}\n`).join("");
  const iterations: Array<{ n: number; target: string; ms: number; end?: IterationEndEvent }> = [];
  const byN = new Map<number, (typeof iterations)[number]>(); // 100,000 rows: no search per row
  const until = summary.state === "running" ? now : Date.parse(lastTime(events));
  for (const event of events) {
    if (event.type === "iteration.start") {
      const row = { n: event.n, target: event.target, ms: Math.max(0, until - Date.parse(event.time)) };
      iterations.push(row);
      byN.set(event.n, row);
    } else if (event.type === "iteration.end") {
      const row = byN.get(event.n);
      if (row) {
        row.ms = event.durationMs;
        row.end = event;
      }
    }
  }
  const notes = events.filter((event): event is NoteEvent => event.type === "note");
  const gaps = events.filter((event): event is GapEvent => event.type === "gap");
  const before = hidden > 0 ? [`… ${hidden} earlier iteration${hidden === 1 ? "" : "s"} not shown (--last)`] : [];
  if (iterations.length === 0) return header + [...before, ...notes.map(describeNote)].map((line) => `${line}\n`).join("");
  const max = iterations.reduce((most, row) => Math.max(most, row.ms), 0);
  const rows = [["N", "TARGET", "DURATION", "", "EXIT", "NEXT", "RESULT"]];
  for (const row of iterations) {
    const open = row.end === undefined;
    rows.push([
      String(row.n),
      row.target,
      formatElapsed(row.ms),
      durationBar(row.ms, max),
      open ? (summary.state === "running" ? "running" : "-") : exitOf(row.end!),
      open ? "" : describeNext(row.end!.output),
      open ? "" : row.end!.output ? resultExcerpt(row.end!.output.result) : resultExcerpt(row.end!.error),
    ]);
  }
  // Under each row: the notes its script wrote, a failed script's last stderr lines, and where
  // the record's size cap dropped iterations, a line saying how many.
  const under = new Map<number, string[]>();
  const add = (n: number, line: string) => under.set(n, [...(under.get(n) ?? []), line]);
  const known = new Set(iterations.map((row) => row.n));
  const orphans: string[] = [];
  for (const event of notes) {
    if (event.n !== undefined && known.has(event.n)) add(event.n, describeNote(event));
    else orphans.push(describeNote(event));
  }
  for (const row of iterations) for (const line of stderrLines(row.end)) add(row.n, line);
  for (const gap of gaps) add(gap.after, describeGap(gap));
  const lines = formatTable(rows).split("\n");
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

function lastTime(events: RecordEvent[]): string {
  return events[events.length - 1]!.time;
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
  }
}

/** "  note 19:55:02 · ralph: waiting for the usage limit …" (a script's note, local time). */
export function describeNote(event: NoteEvent): string {
  return `  note ${formatLocalTime(event.time).slice(11)} · ${shownText(String(event.text))}`;
}
