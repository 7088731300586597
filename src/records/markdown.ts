import { shownText } from "../core/untrusted-text.js";
import { describeCost, describeTotals, formatTokens, tokenSum, UNKNOWN_MODEL, type RunTotals } from "../core/receipts.js";
import { describeNote, formatElapsed, formatLocalTime, formatRunDuration } from "./wording.js";
import type { RunDetail } from "./run-detail.js";
import type { RunSummary } from "./run-state.js";

/**
 * `loopx runs show <id> --markdown` (loopx's own addition): a run's receipt as GitHub-flavoured
 * Markdown — the GitHub Action writes it to the job summary, and it pastes into an issue or a pull
 * request as well. Record text (targets, results, notes, messages) is untrusted: it is shown as
 * text, never as Markdown or HTML (see markdownText).
 */

/** Iterations the table shows: the last ones (a summary is read, not searched). */
export const MARKDOWN_ROWS = 20;

/**
 * `text` as literal Markdown text: control characters escaped as on a terminal (shownText), `&`,
 * `<` and `>` as entities (no HTML), every ASCII punctuation character but `;` backslash-escaped (no
 * emphasis, link, heading, list, table cell break or code span can start).
 */
export function markdownText(text: string): string {
  return shownText(text)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/[!"#$%'()*+,\-./:=?@[\\\]^_`{|}~]/g, "\\$&"); // not ";": it ends the entities above
}

const row = (cells: string[]) => `| ${cells.join(" | ")} |`;

/** The iterations table: the last MARKDOWN_ROWS rows, each with its notes (and what it used, when the run has receipts). */
function iterationTable(detail: RunDetail, used: boolean): string[] {
  const rows = detail.rows.list(Math.max(0, detail.rows.length - MARKDOWN_ROWS));
  if (rows.length === 0) return [];
  const notes = new Map<number, string[]>();
  for (const note of detail.notes) if (note.n !== undefined) notes.set(note.n, [...(notes.get(note.n) ?? []), note.text]);
  const lines = [row(["#", "target", "duration", "exit", "next", ...(used ? ["used"] : []), "result", "notes"]), row(["--:", "---", "--:", "---", "---", ...(used ? ["---"] : []), "---", "---"])];
  for (const it of rows) {
    const usedCell = used ? [it.totals ? describeTotals(it.totals) : ""] : [];
    const cells = [it.target, it.ms === undefined ? "" : formatElapsed(it.ms), it.exit ?? "", it.next ?? "", ...usedCell, it.result ?? "", (notes.get(it.n) ?? []).join("; ")];
    lines.push(row([String(it.n), ...cells.map((cell, i) => (i === 1 ? cell : markdownText(cell)))]));
  }
  const hidden = detail.rows.length - rows.length;
  return hidden > 0 ? [`_${hidden} earlier iteration${hidden === 1 ? "" : "s"} not shown: \`loopx runs show\` has them all._`, "", ...lines] : lines;
}

type MarkdownFacts = Array<[string, string]>;

/** The facts rows of the receipts' totals: cost (billed and estimate apart), tokens, each model. */
function totalsFacts(totals: RunTotals | undefined): MarkdownFacts {
  if (!totals || totals.receipts === 0) return [];
  const { input, output, cacheRead, cacheWrite, reasoning } = totals.tokens;
  const facts: MarkdownFacts = [
    ["cost", markdownText(describeCost(totals) || "none reported")],
    ["tokens", markdownText(`${formatTokens(tokenSum(totals))} (input ${input}, output ${output}, cache read ${cacheRead}, cache write ${cacheWrite}, reasoning ${reasoning})`)],
  ];
  const models = Object.entries(totals.models);
  if (models.length > 1 || (models.length === 1 && models[0]![0] !== UNKNOWN_MODEL)) {
    for (const [model, used] of models) facts.push([`model ${markdownText(model)}`, markdownText(describeTotals(used))]);
  }
  return facts;
}

/** The whole summary: a heading, the facts, the iterations table, the notes of no iteration. */
export function formatRunMarkdown(summary: RunSummary, detail: RunDetail): string {
  const ended = summary.ending ?? (summary.state === "running" ? "still running" : summary.state);
  // "why" only when it says more than "ended" (a failed script's message is its ending, as a sentence).
  const told = (text: string) => text.replace(/^script /, "");
  const why = summary.message !== undefined && summary.state !== "stopped" && summary.state !== "limit" && !ended.includes(told(summary.message)) ? summary.message : undefined;
  const facts: MarkdownFacts = [
    ["state", markdownText(summary.state)],
    ["ended", markdownText(ended)],
    ...(why !== undefined ? [["why", markdownText(why)] as [string, string]] : []),
    ["iterations", String(summary.iterations)],
    ["duration", formatRunDuration(summary)],
    ["started", markdownText(formatLocalTime(summary.start))],
    ["target", markdownText(summary.target)],
    ...(summary.exitCode !== undefined && summary.exitCode !== null ? [["exit code", String(summary.exitCode)] as [string, string]] : []),
    ["loopx", markdownText(`${summary.version} (${summary.runtime})`)],
    ...(summary.sandbox ? [["sandbox", markdownText(`${summary.sandbox.kind}${summary.sandbox.version ? ` ${summary.sandbox.version}` : ""} · policy ${summary.sandbox.policyDigest}`)] as [string, string]] : []),
    ...totalsFacts(summary.totals),
  ];
  const out = [`### loopx run \`${summary.id}\``, "", row(["", ""]), row(["---", "---"]), ...facts.map(([name, value]) => row([`**${name}**`, value])), ""];
  const table = iterationTable(detail, (summary.totals?.receipts ?? 0) > 0);
  if (table.length) out.push(...table, "");
  const loose = detail.notes.filter((note) => note.n === undefined);
  if (loose.length) out.push(...loose.map((note) => `- ${markdownText(describeNote(note))}`), "");
  return `${out.join("\n")}\n`;
}
