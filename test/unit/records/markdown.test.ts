import fc from "fast-check";
import { marked, type Token } from "marked";
import { describe, expect, it } from "vitest";
import { shownText } from "../../../src/core/untrusted-text.js";
import { formatRunMarkdown, markdownText, MARKDOWN_ROWS } from "../../../src/records/markdown.js";
import { summarizeRun } from "../../../src/records/run-state.js";
import { RunDetail } from "../../../src/records/run-detail.js";

/** What a reader sees of inline tokens (escapes resolved, entities decoded), and the tags the HTML would have. */
function seen(tokens: Token[]): { text: string; markup: string[] } {
  const markup: string[] = [];
  const entities: Record<string, string> = { "&amp;": "&", "&lt;": "<", "&gt;": ">" };
  const walk = (list: Token[]): string =>
    list
      .map((token) => {
        if (token.type === "escape") return token.text;
        if (token.type === "text") return token.raw.replace(/&(amp|lt|gt);/g, (entity) => entities[entity]!);
        markup.push(token.type);
        return "tokens" in token && token.tokens ? walk(token.tokens) : token.raw;
      })
      .join("");
  return { text: walk(tokens), markup };
}

describe("markdownText: record text stays text", () => {
  it("any string, as a table cell, reads back as its terminal form with no markup", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(..."ab <>&*_`[]()!#|\\-+.~=:;'\"\n\t\u202e\x1b0 ") , maxLength: 40 }), (text) => {
        const table = marked.lexer(`| a |\n| --- |\n| ${markdownText(text)} |\n`)[0] as { type: string; rows: Array<Array<{ tokens: Token[] }>> };
        expect(table.type).toBe("table");
        const cell = seen(table.rows[0]![0]!.tokens);
        expect(cell.markup).toEqual([]);
        expect(cell.text).toBe(shownText(text).trim());
      }),
      { numRuns: 400 },
    );
  });
});

describe("formatRunMarkdown", () => {
  const t = (s: number) => new Date(Date.UTC(2026, 10, 25, 12, 0, s)).toISOString();
  const start = { v: 1, type: "run.start", time: t(0), run: "r1", pid: 1, projectRoot: "/p", target: "w:index", version: "0.1.0", runtime: "node", maxIterations: null } as const;

  it("shows the facts and the last MARKDOWN_ROWS iterations, counting the ones left out", () => {
    const detail = new RunDetail();
    detail.add(start as never);
    const total = MARKDOWN_ROWS + 5;
    for (let n = 1; n <= total; n++) {
      detail.add({ v: 1, type: "iteration.start", time: t(n), run: "r1", n, target: "w:index" } as never);
      detail.add({ v: 1, type: "iteration.end", time: t(n), run: "r1", n, target: "w:index", durationMs: 10, exitCode: 0, stdoutBytes: 2, output: n === total ? { stop: true } : {} } as never);
    }
    detail.add({ v: 1, type: "run.end", time: t(total + 1), run: "r1", reason: "stopped", exitCode: 0, iterations: total, durationMs: 26_000, target: "w:index" } as never);
    const summary = summarizeRun("r1", detail.forSummary(), () => false, Date.parse(t(99)))!;
    const markdown = formatRunMarkdown(summary, detail);
    const tables = marked.lexer(markdown).filter((token) => token.type === "table") as Array<{ rows: unknown[] }>;
    expect(tables).toHaveLength(2);
    expect(tables[1]!.rows).toHaveLength(MARKDOWN_ROWS);
    expect(markdown).toContain(`_5 earlier iterations not shown`);
    expect(markdown).toMatch(/\| \*\*iterations\*\* \| 25 \|/);
  });
});
