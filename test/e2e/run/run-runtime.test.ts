/**
 * Script execution per runtime (spec §6.1–§6.3, §3.3): bash for `.sh`, JS/TS/JSX/TSX under the
 * runtime loopx itself runs on, ESM only, `import "loopx"` without node_modules, stderr streamed
 * live and stdout never echoed. Black-box: real scripts report what they saw through trace files.
 */
import { chmodSync, existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLIS, RUNTIMES, isolatedEnv, makeProject, runCli, runLoopx, tempDir } from "../../helpers.js";

/** A `check.sh` that records its stdin (the previous script's result) and stops the loop. */
function checkScript(trace: string): string {
  return `cat > '${trace}'\necho '{"stop": true}'\n`;
}

/** True when some ancestor of `dir` (itself included) holds a node_modules entry. */
function nodeModulesAbove(dir: string): string | undefined {
  let current = dir;
  for (;;) {
    const candidate = join(current, "node_modules");
    if (existsSync(candidate)) return candidate;
    const parent = dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}

const H_FUNCTION_TS =
  "function h(tag: string, _props: Record<string, unknown> | null, ...children: unknown[]): string {\n" +
  "  return `<${tag}>${children.join(\"\")}</${tag}>`;\n" +
  "}\n";
const H_FUNCTION_JS =
  "function h(tag, _props, ...children) {\n" + "  return `<${tag}>${children.join(\"\")}</${tag}>`;\n" + "}\n";
const PRAGMAS = "/** @jsxRuntime classic */\n/** @jsx h */\n";

describe.each(RUNTIMES)("run: script execution per runtime ($name)", (runtime) => {
  describe("bash scripts (§6.2)", () => {
    it("runs a .sh file through /bin/bash without exec bit or shebang", async () => {
      const cwd = tempDir();
      const trace = join(cwd, "sh.trace");
      makeProject(
        {
          // Bash-only syntax: arrays and [[ ]]; BASH_VERSION proves the interpreter.
          ".loopx/w/index.sh": `arr=(a b c)\nif [[ \${#arr[@]} -eq 3 ]]; then echo "bash:$BASH_VERSION:\${arr[1]}" > '${trace}'; fi\n`,
        },
        cwd,
      );
      chmodSync(join(cwd, ".loopx/w/index.sh"), 0o644);
      const result = await runLoopx(runtime, ["run", "-n", "1", "w"], { cwd, env: isolatedEnv() });
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(readFileSync(trace, "utf8")).toMatch(/^bash:\d+\.\d+.*:b\n$/);
    });

    it("runs a .sh file through /bin/bash even when its shebang names another interpreter", async () => {
      const cwd = tempDir();
      const trace = join(cwd, "sh.trace");
      makeProject({ ".loopx/w/index.sh": `#!/nonexistent/interpreter\necho "bash:$BASH_VERSION" > '${trace}'\n` }, cwd);
      const result = await runLoopx(runtime, ["run", "-n", "1", "w"], { cwd, env: isolatedEnv() });
      expect(result.code).toBe(0);
      expect(readFileSync(trace, "utf8")).toMatch(/^bash:\d+\./);
    });

    it("parses a bash script's stdout as structured output and pipes result to the goto target", async () => {
      const cwd = tempDir();
      const trace = join(cwd, "in.trace");
      makeProject(
        {
          ".loopx/w/index.sh": `echo '{"result": "from-bash", "goto": "check"}'\n`,
          ".loopx/w/check.sh": checkScript(trace),
        },
        cwd,
      );
      const result = await runLoopx(runtime, ["run", "-n", "5", "w"], { cwd, env: isolatedEnv() });
      expect(result.code).toBe(0);
      expect(readFileSync(trace, "utf8")).toBe("from-bash");
    });

    it("runs scripts with the workflow directory as cwd", async () => {
      const cwd = tempDir();
      const trace = join(cwd, "cwd.trace");
      makeProject(
        {
          ".loopx/w/index.sh": `pwd > '${trace}'\necho '{"goto": "t"}'\n`,
          ".loopx/w/t.ts": `import { appendFileSync } from "node:fs";\nappendFileSync(${JSON.stringify(trace)}, process.cwd() + "\\n");\n`,
        },
        cwd,
      );
      const result = await runLoopx(runtime, ["run", "-n", "2", "w"], { cwd, env: isolatedEnv() });
      expect(result.code).toBe(0);
      const wd = join(cwd, ".loopx", "w");
      expect(readFileSync(trace, "utf8")).toBe(`${wd}\n${wd}\n`);
    });
  });

  describe("JS/TS scripts (§6.3)", () => {
    const cases: Array<[string, string, string]> = [
      [
        ".js",
        'process.stdout.write(JSON.stringify({ result: "from-js", goto: "check" }));\n',
        "from-js",
      ],
      [
        ".ts",
        'interface Payload { result: string; goto: string }\nconst payload: Payload = { result: "from-" + ("ts" as string), goto: "check" };\nconst text: string = JSON.stringify(payload);\nprocess.stdout.write(text);\n',
        "from-ts",
      ],
      [
        ".jsx",
        `${PRAGMAS}${H_FUNCTION_JS}const element = <b>{"from-jsx"}</b>;\nprocess.stdout.write(JSON.stringify({ result: element, goto: "check" }));\n`,
        "<b>from-jsx</b>",
      ],
      [
        ".tsx",
        `${PRAGMAS}${H_FUNCTION_TS}const label: string = "from-tsx";\nconst element = <i>{label}</i>;\nprocess.stdout.write(JSON.stringify({ result: element, goto: "check" }));\n`,
        "<i>from-tsx</i>",
      ],
    ];

    it.each(cases)("runs a %s script and parses its stdout", async (ext, source, expected) => {
      const cwd = tempDir();
      const trace = join(cwd, "in.trace");
      makeProject({ [`.loopx/w/index${ext}`]: source, ".loopx/w/check.sh": checkScript(trace) }, cwd);
      const result = await runLoopx(runtime, ["run", "-n", "5", "w"], { cwd, env: isolatedEnv() });
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.stdout).toBe("");
      expect(readFileSync(trace, "utf8")).toBe(expected);
    });

    it.each([".js", ".ts", ".jsx", ".tsx"])(`runs %s scripts under the runtime loopx runs on`, async (ext) => {
      const cwd = tempDir();
      const trace = join(cwd, "rt.trace");
      makeProject(
        {
          [`.loopx/w/index${ext}`]:
            'import { writeFileSync } from "node:fs";\n' +
            `writeFileSync(${JSON.stringify(trace)}, JSON.stringify({ bunGlobal: typeof Bun, bunVersion: process.versions.bun ?? null, node: process.versions.node }));\n`,
        },
        cwd,
      );
      const result = await runLoopx(runtime, ["run", "-n", "1", "w"], { cwd, env: isolatedEnv() });
      expect(result.code).toBe(0);
      const seen = JSON.parse(readFileSync(trace, "utf8"));
      if (runtime.name === "bun") {
        expect(seen.bunGlobal).toBe("object");
        expect(typeof seen.bunVersion).toBe("string");
      } else {
        expect(seen.bunGlobal).toBe("undefined");
        expect(seen.bunVersion).toBe(null);
        expect(seen.node).toBe(process.versions.node);
      }
    });

    it.each([
      [".js", 'const fs = require("node:fs");'],
      [".ts", 'const fs = require("node:fs");'],
      [".js", "module.exports = { a: 1 };"],
      [".ts", "module.exports = { a: 1 };"],
      [".js", "exports.a = 1;"],
      [".ts", "exports.a = 1;"],
      [".js", 'import { output } from "loopx";\nconst path = require("node:path");'],
      [".ts", 'import { output } from "loopx";\nmodule.exports = { output };'],
    ])("a %s script using CommonJS (%s) fails and the loop exits 1", async (ext, cjs) => {
      const cwd = tempDir();
      const trace = join(cwd, "cjs.trace");
      makeProject(
        {
          [`.loopx/w/index${ext}`]: `${cjs}\nprocess.stdout.write(JSON.stringify({ goto: "after" }));\n`,
          ".loopx/w/after.sh": `echo ran > '${trace}'\necho '{"stop": true}'\n`,
        },
        cwd,
      );
      const result = await runLoopx(runtime, ["run", "-n", "3", "w"], { cwd, env: isolatedEnv() });
      expect(result.code).toBe(1);
      expect(existsSync(trace)).toBe(false);
    });

    it.each([".js", ".ts", ".tsx"])(
      "%s scripts import { output, input } from \"loopx\" with no node_modules anywhere above the project",
      async (ext) => {
        const cwd = tempDir();
        expect(nodeModulesAbove(cwd)).toBeUndefined();
        const trace = join(cwd, "import.trace");
        const typed = ext === ".js" ? "" : ": string";
        makeProject(
          {
            [`.loopx/w/index${ext}`]: `import { input, output } from "loopx";\nconst first${typed} = await input();\noutput({ result: "hop[" + first + "]", goto: "second" });\n`,
            [`.loopx/w/second${ext}`]:
              'import { input, output } from "loopx";\nimport { writeFileSync } from "node:fs";\n' +
              `const data${typed} = await input();\nconst again${typed} = await input();\n` +
              `writeFileSync(${JSON.stringify(trace)}, data + "|" + again);\noutput({ stop: true });\n`,
          },
          cwd,
        );
        const result = await runLoopx(runtime, ["run", "-n", "5", "w"], { cwd, env: isolatedEnv() });
        expect(result.stderr).toBe("");
        expect(result.code).toBe(0);
        expect(readFileSync(trace, "utf8")).toBe("hop[]|hop[]");
      },
    );
  });

  describe("output streams", () => {
    it.each([
      [".sh", `echo early-line >&2\nsleep 2\ntouch '%DONE%'\n`],
      [
        ".ts",
        'import { writeFileSync } from "node:fs";\nprocess.stderr.write("early-line\\n");\nawait new Promise((r) => setTimeout(r, 2000));\nwriteFileSync(%DONE_JSON%, "");\n',
      ],
    ])("streams a %s script's stderr live, before the script finishes", async (ext, template) => {
      const cwd = tempDir();
      const done = join(cwd, "script-finished");
      const source = template.replace("%DONE%", done).replace("%DONE_JSON%", JSON.stringify(done));
      makeProject({ [`.loopx/w/index${ext}`]: source }, cwd);
      let seenAt: number | undefined;
      let finishedWhenSeen: boolean | undefined;
      let buffered = "";
      const start = Date.now();
      const result = await runLoopx(runtime, ["run", "-n", "1", "w"], {
        cwd,
        env: isolatedEnv(),
        onSpawn: (child) => {
          child.stderr!.on("data", (chunk: Buffer | string) => {
            buffered += chunk.toString();
            if (seenAt === undefined && buffered.includes("early-line\n")) {
              seenAt = Date.now() - start;
              finishedWhenSeen = existsSync(done);
            }
          });
        },
      });
      const total = Date.now() - start;
      expect(result.code).toBe(0);
      expect(result.stderr).toBe("early-line\n");
      expect(seenAt).toBeDefined();
      // The line arrived while the script was still sleeping, not flushed at its exit.
      expect(finishedWhenSeen).toBe(false);
      expect(existsSync(done)).toBe(true);
      console.log(`[${runtime.name} ${ext}] stderr line seen after ${seenAt} ms; loopx exited after ${total} ms`);
    });

    it("never echoes script stdout (structured or raw) to loopx's stdout", async () => {
      const cwd = tempDir();
      makeProject(
        {
          ".loopx/w/index.sh": `echo 'RAW-STDOUT-NOT-JSON'\n`,
          ".loopx/w/json.sh": `echo '{"result": "STRUCTURED-RESULT", "goto": "ts"}'\n`,
          ".loopx/w/ts.ts": 'import { output } from "loopx";\nconsole.log("TS-CONSOLE-LOG");\noutput({ result: "TS-RESULT", goto: "index" });\n',
        },
        cwd,
      );
      const raw = await runLoopx(runtime, ["run", "-n", "3", "w"], { cwd, env: isolatedEnv() });
      expect(raw.code).toBe(0);
      expect(raw.stdout).toBe("");
      expect(raw.stderr).toBe("");
      const chain = await runLoopx(runtime, ["run", "-n", "3", "w:json"], { cwd, env: isolatedEnv() });
      expect(chain.code).toBe(0);
      expect(chain.stdout).toBe("");
      // ts.ts logs a line before its output(): a plain result, so loopx's own warning says once that its goto is ignored.
      expect(chain.stderr).toBe(
        `loopx: warning: w:ts: its stdout is not one JSON object (text comes before its last line {"result":"TS-RESULT","goto":"index"}), so all of it is a plain result and that line's "result", "goto" is ignored: write only the JSON object to stdout (other output to stderr: echo ... >&2)\n`,
      );
    });
  });
});

