/**
 * `$LOOPX_BIN output|note|receipt` from a bash script runs on the runtime loopx runs on: Bun under
 * Bun (it was Node: dist/bin.js says `#!/usr/bin/env node`, ~100 ms a call), Node under Node, and
 * the binary itself under the binary. Which runtime a call starts is seen through `node` and `bun`
 * on PATH that log each start (speed itself is measured by `npm run bench`, never asserted here).
 * And `output --result-file <path|->` (loopx's own) carries a result too big for an argument.
 */
import { createHash } from "node:crypto";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BUN, CLIS, NODE, isolatedEnv, makeProject, runCli, sh, tempDir, type Cli } from "../../helpers.js";

/** A PATH directory whose `node` and `bun` append their name to `log` and run the real one. */
function loggingRuntimes(log: string, which: Array<"node" | "bun"> = ["node", "bun"]): string {
  const dir = tempDir("loopx-runtimes-");
  for (const name of which) {
    writeFileSync(join(dir, name), `#!/bin/sh\necho ${name} >> '${log}'\nexec '${name === "node" ? NODE : BUN}' "$@"\n`);
    chmodSync(join(dir, name), 0o755);
  }
  return dir;
}

const HELPERS = sh(`$LOOPX_BIN note "a note"
$LOOPX_BIN receipt --cost 0.01 --kind billed
$LOOPX_BIN output --result done --stop`);

const started = (log: string) => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : []);

describe.each(CLIS)("$LOOPX_BIN helpers ($name)", (cli: Cli) => {
  it("run on the runtime loopx runs on", async () => {
    const dir = makeProject({ ".loopx/w/index.sh": HELPERS });
    const log = join(tempDir(), "started.log");
    const env = isolatedEnv();
    env.PATH = `${loggingRuntimes(log)}:${env.PATH}`;
    const result = await runCli(cli, ["run", "w"], { cwd: dir, env });
    expect(result.code, result.stderr).toBe(0);
    const expected = { node: ["node", "node", "node"], bun: ["bun", "bun", "bun"], binary: [] }[cli.name];
    expect(started(log)).toEqual(expected);
  });

  it("output --result-file <path> and --result-file - carry a 1 MiB result to the next script (argv would refuse it)", async () => {
    const big = "x".repeat(1024 * 1024 - 3) + "é\n";
    const want = createHash("sha256").update(big).digest("hex");
    const dir = makeProject({
      "big.txt": big,
      ".loopx/w/index.sh": sh(`$LOOPX_BIN output --result-file "$LOOPX_PROJECT_ROOT/big.txt" --goto from-stdin`),
      ".loopx/w/from-stdin.sh": sh(`cat > "$LOOPX_PROJECT_ROOT/got-1.txt"; $LOOPX_BIN output --result-file - --goto last < "$LOOPX_PROJECT_ROOT/big.txt"`),
      ".loopx/w/last.sh": sh(`cat > "$LOOPX_PROJECT_ROOT/got-2.txt"; $LOOPX_BIN output --stop`),
    });
    const result = await runCli(cli, ["run", "w"], { cwd: dir, env: isolatedEnv() });
    expect(result.code, result.stderr).toBe(0);
    for (const file of ["got-1.txt", "got-2.txt"]) expect(createHash("sha256").update(readFileSync(join(dir, file), "utf8")).digest("hex")).toBe(want);
  });
});

it("under Bun with no `bun` on PATH (Bun started by its path): the helpers still run, with Node", async () => {
  const bun = CLIS.find((cli) => cli.name === "bun")!;
  const dir = makeProject({ ".loopx/w/index.sh": HELPERS });
  const log = join(tempDir(), "started.log");
  const env = isolatedEnv();
  env.PATH = `${loggingRuntimes(log, ["node"])}:${env.PATH}`;
  const result = await runCli(bun, ["run", "w"], { cwd: dir, env });
  expect(result.code, result.stderr).toBe(0);
  expect(started(log)).toEqual(["node", "node", "node"]);
});

it("output --result-file: one line for a missing file, and for --result with it", async () => {
  const [node] = CLIS;
  const dir = makeProject();
  const missing = await runCli(node!, ["output", "--result-file", "nope.txt"], { cwd: dir, env: isolatedEnv() });
  expect(missing.code).toBe(1);
  expect(missing.stderr).toBe("loopx: --result-file nope.txt: no such file\n");
  const both = await runCli(node!, ["output", "--result-file", "-", "--result", "x"], { cwd: dir, env: isolatedEnv(), input: "y" });
  expect(both.code).toBe(1);
  expect(both.stderr).toBe("loopx: loopx output takes --result or --result-file, not both\n");
});
