/**
 * Claims the README must keep: its run states are the states `loopx runs -h`
 * lists and `--state` accepts (core/run-states.ts RUN_STATES), and it links the published loopx
 * specification instead of naming it without a link (the spec's text is not in the repository).
 * Help text is the same on every channel: checked under node.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BUN, CHANNELS, ROOT, isolatedEnv, makeProject, makeSymlink, runCommand } from "../helpers.js";
import { loopx } from "../fixtures/channels.js";
import { manualText } from "../fixtures/manual.js";

const README = readFileSync(join(ROOT, "README.md"), "utf8");
/** The README and the docs: where the manual's lists live. */
const MANUAL = manualText();
const statesIn = (text: string) => new Set([...text.matchAll(/[a-z][a-z-]+/g)].map((m) => m[0]));

describe("README claims", () => {
  it("the run states in the README, in 'loopx runs -h' and in --state are one list", async () => {
    const { RUN_STATES } = (await import(join(ROOT, "dist", "core", "run-states.js"))) as { RUN_STATES: readonly string[] };
    const help = (await loopx(CHANNELS[0]!, ["runs", "-h"], makeProject(), isolatedEnv())).stdout;
    const helpStates = /States: ([\s\S]*?)\n\n/.exec(help)?.[1];
    const readmeStates = /state \((`running`[\s\S]*?)\),\n/.exec(MANUAL)?.[1];
    expect(helpStates).toBeDefined();
    expect(readmeStates).toBeDefined();
    const inHelp = statesIn(helpStates!);
    const inReadme = new Set([...readmeStates!.matchAll(/`([a-z-]+)`/g)].map((m) => m[1]!));
    for (const state of RUN_STATES) {
      expect(inHelp.has(state), `runs -h lacks ${state}`).toBe(true);
      expect(inReadme.has(state), `README lacks ${state}`).toBe(true);
    }
    // Nothing named as a state that is not one (`--state` and `run.end` would not know it).
    expect([...inReadme].filter((state) => !RUN_STATES.includes(state) && !state.startsWith("-"))).toEqual([]);
  });

  it("links the published loopx specification", () => {
    expect(README).toContain("[loopx specification](https://github.com/modularcloud/loop-extender/blob/main/SPEC.md)");
    expect(README).not.toMatch(/specified in the loopx specification \(/);
  });
});

describe("the README's Bun row", () => {
  it("`bunx --bun loopx` runs loopx under Bun; a plain `bunx loopx` runs it under Node when node is on PATH, as the README says", async () => {
    expect(README).toContain("| Bun (≥ 1.0) | nothing to install | `bunx --bun loopx version` |");
    expect(README).toContain("`bunx --bun` is what runs loopx under Bun (a plain `bunx loopx` runs it under Node when `node` is\non PATH)");
    const cwd = makeProject({ ".loopx/main/index.sh": "#!/bin/bash\necho '{\"stop\":true}'\n" });
    makeSymlink(ROOT, join(cwd, "node_modules", "loopx"));
    makeSymlink("../loopx/dist/bin.js", join(cwd, "node_modules", ".bin", "loopx"));
    const runtimes: string[] = [];
    for (const args of [["x", "--bun", "loopx", "run", "main"], ["x", "loopx", "run", "main"]]) {
      const env = isolatedEnv();
      const result = await runCommand(BUN, args, { cwd, env });
      expect(result.code, result.stderr).toBe(0);
      const runs = join(env.XDG_STATE_HOME!, "loopx", "runs");
      const record = readFileSync(join(runs, readdirSync(runs)[0]!), "utf8");
      runtimes.push(JSON.parse(record.split("\n")[0]!).runtime);
    }
    expect(runtimes).toEqual(["bun", "node"]);
  });
});