describe.concurrent.each(CLIS)("JSX is the same everywhere ($name)", (cli) => {
  const show = (expr: string) => `import { writeFileSync } from "node:fs";\nwriteFileSync(process.env.LOOPX_PROJECT_ROOT + "/" + process.env.LOOPX_WORKFLOW + ".out", JSON.stringify(${expr}));\n`;
  const ownReact = 'const React = { createElement: (t: any, p: any, ...c: any[]) => ({ t, p, c }), Fragment: "frag" };\n';
  const element = '<div a="1">x<></></div>';

  it("classic React.createElement by default (.tsx and .jsx); a workflow's tsconfig.json jsx settings win", async () => {
    const cwd = makeProject({
      ".loopx/tsx/index.tsx": ownReact + show(element),
      ".loopx/jsx/index.jsx": ownReact.replace(/: any(\[\])?/g, "") + show(element),
      ".loopx/factory/index.tsx": 'const h = (t: any, p: any, ...c: any[]) => ({ h: t, c });\nconst Frag = "F";\n' + show(element),
      ".loopx/factory/tsconfig.json": JSON.stringify({ compilerOptions: { jsx: "react", jsxFactory: "h", jsxFragmentFactory: "Frag" } }),
      ".loopx/automatic/index.tsx": show(element),
      ".loopx/automatic/tsconfig.json": JSON.stringify({ compilerOptions: { jsx: "react-jsx", jsxImportSource: "tinyjsx" } }),
      ".loopx/automatic/node_modules/tinyjsx/package.json": JSON.stringify({ name: "tinyjsx", type: "module", exports: { "./jsx-runtime": "./rt.js", "./jsx-dev-runtime": "./rt.js" } }),
      ".loopx/automatic/node_modules/tinyjsx/rt.js": 'export const Fragment = "F";\nexport const jsx = (t, p) => ({ auto: t, p });\nexport const jsxs = jsx;\nexport const jsxDEV = jsx;\n',
    });
    for (const workflow of ["tsx", "jsx", "factory", "automatic"]) {
      const result = await runCli(cli, ["run", "-n", "1", workflow], { cwd, env: isolatedEnv(), timeoutMs: 60_000 });
      expect(result.code, `${workflow}: ${result.stderr}`).toBe(0);
    }
    const out = (workflow: string) => JSON.parse(readFileSync(join(cwd, `${workflow}.out`), "utf8"));
    const classic = { t: "div", p: { a: "1" }, c: ["x", { t: "frag", p: null, c: [] }] };
    expect(out("tsx")).toStrictEqual(classic);
    expect(out("jsx")).toStrictEqual(classic);
    expect(out("factory")).toStrictEqual({ h: "div", c: ["x", { h: "F", c: [] }] });
    expect(out("automatic")).toStrictEqual({ auto: "div", p: { a: "1", children: ["x", { auto: "F", p: {} }] } });
  });
});
