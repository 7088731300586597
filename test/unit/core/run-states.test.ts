/**
 * The run states are declared once (src/core/run-states.ts RUN_STATES); what shows them is derived from
 * that list or checked against it here: `loopx runs -h`, `--state`'s completion, the README's list
 * and the dashboard page (which gets the list from the server).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { GOING_STATES, RUN_END_REASONS, RUN_STATES } from "../../../src/core/run-states.js";
import { main } from "../../../src/cli/main.js";
import { ASSETS } from "../../../src/dashboard/assets.generated.js";
import { ROOT } from "../../helpers.js";
import { manualText } from "../../fixtures/manual.js";

afterEach(() => vi.restoreAllMocks());

async function stdoutOf(argv: string[]): Promise<string> {
  let stdout = "";
  vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  await main(argv);
  return stdout;
}

describe("run states, declared once", () => {
  it("are the going states and every run.end reason, each once", () => {
    expect(RUN_STATES).toEqual([...GOING_STATES, ...RUN_END_REASONS]);
    expect(new Set(RUN_STATES).size).toBe(RUN_STATES.length);
  });

  it("`loopx runs -h` lists every one of them, in order", async () => {
    const help = (await stdoutOf(["runs", "-h"])).replace(/\s+/g, " ");
    expect(help).toContain(`States: ${RUN_STATES.join(", ")} (crashed:`);
  });

  it("the manual's list of `loopx runs` states holds exactly these", () => {
    const readme = manualText();
    const sentence = /state \((`running`[\s\S]*?)\),\n/.exec(readme)?.[1];
    expect(sentence).toBeDefined();
    expect(new Set([...sentence!.matchAll(/`([a-z][a-z-]*)`/g)].map((m) => m[1]))).toEqual(new Set(RUN_STATES));
  });

  it("the dashboard page gets the list from the server, not a copy of its own", () => {
    const app = ASSETS["app.js"]!;
    expect(app).not.toMatch(/const (STATES|GOING) =/);
    const server = readFileSync(join(ROOT, "src", "dashboard", "server.ts"), "utf8");
    expect(server).toContain("const STATES = ${JSON.stringify(RUN_STATES)}");
  });
});
