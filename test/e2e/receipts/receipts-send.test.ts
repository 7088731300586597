/**
 * Receipts from scripts (loopx's own addition): `$LOOPX_BIN receipt` (flags or --json)
 * and `receipt()` from "loopx" append one `receipt` event to the run's record, exactly as given;
 * a malformed receipt is refused with one line naming the field and nothing is recorded; outside a
 * run, or with records off and no live reader, a receipt is nothing (exit 0, no file). Under node,
 * bun and the standalone binary.
 */
import { readdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LOOPX_STARTS, expectOneLineError, isolatedEnv, makeProject, sh, tempDir } from "../../helpers.js";
import { parseReceipt } from "../../../src/receipts/receipt.js";


const WINDOW = { type: "five_hour", status: "allowed_warning", resetsAt: "2026-11-25T19:00:00.000Z", utilization: 0.42, source: "claude-stream" };
const WORKFLOW = {
  ".loopx/w/index.sh": sh(
    '"$LOOPX_BIN" receipt --cost 0.0123 --kind billed --input 1200 --output 340 --cache-read 5000 --cache-write 70 --reasoning 9 --model claude-sonnet-4-5 --provider anthropic --agent claude-code --agent-version 2.1.197\n' +
      `"$LOOPX_BIN" receipt --json '${JSON.stringify({ tokens: { input: 1 }, window: WINDOW })}'\n` +
      '"$LOOPX_BIN" output --goto two',
  ),
  ".loopx/w/two.ts": 'import { output, receipt } from "loopx";\nconst kept = receipt({ cost: { usd: 0.5, kind: "estimate" }, model: "gpt-5" });\nprocess.stderr.write(`kept=${kept}\\n`);\noutput({ stop: true });\n',
};

const receiptsOf = (text: string) => text.trim().split("\n").filter(Boolean).map((line) => JSON.parse(line)).filter((event) => event.type === "receipt");

/** Bad receipts and the field their one line must name. */
const BAD: Array<[string[], string]> = [
  [["--cost", "-1", "--kind", "billed"], "--cost must be a number from 0 to 1000000, got -1"],
  [["--cost", "NaN", "--kind", "billed"], '--cost must be a number from 0 to 1000000, got "NaN"'],
  [["--cost", "0.1", "--kind", "free"], "--kind"],
  [["--cost", "0.1"], "--kind"],
  [["--input", "many"], "--input"],
  [["--output", "1.5"], "--output"],
  [["--json", '{"tokens":{"input":"3"}}'], "tokens.input"],
  [["--json", '{"tokens":{"input":3,"cached":1}}'], "tokens.cached"],
  [["--json", '{"cost":{"usd":1e400,"kind":"billed"}}'], "cost.usd"],
  [["--json", '{"window":{"type":"five_hour","status":"allowed","resetsAt":"soon"}}'], "window.resetsAt"],
  [["--json", '{"window":{"type":"5h","status":"seen","source":7}}'], "window.source"],
  [["--json", '{"tokens":{"input":1},"dollars":2}'], "dollars"],
  [["--json", "{}"], "empty"],
  [["--json", "[1]"], "receipt must be an object"],
  [["--json", "{"], "not valid JSON"],
  [["--json", `{"tokens":{"input":1},"model":"${"m".repeat(300)}"}`], "model"],
  [["--json", `{"tokens":{"input":1},"model":"${"m".repeat(20000)}"}`], "over"],
  [["--model", "x"], "empty"],
];

