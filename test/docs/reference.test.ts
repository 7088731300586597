/**
 * The docs' reference agrees with the code: the generated pages (commands, run options, run states,
 * the record's and the receipt's JSON Schemas) are what scripts/docs-reference.mjs makes from the
 * built dist/ now, and the hand-written ones name every environment variable and exit code the code
 * has — and none it no longer has. Planted drifts show each check fails.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers.js";
import { runOptionsPage, runStatesPage, stalePages, STATE_MEANINGS } from "../../scripts/docs-reference.mjs";

const DOCS = join(ROOT, "docs");

/** Every `LOOPX_*` name in the files under `dir`. */
function loopxNames(dir: string): Set<string> {
  const names = new Set<string>();
  const walk = (path: string) => {
    if (statSync(path).isDirectory()) {
      for (const entry of readdirSync(path)) walk(join(path, entry));
      return;
    }
    if (!/\.(ts|js|mjs)$/.test(path) || path.endsWith("assets.generated.ts")) return;
    for (const match of readFileSync(path, "utf8").matchAll(/\bLOOPX_[A-Z0-9_]*[A-Z0-9]\b/g)) names.add(match[0]);
  };
  walk(dir);
  return names;
}

describe("the docs' reference", () => {
  it("the generated pages match the code (docs-reference.mjs --check)", { timeout: 240_000 }, () => {
    const out = execFileSync(process.execPath, [join(ROOT, "scripts", "docs-reference.mjs"), "--check"], { cwd: ROOT, encoding: "utf8" });
    expect(out).toMatch(/docs reference: \d+ pages match the code/);
  });

  it("an option added to RUN_OPTIONS without its reference makes the run-options page stale", async () => {
    const { RUN_OPTIONS } = await import(join(ROOT, "dist", "engine", "options.js"));
    const planted = [...RUN_OPTIONS, { name: "plantedOption", cli: { names: "--planted", description: "a planted option" }, api: true, check: (v: unknown) => v }];
    expect(stalePages(new Map([["reference/run-options.md", runOptionsPage(RUN_OPTIONS)]]), DOCS)).toEqual([]);
    expect(stalePages(new Map([["reference/run-options.md", runOptionsPage(planted)]]), DOCS)).toEqual(["reference/run-options.md"]);
  });

  it("a run state without a meaning is refused; one removed drops off the page", async () => {
    const { RUN_STATES } = await import(join(ROOT, "dist", "core", "run-states.js"));
    expect(() => runStatesPage([...RUN_STATES, "planted"])).toThrow(/run states without a meaning in scripts\/docs-reference.mjs STATE_MEANINGS: planted/);
    expect(stalePages(new Map([["reference/run-states.md", runStatesPage(RUN_STATES.slice(1))]]), DOCS)).toEqual(["reference/run-states.md"]);
    expect(Object.keys(STATE_MEANINGS)).toEqual(expect.arrayContaining([...RUN_STATES]));
  });

  it("every LOOPX_* variable of the code is on the environment page, and the page names none the code lacks", () => {
    const page = readFileSync(join(DOCS, "reference", "environment.md"), "utf8");
    const documented = new Set([...page.matchAll(/\bLOOPX_[A-Z0-9_]*[A-Z0-9]\b/g)].map((m) => m[0]));
    const inCode = loopxNames(join(ROOT, "src"));
    expect([...inCode].filter((name) => !documented.has(name)).sort(), "in the code, not on docs/reference/environment.md").toEqual([]);
    expect([...documented].filter((name) => !inCode.has(name)).sort(), "on docs/reference/environment.md, no longer in the code").toEqual([]);
  });

  it("the exit-codes page names each exit code the code defines", async () => {
    const page = readFileSync(join(DOCS, "reference", "exit-codes.md"), "utf8");
    const { BUDGET_EXIT_CODE } = await import(join(ROOT, "dist", "core", "budget.js"));
    const { TimeoutError } = await import(join(ROOT, "dist", "core", "errors.js"));
    const { STALL_EXIT_CODE } = await import(join(ROOT, "dist", "core", "stall.js"));
    const { SANDBOX_EXIT_CODE } = await import(join(ROOT, "dist", "sandbox", "policy.js"));
    for (const code of [0, 1, BUDGET_EXIT_CODE, SANDBOX_EXIT_CODE, STALL_EXIT_CODE, new TimeoutError("x").exitCode, 130, 143]) expect(page).toMatch(new RegExp(`\\b${code}\\b`));
  });
});
