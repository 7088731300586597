/**
 * output() and input() inside real scripts (spec §3.3, §6.4, §6.5), imported from "loopx" with no
 * node_modules anywhere above the project, under node (tsx + resolve hook) and bun (NODE_PATH).
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { RUNTIMES, consumer, isolatedEnv, makeProject, runConsumer, runLoopx } from "../../helpers.js";
import { normalized, utf16, validOutput } from "../../fixtures/arbitraries.js";

function noNodeModulesAbove(dir: string): boolean {
  for (let current = dir; ; current = dirname(current)) {
    if (existsSync(join(current, "node_modules"))) return false;
    if (dirname(current) === current) return true;
  }
}

const JSX_PRAGMA = "/** @jsxRuntime classic */\n/** @jsx h */\n";

describe.each(RUNTIMES)("output()/input() in scripts ($name)", (runtime) => {
  it.each([".ts", ".tsx", ".js", ".jsx"])("a %s script imports output and input from loopx with no node_modules above it", async (ext) => {
    const jsx = ext.endsWith("x");
    const typed = ext.startsWith(".t");
    const source =
      (jsx ? JSX_PRAGMA : "") +
      'import { input, output } from "loopx";\n' +
      (jsx ? "const h = (tag" + (typed ? ": string" : "") + ", _p" + (typed ? ": unknown" : "") + ", ...c" + (typed ? ": string[]" : "") + ") => `<${tag}>${c.join('')}</${tag}>`;\nconst el = <b>x</b>;\n" : "const el = '<b>x</b>';\n") +
      "const data" + (typed ? ": string" : "") + " = await input();\n" +
      'output({ result: `${data}|${el}`, goto: "after" });\n';
    const cwd = makeProject({
      ".loopx/wf/index.sh": '$LOOPX_BIN output --result "from-bash" --goto "step"\n',
      [`.loopx/wf/step${ext}`]: source,
      ".loopx/wf/after.sh": 'cat > "$LOOPX_PROJECT_ROOT/got"\n$LOOPX_BIN output --stop\n',
    });
    expect(noNodeModulesAbove(cwd)).toBe(true);
    const result = await runLoopx(runtime, ["run", "wf"], { cwd, env: isolatedEnv() });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(readFileSync(join(cwd, "got"), "utf8")).toBe("from-bash|<b>x</b>");
  });

  it("output() results flow through the loop: result piped by goto, input() cached, empty after reset", async () => {
    const cwd = makeProject({
      ".loopx/wf/index.ts":
        'import { appendFileSync } from "node:fs";\nimport { input, output } from "loopx";\n' +
        'const a = await input(); const b = await input();\n' +
        'appendFileSync(process.env.LOOPX_PROJECT_ROOT + "/trace", `index:[${a}][${a === b}]\\n`);\n' +
        'output({ result: "payload with spaces\\nand lines", goto: "next", stop: undefined });\n',
      ".loopx/wf/next.ts":
        'import { appendFileSync } from "node:fs";\nimport { input, output } from "loopx";\n' +
        'appendFileSync(process.env.LOOPX_PROJECT_ROOT + "/trace", `next:[${await input()}]\\n`);\n' +
        'output({ result: "ignored on reset" });\n' +
        'appendFileSync(process.env.LOOPX_PROJECT_ROOT + "/trace", "after output!\\n");\n',
    });
    const result = await runLoopx(runtime, ["run", "-n", "3", "wf"], { cwd, env: isolatedEnv() });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(readFileSync(join(cwd, "trace"), "utf8")).toBe("index:[][true]\nnext:[payload with spaces\nand lines]\nindex:[][true]\n");
  });

  it("output() with a large payload is not truncated when stdout is a pipe", async () => {
    const cwd = makeProject({
      ".loopx/wf/index.ts": 'import { output } from "loopx";\noutput({ result: "x".repeat(5 * 1024 * 1024) + "END", goto: "check" });\n',
      ".loopx/wf/check.sh": 'data=$(cat); echo "${#data} ${data: -3}" > "$LOOPX_PROJECT_ROOT/len"\n$LOOPX_BIN output --stop\n',
    });
    const result = await runLoopx(runtime, ["run", "wf"], { cwd, env: isolatedEnv() });
    expect(result.code).toBe(0);
    expect(readFileSync(join(cwd, "len"), "utf8")).toBe(`${5 * 1024 * 1024 + 3} END\n`);
  });

  it.each([
    ["output({})", "{}"],
    ["output(null)", "null"],
    ["output(undefined)", "undefined"],
    ["output([1, 2, 3])", "[1, 2, 3]"],
    ["output({ result: undefined })", "{ result: undefined }"],
  ])("%s throws, so the script fails and the loop exits 1", async (_label, arg) => {
    const cwd = makeProject({ ".loopx/wf/index.ts": `import { output } from "loopx";\noutput(${arg} as any);\n` });
    const result = await runLoopx(runtime, ["run", "-n", "1", "wf"], { cwd, env: isolatedEnv() });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/loopx: script wf:index exited with code 1\n$/);
  });

  it("non-object values become { result: String(value) }", async () => {
    const cwd = makeProject({
      ".loopx/wf/index.ts": 'import { output } from "loopx";\noutput(42 as any);\n',
      ".loopx/wf/index2.sh": "",
    });
    const cwd2 = makeProject({
      ".loopx/wf/index.js": 'import { output } from "loopx";\noutput(true);\n',
    });
    for (const dir of [cwd, cwd2]) {
      const result = await runLoopx(runtime, ["run", "-n", "1", "wf"], { cwd: dir, env: isolatedEnv() });
      expect(result.code).toBe(0);
    }
  });

  it.each([
    ["require()", 'const fs = require("node:fs");\nconsole.log(typeof fs);\n'],
    ["module.exports", "module.exports = { a: 1 };\n"],
  ])("a script using %s fails and the loop exits 1", async (_label, source) => {
    for (const ext of [".js", ".ts"]) {
      const cwd = makeProject({ [`.loopx/wf/index${ext}`]: source });
      const result = await runLoopx(runtime, ["run", "-n", "1", "wf"], { cwd, env: isolatedEnv() });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/loopx: script wf:index exited with code 1\n$/);
    }
  });

  it("a workflow's own node_modules/loopx wins over the CLI's package", async () => {
    const cwd = makeProject({
      ".loopx/wf/node_modules/loopx/package.json": JSON.stringify({ name: "loopx", version: "0.0.0-local", type: "module", main: "./index.js", exports: { ".": "./index.js" } }),
      ".loopx/wf/node_modules/loopx/index.js":
        'import { writeFileSync } from "node:fs";\nexport function output(v) { writeFileSync(process.env.LOOPX_PROJECT_ROOT + "/which", "local"); process.stdout.write(JSON.stringify(v)); process.exit(0); }\nexport async function input() { return ""; }\n',
      ".loopx/wf/index.ts": 'import { output } from "loopx";\noutput({ stop: true });\n',
    });
    const result = await runLoopx(runtime, ["run", "wf"], { cwd, env: isolatedEnv() });
    expect(result.code).toBe(0);
    expect(readFileSync(join(cwd, "which"), "utf8")).toBe("local");
  });
});