describe.concurrent.each(LOOPX_STARTS)("receipts from scripts ($name)", ({ loopx }) => {
  it("bash flags, --json and receipt() from TypeScript: receipt events in the record, exactly as given", async () => {
    const cwd = makeProject(WORKFLOW);
    const env = isolatedEnv();
    const result = await loopx(["run", "w"], { cwd, env, timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe("kept=true\n");
    const records = join(env.XDG_STATE_HOME!, "loopx", "runs");
    const [file] = readdirSync(records).filter((name) => name.endsWith(".jsonl"));
    const id = file!.replace(/\.jsonl$/, "");
    const base = { v: 1, type: "receipt", time: expect.any(String), run: id, workflow: "w" };
    expect(receiptsOf(readFileSync(join(records, file!), "utf8"))).toEqual([
      {
        ...base,
        n: 1,
        cost: { usd: 0.0123, kind: "billed" },
        tokens: { input: 1200, output: 340, cacheRead: 5000, cacheWrite: 70, reasoning: 9 },
        model: "claude-sonnet-4-5",
        provider: "anthropic",
        agent: "claude-code",
        agentVersion: "2.1.197",
      },
      { ...base, n: 1, tokens: { input: 1 }, window: WINDOW },
      { ...base, n: 2, cost: { usd: 0.5, kind: "estimate" }, model: "gpt-5" },
    ]);
  });

  it("a malformed receipt: one line naming the field, exit 1, nothing recorded", async () => {
    const dir = tempDir();
    const id = "0abcdefghijklm";
    const record = join(dir, `${id}.jsonl`);
    writeFileSync(record, "");
    const env = isolatedEnv({ LOOPX_RUN_ID: id, LOOPX_RUN_RECORD: record, LOOPX_ITERATION: "1" });
    for (const [args, field] of BAD) {
      const result = await loopx(["receipt", ...args], { cwd: dir, env, timeoutMs: 30_000 });
      expectOneLineError(result, field);
    }
    expect(readFileSync(record, "utf8")).toBe("");
    const good = await loopx(["receipt", "--input", "7"], { cwd: dir, env, timeoutMs: 30_000 });
    expect(good).toMatchObject({ code: 0, stdout: "", stderr: "" });
    expect(receiptsOf(readFileSync(record, "utf8"))).toEqual([{ v: 1, type: "receipt", time: expect.any(String), run: id, n: 1, tokens: { input: 7 } }]);
  });

  it("outside a run and with records off: nothing, exit 0, no file", async () => {
    const cwd = makeProject(WORKFLOW);
    const env = isolatedEnv({ LOOPX_RECORD: "0" });
    const result = await loopx(["run", "w"], { cwd, env, timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe("kept=false\n");
    expect(existsSync(join(env.XDG_STATE_HOME!, "loopx"))).toBe(false);
    const outside = await loopx(["receipt", "--cost", "1", "--kind", "billed"], { cwd, env: isolatedEnv(), timeoutMs: 30_000 });
    expect(outside).toMatchObject({ code: 0, stdout: "", stderr: "" });
  });
});

describe("the receipt parser (property-based)", () => {
  const token = fc.option(fc.nat({ max: Number.MAX_SAFE_INTEGER }), { nil: undefined });
  const good = fc.record(
    {
      cost: fc.record({ usd: fc.double({ min: 0, max: 1_000_000, noNaN: true }), kind: fc.constantFrom("billed", "estimate") }),
      tokens: fc.record({ input: token, output: token, cacheRead: token, cacheWrite: token, reasoning: token }, { requiredKeys: [] }),
      model: fc.string({ minLength: 1, maxLength: 50 }).filter((s) => s.trim() !== ""),
    },
    { requiredKeys: ["tokens"] },
  );

  it("keeps every valid receipt exactly (a JSON round trip changes nothing)", () => {
    fc.assert(
      fc.property(good, (value) => {
        const clean = JSON.parse(JSON.stringify(value));
        expect(parseReceipt(clean)).toEqual(clean);
      }),
    );
  });

  it("refuses any number field made negative, fractional (tokens), non-finite or a string, naming the field", () => {
    const bad = fc.oneof(fc.constant(-1), fc.constant(Number.NaN), fc.constant(Number.POSITIVE_INFINITY), fc.double({ max: -Number.MIN_VALUE, noNaN: true }), fc.string().map((s) => s as unknown));
    const field = fc.constantFrom("input", "output", "cacheRead", "cacheWrite", "reasoning", "usd");
    fc.assert(
      fc.property(good, field, bad, (value, name, wrong) => {
        const receipt = JSON.parse(JSON.stringify(value));
        if (name === "usd") receipt.cost = { usd: wrong, kind: "billed" };
        else receipt.tokens = { ...receipt.tokens, [name]: wrong };
        expect(() => parseReceipt(receipt)).toThrow(name === "usd" ? "cost.usd" : `tokens.${name}`);
      }),
    );
  });

  it("never throws anything but a TypeError, whatever it is given", () => {
    fc.assert(
      fc.property(fc.anything(), (value) => {
        try {
          parseReceipt(value);
        } catch (error) {
          expect(error).toBeInstanceOf(TypeError);
        }
      }),
    );
  });
});
