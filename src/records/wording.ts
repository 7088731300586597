import { shownText } from "../core/untrusted-text.js";
import type { GapEvent, IterationEndEvent, IterationStartEvent, NoteEvent, RecordEvent, RunEndEvent, RunResumeEvent, RunStartEvent, WarningEvent } from "../core/events.js";
import { describeReceipt } from "./receipts-report.js";
import { describeCost, formatTokens, tokenSum, type Totals } from "../core/receipts.js";

/**
 * Run events in words (pure; loopx's own extension of the spec): what terminal progress prints,
 * the endings `loopx runs` shows, and the lines of `loopx runs tail`. Text from records is
 * untrusted: control characters are shown escaped.
 */

/** An elapsed time for display, rounded: 850ms, 12.3s, 4m05s, 2h03m (exact limits: core/duration.ts formatDuration). */
export function formatElapsed(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 60_000) return `${(Math.floor(ms / 100) / 10).toFixed(1)}s`;
  const seconds = Math.floor(ms / 1000);
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, "0")}s`;
  return `${Math.floor(seconds / 3600)}h${String(Math.floor(seconds / 60) % 60).padStart(2, "0")}m`;
}

/** A run's duration for display: `≥1.5s` when it is a lower bound (a run that crashed without a run.end). */
export function formatRunDuration(run: { durationMs: number; durationAtLeast?: true }): string {
  return `${run.durationAtLeast ? "≥" : ""}${formatElapsed(run.durationMs)}`;
}

/** 2026-11-22 09:01:02 in local time. */
export function formatLocalTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const two = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
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
    case "stalled":
      return end.message ?? "stalled";
  }
}

/** "stopped by ralph:check · 3 iterations · 1m05s" */
export function describeRunEnd(end: RunEndEvent, maxIterations: number | null, last?: IterationEndEvent): string {
  return `${describeEnding(end, maxIterations, last)} · ${end.iterations} iteration${end.iterations === 1 ? "" : "s"} · ${formatElapsed(end.durationMs)}`;
}

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
  if (output?.goto === undefined && output?.stop !== true) return ""; // most iterations: nothing to build
  const parts: string[] = [];
  if (output?.goto !== undefined) parts.push(`goto ${output.goto}`);
  if (output?.stop === true) parts.push("stop");
  return parts.join(", ");
}

export function exitOf(event: IterationEndEvent): string {
  if (event.signal) return event.signal;
  if (event.exitCode === null) return "error";
  return String(event.exitCode);
}

/** A failed script's last stderr lines, as the record keeps them (escaped, indented). */
export function stderrLines(end: IterationEndEvent | undefined): string[] {
  if (!end?.stderr) return [];
  return end.stderr.replace(/\n$/, "").split("\n").map((line) => `  stderr │ ${shownText(line)}`);
}

/** "  … 4,210 iterations (1.2 MB) dropped here: the record's size cap" */
export function describeGap(gap: GapEvent): string {
  const what = `  … ${gap.iterations} iteration${gap.iterations === 1 ? "" : "s"} (${gap.bytes} bytes of record)`;
  if (gap.reason === "disk") return `${what} lost here: the record could not be written (disk full); the run went on`;
  return `${what} dropped here: the record's size cap (LOOPX_RECORD_MAX_BYTES)`;
}

/** "  note 19:55:02 · ralph: waiting for the usage limit …" (a script's note, local time). */
export function describeNote(event: NoteEvent): string {
  return `  note ${formatLocalTime(event.time).slice(11)} · ${shownText(String(event.text))}`;
}

/** "  warning · main:index: its output ..." (loopx's own words around a script's text, escaped). */
export function describeWarning(event: WarningEvent): string {
  return `  warning · ${shownText(String(event.message))}`;
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
    case "run.stall":
      return `${event.message} (at ${at})`;
    default:
      return undefined;
  }
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

/** The line under the table naming the runs listed from their control channels. */
export function unrecordedLine(summaries: ReadonlyArray<{ id: string; recorded?: false }>): string {
  const ids = summaries.filter((summary) => summary.recorded === false).map((summary) => summary.id);
  if (ids.length === 0) return "";
  return `not recorded (the record could not be written: a full disk?): ${ids.join(", ")} — listed from ${ids.length === 1 ? "its control channel" : "their control channels"}\n`;
}

/** "── resumed 15:02:03 at main:index · pid 4242 ──", above the first iteration of a sitting. */
export function describeResume(event: RunResumeEvent): string {
  return shownText(`── resumed ${formatLocalTime(event.time)} at ${event.target} · pid ${event.pid} ──`);
}

/** A TOKENS cell: blank for receipts that reported a cost only (no "0"). */
export function tokensCell(totals: Totals | undefined): string {
  return totals && (tokenSum(totals) > 0 || !describeCost(totals)) ? formatTokens(tokenSum(totals)) : "";
}
