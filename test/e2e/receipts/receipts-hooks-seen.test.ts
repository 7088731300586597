/**
 * Seen on the user's paths (receipts, `runs show`, the end-of-run hook after kill -9), each a test
 * that failed before: `receipt --cost abc` and `--cost -1` in one wording; "an object", not "a
 * object"; `receipt --json` capped at the receipt's own 4 KiB (as the README says); `runs show`
 * says "1 token" and no "0 tokens" for cost-only receipts; after kill -9 of an unrecorded run
 * (LOOPX_RECORD=0) its hook is told the iteration the run was killed in, and its variables agree
 * with its JSON (an exit code the guardian could not learn is null there and empty here).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isolatedEnv, makeProject, NODE, BIN, runCommand, sh, startLoopx, tempDir, waitFor, waitForFile } from "../../helpers.js";

const loopx = (args: string[], cwd: string, env: Record<string, string>) => runCommand(NODE, [BIN, ...args], { cwd, env });

describe("receipts and runs show (node)", () => {
  it("receipt option errors have one wording, name 'an object', and --json is capped at the receipt's 4096 bytes", async () => {
    const cwd = tempDir();
    const env = isolatedEnv();
    const refused = async (...args: string[]) => {
      const result = await loopx(["receipt", ...args], cwd, env);
      expect(result.code).toBe(1);
      return result.stderr;
    };
    expect(await refused("--cost", "abc", "--kind", "billed")).toBe('loopx: receipt refused: --cost must be a number from 0 to 1000000, got "abc"\n');
    expect(await refused("--cost", "-1", "--kind", "billed")).toBe("loopx: receipt refused: --cost must be a number from 0 to 1000000, got -1\n");
    expect(await refused("--input", "x")).toBe('loopx: receipt refused: --input must be a non-negative integer, got "x"\n');
    expect(await refused("--json", '{"cost":{"usd":{},"kind":"billed"}}')).toBe("loopx: receipt refused: cost.usd must be a number from 0 to 1000000, got an object\n");
    // A receipt whose text is over 4 KiB is refused, spaces and all (the limit the README states).
    const padded = `{"tokens":{"input":1}}${" ".repeat(4100)}`;
    expect(await refused("--json", padded)).toBe("loopx: receipt refused: --json is over 4096 bytes (a receipt is at most 4096 bytes as JSON)\n");
    expect((await loopx(["receipt", "--json", `{"tokens":{"input":1}}${" ".repeat(4000)}`], cwd, env)).code).toBe(0);
  });

  it("runs show: '1 token', and no '0 tokens' for a run whose receipts gave a cost only", { timeout: 30_000 }, async () => {
    const cwd = makeProject({
      ".loopx/w/index.sh": sh('"$LOOPX_BIN" receipt --cost 0.5 --kind billed --model m\n"$LOOPX_BIN" receipt --input 1 --model m\n"$LOOPX_BIN" receipt --cost 0.25 --kind billed --model n\necho \'{"stop":true}\''),
      ".loopx/c/index.sh": sh('"$LOOPX_BIN" receipt --cost 0.5 --kind billed\necho \'{"stop":true}\''),
    });
    const env = isolatedEnv();
    expect((await loopx(["run", "w"], cwd, env)).code).toBe(0);
    const mixed = (await loopx(["runs", "show"], cwd, env)).stdout;
    expect(mixed).toContain("\nused $0.75 · 1 token (input 1) · 3 receipts\n  m: $0.50 · 1 token\n  n: $0.25\n");
    expect((await loopx(["run", "c"], cwd, env)).code).toBe(0);
    const costOnly = (await loopx(["runs", "show"], cwd, env)).stdout;
    expect(costOnly).toContain("\nused $0.50 · 1 receipt\n");
    expect(costOnly).not.toMatch(/\b0 tokens\b/);
    // Its row's TOKENS cell is blank, not "0".
    expect(costOnly).toMatch(/\n1 +c:index +\S+ +\S+ +0 +stop +\$0\.50\n$/);
  });
});

describe.runIf(process.platform === "linux")("kill -9 of loopx, its hook run by the guardian (node)", () => {
  it("with LOOPX_RECORD=0 the hook is told the iteration the run was killed in; its variables agree with its JSON", { timeout: 60_000 }, async () => {
    const cwd = makeProject({ ".loopx/w/index.sh": sh('[ "$LOOPX_ITERATION" = 2 ] && touch "$LOOPX_PROJECT_ROOT/in-2"\n[ "$LOOPX_ITERATION" = 2 ] && sleep 30\necho ok') });
    const out = tempDir();
    const env = isolatedEnv({ LOOPX_RECORD: "0" });
    const hook = `cat > ${out}/outcome.json; env | grep ^LOOPX_END_ > ${out}/vars`;
    const started = startLoopx({ name: "node", exe: NODE }, ["run", "--on-end", hook, "w"], { cwd, env });
    await waitForFile(join(cwd, "in-2"), 20_000);
    started.child.kill("SIGKILL");
    await started.result;
    expect(await waitFor(() => existsSync(join(out, "vars")) && readFileSync(join(out, "vars"), "utf8").includes("LOOPX_END_RECORD"), 20_000)).toBe(true);
    const told = JSON.parse(readFileSync(join(out, "outcome.json"), "utf8")) as { iterations: number; exitCode: number | null; state: string; record: string | null };
    expect(told).toMatchObject({ iterations: 2, state: "killed", record: null });
    const vars = Object.fromEntries(readFileSync(join(out, "vars"), "utf8").trim().split("\n").map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]));
    // 137 when the guardian caught loopx's wait status; else null (its parent reaped it first): the variable is then set and empty.
    expect([137, null]).toContain(told.exitCode);
    expect(vars).toMatchObject({ LOOPX_END_ITERATIONS: "2", LOOPX_END_STATE: "killed", LOOPX_END_EXIT_CODE: told.exitCode === null ? "" : "137", LOOPX_END_RECORD: "" });
  });
});
