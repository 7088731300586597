/**
 * The examples of the docs and the README run as the pages show them (scripts/docs-examples.mjs):
 * every shell and TypeScript block runs in a scratch project with the built loopx as `loopx`, and
 * exits as its page says — or says why it cannot run here. A planted example whose exit code
 * changed fails, naming its page and line.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { documentedPages, examplesOf, runPage } from "../../scripts/docs-examples.mjs";

const scratch = mkdtempSync(join(tmpdir(), "loopx-docs-planted-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("the documented examples", () => {
  it.each(documentedPages().map((path: string) => [path.replace(/^.*?\/(README\.md|docs\/)/, "$1"), path]))("%s", { timeout: 300_000 }, (_name, path) => {
    const { failures } = runPage(path);
    expect(failures).toEqual([]);
  });

  it("an example whose exit code changed fails, naming its page and line", () => {
    const page = join(scratch, "planted.md");
    writeFileSync(page, "# Planted\n\n<!-- example: exit 0 -->\n```sh\nloopx version >/dev/null\nexit 3\n```\n\n<!-- example: exit 3 -->\n```sh\nexit 3\n```\n");
    const { ran, failures } = runPage(page);
    expect(ran).toBe(2);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatch(/planted\.md:4: the sh example exited 3, the page says 0/);
  });

  it("a skipped example must say why; set-up runs first and stays hidden", () => {
    expect(() => examplesOf("<!-- example: skip -->\n```sh\nexit 1\n```\n")).toThrow(/needs a reason/);
    const { setup, examples } = examplesOf("<!-- example-setup\ntouch a\n-->\n<!-- example: skip needs a real API key -->\n```sh\nclaude -p hi\n```\n");
    expect(setup).toEqual(["touch a"]);
    expect(examples).toMatchObject([{ skip: "needs a real API key", code: "claude -p hi" }]);
  });
});
