/**
 * The Node matrix: what runs scripts — the run loop, the script helpers (`import
 * "loopx"` and `$LOOPX_BIN output`), signals, the programmatic API — under the machine's Node and
 * under Node 22, 24 and 26 from npm (fixtures/node-matrix.ts). A focused subset, not the whole suite
 * per version. On every version loopx's own machinery writes nothing to a script's stderr (Node 26
 * deprecates module.register, DEP0205), while a script's own warnings still pass through.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, isolatedEnv, makeProject, makeSymlink, processAlive, readTrace, runCommand, runLoopx, sh, tempDir, waitFor } from "../../helpers.js";
import { nodeMatrix } from "../../fixtures/node-matrix.js";

// A pinned release that is not installed fails this file with nodeMatrix()'s message.
describe.each(nodeMatrix())("Node matrix: $label", (node) => {
  it("TS, TSX and JS scripts hand results on with goto, use local TS modules and import { input, output } from loopx; stderr stays empty", async () => {
    const cwd = tempDir();
    const trace = join(cwd, "trace.log");
    makeProject(
      {
        ".loopx/w/lib/shout.ts": "export function shout(text: string): string {\n  return text.toUpperCase() + \"!\";\n}\n",
        ".loopx/w/index.ts":
          'import { output } from "loopx";\nimport { appendFileSync } from "node:fs";\nimport { shout } from "./lib/shout.js";\n' +
          `const word: string = shout("ts");\nappendFileSync(${JSON.stringify(trace)}, word + "\\n");\noutput({ result: word, goto: "view" });\n`,
        ".loopx/w/view.tsx":
          'import { input, output } from "loopx";\nimport { appendFileSync } from "node:fs";\n' +
          "const React = { createElement: (tag: string, _props: unknown, ...children: unknown[]): string => `<${tag}>${children.join(\"\")}</${tag}>` };\n" +
          `const html: string = <b>{await input()}</b>;\nappendFileSync(${JSON.stringify(trace)}, html + "\\n");\noutput({ result: html, goto: "last" });\n`,
        ".loopx/w/last.js":
          'import { input } from "loopx";\nimport { appendFileSync } from "node:fs";\n' +
          `appendFileSync(${JSON.stringify(trace)}, "js got " + (await input()) + " on " + process.version + "\\n");\nprocess.stdout.write(JSON.stringify({ stop: true }));\n`,
      },
      cwd,
    );
    const result = await runLoopx(node, ["run", "-n", "5", "w"], { cwd, env: isolatedEnv() });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const version = (await runCommand(node.exe, ["--version"], { cwd })).stdout.trim();
    expect(readTrace(cwd)).toEqual(["TS!", "<b>TS!</b>", `js got <b>TS!</b> on ${version}`]);
    expect(existsSync(trace)).toBe(true);
  });

  it("a script's own warnings still reach stderr; loopx adds no line of its own", async () => {
    const cwd = makeProject({
      ".loopx/w/index.ts": 'process.emitWarning("the script\'s own warning");\nconst done: string = "{\\"stop\\":true}";\nprocess.stdout.write(done);\n',
    });
    const result = await runLoopx(node, ["run", "w"], { cwd, env: isolatedEnv() });
    expect(result.code).toBe(0);
    const lines = result.stderr.split("\n").filter(Boolean);
    expect(lines[0]).toMatch(/Warning: the script's own warning$/);
    expect(lines.filter((line) => !line.includes("the script's own warning") && !line.includes("--trace-warnings"))).toEqual([]);
  });

  it("a plain JS script that imports only node: built-ins is an ES module without package.json type (the hookless path on Node without registerHooks)", async () => {
    const cwd = tempDir();
    const trace = join(cwd, "trace.log");
    // The script runs in .loopx/w; the trace's absolute path would name the temp dir ("loopx-test-…"), and a script mentioning loopx keeps the hooks.
    const record = (what: string) => `appendFileSync("../../trace.log", ${what} + "\\n");\n`;
    makeProject(
      {
        ".loopx/w/index.js":
          'import { appendFileSync } from "node:fs";\n' +
          record('`${typeof this} ${typeof require} ${typeof __filename} ${process.execArgv.includes("--experimental-default-type=module") ? "hookless" : "hooks"}`') +
          'process.stdout.write(JSON.stringify({ goto: "cjs" }));\n',
        ".loopx/w/cjs.js": 'require("node:fs");\n',
      },
      cwd,
    );
    const result = await runLoopx(node, ["run", "-n", "3", "w"], { cwd, env: isolatedEnv() });
    expect(result.code).toBe(1); // cjs.js: require is not defined in an ES module
    expect(result.stderr).toMatch(/require is not defined/);
    const version = (await runCommand(node.exe, ["-p", "typeof require('node:module').registerHooks"], { cwd })).stdout.trim();
    expect(readFileSync(trace, "utf8")).toBe(`undefined undefined undefined ${version === "function" ? "hooks" : "hookless"}\n`);
  });

  it("CommonJS in a TS script fails the loop (exit 1)", async () => {
    const cwd = makeProject({ ".loopx/w/index.ts": "module.exports = { a: 1 };\n" });
    const result = await runLoopx(node, ["run", "-n", "2", "w"], { cwd, env: isolatedEnv() });
    expect(result.code).toBe(1);
  });

  it("bash scripts call $LOOPX_BIN output (result, goto, stop)", async () => {
    const cwd = tempDir();
    makeProject(
      {
        ".loopx/w/index.sh": sh('"$LOOPX_BIN" output --result "first" --goto next'),
        ".loopx/w/next.sh": sh(`echo "next got $(cat)" >> '${join(cwd, "trace.log")}'\n"$LOOPX_BIN" output --stop`),
      },
      cwd,
    );
    const result = await runLoopx(node, ["run", "-n", "5", "w"], { cwd, env: isolatedEnv() });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(readTrace(cwd)).toEqual(["next got first"]);
  });

  it("SIGTERM to loopx while a TS script's child sleeps: exit 143 and no process survives", async () => {
    const cwd = tempDir();
    const ready = join(cwd, "ready");
    const pids = join(cwd, "pids");
    makeProject(
      {
        ".loopx/w/index.ts":
          'import { spawn } from "node:child_process";\nimport { writeFileSync } from "node:fs";\n' +
          'const child = spawn("sleep", ["60"], { stdio: "ignore" });\n' +
          `writeFileSync(${JSON.stringify(pids)}, process.pid + " " + child.pid);\nwriteFileSync(${JSON.stringify(ready)}, "");\n` +
          "setInterval(() => {}, 1000);\n",
      },
      cwd,
    );
    let send: (() => void) | undefined;
    const running = runLoopx(node, ["run", "w"], {
      cwd,
      env: isolatedEnv(),
      timeoutMs: 20_000,
      onSpawn: (child) => (send = () => child.kill("SIGTERM")),
    });
    expect(await waitFor(() => existsSync(ready), 15_000)).toBe(true);
    send!();
    const result = await running;
    expect(result.code).toBe(143);
    const [scriptPid, sleepPid] = readFileSync(pids, "utf8").split(" ").map(Number);
    expect(await waitFor(() => !processAlive(scriptPid!) && !processAlive(sleepPid!), 10_000)).toBe(true);
  });

  it("the programmatic API runs TS scripts from a program on this Node", async () => {
    const dir = tempDir();
    makeProject(
      {
        ".loopx/w/index.ts": 'import { output } from "loopx";\nconst n: number = 41;\noutput({ result: String(n + 1), goto: "two" });\n',
        ".loopx/w/two.ts": 'import { input, output } from "loopx";\noutput({ result: "got " + (await input()), stop: true });\n',
        "consumer.mjs": 'import { runPromise } from "loopx";\nconsole.log(JSON.stringify(await runPromise("w")));\n',
      },
      dir,
    );
    makeSymlink(ROOT, join(dir, "node_modules", "loopx")); // as `npm install loopx` would give it
    const result = await runCommand(node.exe, ["consumer.mjs"], { cwd: dir, env: isolatedEnv() });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual([{ result: "42", goto: "two" }, { result: "got 42", stop: true }]);
  });

  it("JSX defaults to classic React.createElement; a workflow tsconfig.json jsx setting is honoured", async () => {
    const cwd = tempDir();
    const trace = join(cwd, "trace.log");
    makeProject(
      {
        ".loopx/classic/index.tsx":
          `import { appendFileSync } from "node:fs";\nconst React = { createElement: (tag: string) => "classic:" + tag };\nappendFileSync(${JSON.stringify(trace)}, <i /> + "\\n");\n`,
        ".loopx/custom/tsconfig.json": '{\n  // comments are allowed\n  "compilerOptions": { "jsx": "react", "jsxFactory": "h" },\n}\n',
        ".loopx/custom/index.tsx":
          `import { appendFileSync } from "node:fs";\nconst h = (tag: string) => "h:" + tag;\nappendFileSync(${JSON.stringify(trace)}, <u /> + "\\n");\n`,
      },
      cwd,
    );
    for (const workflow of ["classic", "custom"]) {
      const result = await runLoopx(node, ["run", "-n", "1", workflow], { cwd, env: isolatedEnv() });
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
    }
    expect(readTrace(cwd)).toEqual(["classic:i", "h:u"]);
  });
});
