/**
 * A run option is declared once, in the run options table (src/engine/options.ts RUN_OPTIONS): a
 * fixture entry appended to it, and nothing else, is a `loopx run` option (help, grammar), a field
 * `run()` takes, checked by the engine into the run's plan, and kept in `run.start` for a resume
 * (`recorded`), which an observer of the run reads. (What acts on an option is a part that
 * engine/parts.ts composes; the table composes nothing.) The CLI runs in process from src/ (as
 * grammar.test.ts does) up to the request it hands the engine (mocked there); the engine and the
 * API run from dist/.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { LoopxError } from "../../../src/core/errors.js";
import type * as Engine from "../../../src/engine/index.js";
import { RUN_OPTIONS, type RunOptionDeclaration } from "../../../src/engine/options.js";
import { main } from "../../../src/cli/main.js";
import { isolatedEnv, makeProject, ROOT } from "../../helpers.js";

const captured = vi.hoisted(() => [] as Array<{ target: string; options: Record<string, unknown> }>);
vi.mock("../../../src/engine/index.js", () => ({
  startRun: (request: { target: string; options: Record<string, unknown> }) => {
    captured.push(request);
    return { complete: async () => ({ reason: "stopped", exitCode: 0 }) };
  },
}));

/** The fixture option: a label, kept in the run's `run.start` (`recorded`). */
const FIXTURE: RunOptionDeclaration<"fixtureLabel", string | undefined> = {
  name: "fixtureLabel",
  cli: { names: "--fixture-label", kind: "text", description: "A label for the run's scripts (fixture)" },
  api: true,
  recorded: true,
  check(value) {
    if (value !== undefined && typeof value !== "string") throw new LoopxError(`fixtureLabel must be a string, got ${typeof value}`);
    return value;
  },
};

/** What an observer of the run read in its `run.start`: the options kept for a resume. */
function startOptions(events: Array<{ type: string; options?: Record<string, unknown> }>): Record<string, unknown> | undefined {
  return events.find((event) => event.type === "run.start")?.options;
}

type Table = RunOptionDeclaration[];
let engine: typeof Engine;
let api: typeof import("../../../src/index.js");
let distTable: Table;
beforeAll(async () => {
  engine = (await import(pathToFileURL(join(ROOT, "dist/engine/index.js")).href)) as typeof Engine;
  api = (await import(pathToFileURL(join(ROOT, "dist/index.js")).href)) as typeof api;
  distTable = ((await import(pathToFileURL(join(ROOT, "dist/engine/options.js")).href)) as { RUN_OPTIONS: Table }).RUN_OPTIONS;
  (RUN_OPTIONS as unknown as Table).push(FIXTURE);
  distTable.push(FIXTURE);
});
afterAll(() => {
  (RUN_OPTIONS as unknown as Table).pop();
  distTable.pop();
});

const project = () => makeProject({ ".loopx/w/index.sh": '#!/bin/bash\nprintf \'{"result":"done","stop":true}\'\n' });

/** `main(argv)` run in `cwd`, its stdout. */
async function cliIn(cwd: string, argv: string[]): Promise<string> {
  const before = process.cwd();
  process.chdir(cwd);
  try {
    return await cli(argv);
  } finally {
    process.chdir(before);
  }
}

async function cli(argv: string[]): Promise<string> {
  let stdout = "";
  const write = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  try {
    await main(argv);
  } finally {
    write.mockRestore();
  }
  return stdout;
}

describe("an option appended to RUN_OPTIONS reaches the CLI, the API, completion, the docs' reference and the run's plan (no other edit)", () => {
  it("the CLI: listed in `run -h`, parsed into the request; the engine checks it into the plan (kept in run.start)", async () => {
    expect(await cli(["run", "-h"])).toMatch(/--fixture-label <value>\s+A label for the run's scripts \(fixture\)/);
    await cli(["run", "--fixture-label", "from-cli", "w"]);
    expect(captured.at(-1)).toMatchObject({ target: "w", options: { fixtureLabel: "from-cli" } });
    const events: Array<{ type: string; options?: Record<string, unknown> }> = [];
    const outputs = [];
    const options = { ...captured.at(-1)!.options, onEvent: (event: { type: string }) => events.push(event) };
    for await (const output of engine.startRun({ target: "w", options, projectRoot: project(), baseEnv: isolatedEnv() })) outputs.push(output);
    expect(outputs).toEqual([{ result: "done", stop: true }]);
    expect(startOptions(events)).toEqual({ fixtureLabel: "from-cli" });
  });

  it("the API: a field of run(), checked by the engine into the plan (kept in run.start)", async () => {
    const cwd = project();
    const events: Array<{ type: string; options?: Record<string, unknown> }> = [];
    const options = { cwd, env: {}, fixtureLabel: "from-api", onEvent: (event: { type: string }) => events.push(event) } as Parameters<typeof api.runPromise>[1];
    expect(await api.runPromise("w", options)).toEqual([{ result: "done", stop: true }]);
    expect(startOptions(events)).toEqual({ fixtureLabel: "from-api" });
    await expect(api.runPromise("w", { cwd, fixtureLabel: 5 } as Parameters<typeof api.runPromise>[1])).rejects.toThrow(/^fixtureLabel must be a string, got number$/);
  });

  it("completion: offered after `loopx run --fix` and `loopx run --`", async () => {
    const cwd = project();
    const complete = async (line: string) => (await cliIn(cwd, ["__complete", line])).split("\n");
    expect(await complete("loopx run --fix")).toContain("--fixture-label");
    expect(await complete("loopx run --")).toContain("--fixture-label");
  });

  it("the docs: a row of the generated run options reference (scripts/docs-reference.mjs)", async () => {
    const { runOptionsPage } = (await import(pathToFileURL(join(ROOT, "scripts/docs-reference.mjs")).href)) as { runOptionsPage(options: Table): string };
    expect(runOptionsPage(RUN_OPTIONS as unknown as Table)).toContain("| `--fixture-label <text>` | `fixtureLabel` | A label for the run's scripts (fixture) | recorded: a resume keeps it |");
  });

  it("not given: the plan has none, run.start keeps none", async () => {
    const events: Array<{ type: string; options?: Record<string, unknown> }> = [];
    const options = { cwd: project(), onEvent: (event: { type: string }) => events.push(event) } as Parameters<typeof api.runPromise>[1];
    expect(await api.runPromise("w", options)).toEqual([{ result: "done", stop: true }]);
    expect(startOptions(events)).toBeUndefined();
  });
});
