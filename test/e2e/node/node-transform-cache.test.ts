/**
 * loopx's transform cache for TypeScript/JSX under Node (src/runtime/loader/transform.ts):
 * an edited script runs its new code on the very next iteration; truncated or garbage entries are
 * rebuilt; loops sharing the cache in parallel never see a half-written entry; a warm cache loads
 * neither tsx nor esbuild into the script process; the cache stays bounded. Under the machine's
 * Node and the newest pinned release (in-thread hooks), i.e. both hook paths when the machine's
 * Node is older than 22.15.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hash, prune } from "../../../src/runtime/loader/transform.js";
import { isolatedEnv, makeProject, readTrace, runLoopx, tempDir, type Runtime } from "../../helpers.js";
import { nodeMatrix } from "../../fixtures/node-matrix.js";

const matrix = nodeMatrix();
/** The machine's Node and the newest pinned release (the same one on hosts without pinned releases). */
const NODES: Runtime[] = [...new Set([matrix[0]!, matrix[matrix.length - 1]!])];
/** The first Node of the matrix with module.registerHooks (in-thread hooks), if any. */
const IN_THREAD = matrix.find((node) => execFileSync(node.exe, ["-p", 'typeof require("node:module").registerHooks'], { encoding: "utf8" }).trim() === "function");

function cacheEntries(env: Record<string, string>): string[] {
  const dir = join(env.XDG_CACHE_HOME!, "loopx", "transform");
  return existsSync(dir) ? readdirSync(dir).map((name) => join(dir, name)) : [];
}

describe.each(NODES)("transform cache ($label)", (node) => {
  it("a script that edits itself runs its new code on the very next iteration (same length, same second)", async () => {
    const cwd = tempDir();
    const trace = join(cwd, "trace.log");
    // Each run appends its version and rewrites its own file with the next one: the edit keeps
    // the file's length and usually its mtime second, so only the content tells them apart.
    const script = (n: number) =>
      'import { appendFileSync, readFileSync, writeFileSync } from "node:fs";\n' +
      `const version: number = ${n};\nappendFileSync(${JSON.stringify(trace)}, "v" + version + "\\n");\n` +
      "const self = new URL(import.meta.url);\n" +
      `writeFileSync(self, readFileSync(self, "utf8").replace("= " + version + ";", "= " + (version + 1) + ";"));\n`;
    makeProject({ ".loopx/w/index.ts": script(1) }, cwd);
    const env = isolatedEnv({ XDG_CACHE_HOME: join(cwd, "cache") });
    const result = await runLoopx(node, ["run", "-n", "4", "w"], { cwd, env });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(readTrace(cwd)).toEqual(["v1", "v2", "v3", "v4"]);
    expect(cacheEntries(env).filter((path) => path.endsWith(".js"))).toHaveLength(4);
  });

  it("the same scripts in another directory (a worktree, another project) are cache hits; errors still name their own file and line", async () => {
    const cache = join(tempDir(), "cache");
    // index.ts throws from lib/fail.ts; "odd name.ts" (not a URL-safe name) keeps its full path.
    const files = {
      ".loopx/w/lib/fail.ts": 'type Why = string;\n\nexport function fail(why: Why): never {\n  throw new Error("failed: " + why);\n}\n',
      ".loopx/w/lib/odd name.ts": "export const odd: number = 1;\n",
      ".loopx/w/index.ts": 'import { fail } from "./lib/fail.ts";\nimport { odd } from "./lib/odd name.ts";\nconst n: number = odd;\nfail(String(n));\n',
    };
    const runIn = async (cwd: string) => {
      makeProject(files, cwd);
      return runLoopx(node, ["run", "-n", "1", "w"], { cwd, env: isolatedEnv({ XDG_CACHE_HOME: cache }) });
    };
    const first = tempDir("loopx-first-");
    const second = tempDir("loopx-second-");
    for (const cwd of [first, second]) {
      const result = await runIn(cwd);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("Error: failed: 1");
      expect(result.stderr).toContain(`at fail (${join(cwd, ".loopx/w/lib/fail.ts")}:4:9)`);
      expect(result.stderr).toContain(`(${join(cwd, ".loopx/w/index.ts")}:4:1)`);
    }
    // One entry per file name and content: three, shared by both projects — except the odd name's,
    // made once per directory.
    const entries = cacheEntries({ XDG_CACHE_HOME: cache }).filter((path) => path.endsWith(".js"));
    expect(entries).toHaveLength(4);
    expect(entries.filter((path) => readFileSync(path, "utf8").includes("export const odd"))).toHaveLength(2);
  });

  it("truncated and garbage entries are rebuilt transparently; temp files never stay behind", async () => {
    const cwd = tempDir();
    makeProject(
      {
        ".loopx/w/lib/two.ts": "export const two: number = 2;\n",
        ".loopx/w/index.ts": `import { two } from "./lib/two.ts";\nconst sum: number = two + 40;\nprocess.stdout.write(JSON.stringify({ result: String(sum) }));\n`,
      },
      cwd,
    );
    const env = isolatedEnv({ XDG_CACHE_HOME: join(cwd, "cache") });
    const first = await runLoopx(node, ["run", "-n", "1", "w"], { cwd, env });
    expect(first.code).toBe(0);
    const entries = cacheEntries(env);
    expect(entries).toHaveLength(2);
    const good = new Map(entries.map((path) => [path, readFileSync(path, "utf8")]));
    const damages: Array<(text: string) => string> = [
      (text) => text.slice(0, Math.floor(text.length / 2)), // truncated mid-code
      (text) => text.slice(0, text.indexOf("\n") + 3), // truncated mid-source
      () => "\u0000garbage\u0001".repeat(50),
      (text) => text.replace("two", "TWO"), // same length, damaged source copy
      (text) => text.slice(0, -5) + "oops;", // same length, damaged code
      () => "",
    ];
    for (const damage of damages) {
      for (const [path, text] of good) writeFileSync(path, damage(text));
      const again = await runLoopx(node, ["run", "-n", "2", "w"], { cwd, env });
      expect(again.stderr).toBe("");
      expect(again.code).toBe(0);
      for (const [path, text] of good) expect(readFileSync(path, "utf8")).toBe(text);
    }
    expect(cacheEntries(env).filter((path) => path.endsWith(".tmp"))).toEqual([]);
  });

  it("parallel loops sharing the cache, with entries vanishing under them, never run a half-written entry", async () => {
    const cwd = tempDir();
    const trace = join(cwd, "trace.log");
    // A module big enough that its entry takes more than one write() to land.
    const big = Array.from({ length: 3000 }, (_, i) => `export const value${i}: number = ${i};`).join("\n") + "\n";
    makeProject(
      {
        ".loopx/w/lib/big.ts": big,
        ".loopx/w/index.ts":
          'import { appendFileSync } from "node:fs";\nimport { value2999 } from "./lib/big.ts";\n' +
          `const ok: boolean = value2999 === 2999;\nappendFileSync(${JSON.stringify(trace)}, ok ? "ok\\n" : "BAD\\n");\n`,
      },
      cwd,
    );
    const env = isolatedEnv({ XDG_CACHE_HOME: join(cwd, "cache") });
    let stop = false;
    // Keeps deleting entries so the loops keep missing and rewriting the same keys concurrently.
    const deleter = (async () => {
      while (!stop) {
        for (const path of cacheEntries(env)) if (path.endsWith(".js")) writeFileSync(path, "");
        await new Promise((resolve) => setTimeout(resolve, 15));
      }
    })();
    // One cache, but each loop its own records: three runs of w in one tree are told about each
    // other otherwise (the same-workflow warning of --worktree), which is not what is tested here.
    const ownRecords = () => ({ ...env, XDG_STATE_HOME: tempDir("loopx-state-") });
    const loops = await Promise.all([1, 2, 3].map(() => runLoopx(node, ["run", "-n", "6", "w"], { cwd, env: ownRecords(), timeoutMs: 60_000 })));
    stop = true;
    await deleter;
    for (const result of loops) {
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
    }
    expect(readTrace(cwd)).toEqual(Array(18).fill("ok"));
    expect(cacheEntries(env).filter((path) => path.endsWith(".tmp"))).toEqual([]);
  });
});