describe.concurrent.each(RUNTIMES)("output() in a script: properties ($name)", (runtime) => {
  it("output() in a real script process → the Output the API yields round-trips every valid Output", { timeout: 180_000 }, async ({ expect }) => {
    const count = runtime.name === "node" ? 10 : 30; // a TS script under node+tsx costs ~0.5-1 s
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof({ arbitrary: validOutput, weight: 4 }, { arbitrary: fc.oneof(utf16(), fc.integer(), fc.boolean(), fc.double({ noNaN: true, noDefaultInfinity: true }) /* must survive cases.json */), weight: 1 }), { minLength: count, maxLength: count }), async (cases) => {
        const dir = consumer(
          `import { runPromise } from "loopx";
           const cases = ${JSON.stringify(cases.length)};
           const outs = [];
           for (let i = 0; i < cases; i++) {
             process.env.CASE_INDEX = String(i);
             const [o] = await runPromise("w", { maxIterations: 1 });
             outs.push(o);
           }
           console.log(JSON.stringify(outs));`,
          {
            "cases.json": JSON.stringify(cases),
            ".loopx/w/index.ts":
              'import { output } from "loopx";\nimport { readFileSync } from "node:fs";\n' +
              'const cases = JSON.parse(readFileSync(`${process.env.LOOPX_PROJECT_ROOT}/cases.json`, "utf8"));\n' +
              "output(cases[Number(process.env.CASE_INDEX)]);\n",
          },
        );
        const outs = (await runConsumer(runtime, dir, { timeoutMs: 120_000 })).json;
        const expected = cases.map((c) => (typeof c === "object" && c !== null ? normalized(c) : { result: String(c) }));
        expect(outs).toEqual(expected);
      }),
      { numRuns: 1 },
    );
  });
});