// In-thread hooks only (module.registerHooks): with module.register, esbuild would load in the
// hooks thread, whose modules the script cannot list.
describe.runIf(IN_THREAD)(`transform cache, script process (${IN_THREAD?.label})`, () => {
  const node = IN_THREAD!;
  it("on a warm cache the script process loads neither tsx nor esbuild; on a cold one it does (control)", async () => {
    const cwd = tempDir();
    const seen = join(cwd, "modules.json");
    makeProject(
      {
        ".loopx/w/index.ts":
          'import { createRequire } from "node:module";\nimport { writeFileSync } from "node:fs";\n' +
          `const loaded: string[] = Object.keys(createRequire(import.meta.url).cache);\nwriteFileSync(${JSON.stringify(seen)}, JSON.stringify(loaded));\n`,
      },
      cwd,
    );
    const env = isolatedEnv({ XDG_CACHE_HOME: join(cwd, "cache") });
    const heavy = (paths: string[]) => paths.filter((path) => /\/node_modules\/(?:tsx|esbuild|@esbuild)\//.test(path));
    expect((await runLoopx(node, ["run", "-n", "1", "w"], { cwd, env })).code).toBe(0);
    expect(heavy(JSON.parse(readFileSync(seen, "utf8")))).not.toEqual([]);
    expect((await runLoopx(node, ["run", "-n", "1", "w"], { cwd, env })).code).toBe(0);
    expect(heavy(JSON.parse(readFileSync(seen, "utf8")))).toEqual([]);
  });
});

describe("transform cache bounds (unit)", () => {
  it("prune removes the oldest entries down to three quarters of the bound, and nothing under it", () => {
    const dir = tempDir();
    for (let i = 0; i < 40; i++) {
      const path = join(dir, `${i}.js`);
      writeFileSync(path, "x".repeat(100));
      utimesSync(path, 1_000_000 + i, 1_000_000 + i);
    }
    prune(dir, 40, 1_000_000);
    expect(readdirSync(dir)).toHaveLength(40);
    prune(dir, 20, 1_000_000);
    const left = readdirSync(dir).map((name) => Number(name.split(".")[0])).sort((a, b) => a - b);
    expect(left).toEqual(Array.from({ length: 15 }, (_, i) => 25 + i));
    prune(dir, 100, 1000); // bytes: 1,500 > 1,000 -> down to 750 bytes = 7 entries
    expect(readdirSync(dir)).toHaveLength(7);
  });

  it("hash is stable, 28 hex digits, and tells near-identical sources apart", () => {
    expect(hash("const a = 1;")).toMatch(/^[0-9a-f]{28}$/);
    expect(hash("const a = 1;")).toBe(hash("const a = 1;"));
    expect(hash("const a = 1;")).not.toBe(hash("const a = 2;"));
    expect(hash("")).not.toBe(hash("\u0000"));
  });
});
