/**
 * The habits `npm run typecheck` and `npm run lint` enforce: each tool, run with this repository's
 * own configuration on a small planted project, passes the clean variant and fails the planted
 * violation (so a config that silently checks nothing cannot pass CI). scripts/size-limits.mjs, the
 * plain line counts, is planted a class too long (biome has no rule for classes).
 */
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = join(ROOT, "node_modules", ".bin");
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A fresh project directory holding `files` (path → text). */
function planted(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "loopx-habits-"));
  dirs.push(dir);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

function run(exe: string, args: string[], cwd: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(exe, args, { cwd, env: { ...process.env, NO_COLOR: "1", CI: "1" } }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, out: `${stdout}${stderr}` });
    });
  });
}

/** A function whose body has `lines` statements, and a file padded to `total` lines with it. */
function source(bodyLines: number, total: number): string {
  const fn = ["export function long(): number {", "  let n = 0;", ...Array.from({ length: bodyLines - 2 }, (_, i) => `  n += ${i};`), "  return n;", "}"];
  const pad = Array.from({ length: total - fn.length }, (_, i) => `export const c${i} = ${i};`);
  return `${[...fn, ...pad].join("\n")}\n`;
}

/** A class `lines` long, its first line to its closing brace (`head`: how it opens), of one-line methods. */
function classSource(lines: number, head = "export class Planted {"): string {
  const methods = Array.from({ length: lines - 2 }, (_, i) => `  m${i}(): number { return ${i}; }`);
  return `${[head, ...methods, "}"].join("\n")}\n`;
}

describe("habits: each checker fails on a planted violation", () => {
  it.concurrent("size-limits (scripts/size-limits.mjs): a class over 150 lines fails, declared or as an expression; at the limit it passes", async () => {
    const check = async (text: string) => {
      const dir = planted({ "src/planted.ts": text });
      await run("git", ["init", "-q"], dir);
      return run(process.execPath, [join(ROOT, "scripts", "size-limits.mjs")], dir);
    };
    const [atLimit, declared, expressed] = await Promise.all([
      check(classSource(150)),
      check(classSource(151)),
      check(classSource(151, "export const Planted = class {")),
    ]);
    expect(atLimit).toMatchObject({ code: 0 });
    expect(atLimit.out).toContain("no class over 150");
    expect(declared.code).not.toBe(0);
    expect(declared.out).toContain("src/planted.ts:1: a class of 151 lines (at most 150)");
    expect(declared.out).not.toContain("a function of");
    expect(expressed.code).not.toBe(0);
    expect(expressed.out).toContain("src/planted.ts:1: a class of 151 lines (at most 150)");
  });

  it.concurrent("biome (the repo's biome.jsonc): a src/ file over 300 lines and a function over 60 lines fail; at the limits it passes", async () => {
    const lint = (text: string) => {
      const dir = planted({ "src/planted.ts": text });
      cpSync(join(ROOT, "biome.jsonc"), join(dir, "biome.jsonc"));
      return run(join(BIN, "biome"), ["lint", "--vcs-enabled=false", "--error-on-warnings"], dir);
    };
    const [atLimits, tooLong, longFunction] = await Promise.all([lint(source(60, 300)), lint(source(60, 301)), lint(source(61, 200))]);
    expect(atLimits).toMatchObject({ code: 0 });
    expect(tooLong.code).not.toBe(0);
    expect(tooLong.out).toContain("lint/style/noExcessiveLinesPerFile");
    expect(tooLong.out).not.toContain("noExcessiveLinesPerFunction");
    expect(longFunction.code).not.toBe(0);
    expect(longFunction.out).toContain("lint/complexity/noExcessiveLinesPerFunction");
    expect(longFunction.out).not.toContain("noExcessiveLinesPerFile");
  });

  it.concurrent("knip (the repo's knip.jsonc): an unused file, an unused export and an unused dependency each fail", async () => {
    const project = (extra: Record<string, string>, dependencies: Record<string, string> = {}) => {
      const dir = planted({
        "package.json": JSON.stringify({ name: "planted", type: "module", dependencies }),
        "src/script.ts": 'import { used } from "./used.js";\nconsole.log(used);\n',
        "src/used.ts": "export const used = 1;\n",
        ...extra,
      });
      cpSync(join(ROOT, "knip.jsonc"), join(dir, "knip.jsonc"));
      return run(join(BIN, "knip"), ["--no-progress"], dir);
    };
    const [clean, file, exported, dependency] = await Promise.all([
      project({}),
      project({ "src/orphan.ts": "export const orphan = 1;\n" }),
      project({ "src/used.ts": "export const used = 1;\nexport const unused = 2;\n" }),
      project({}, { "left-pad": "1.3.0" }),
    ]);
    expect(clean).toMatchObject({ code: 0 });
    expect(file.code).not.toBe(0);
    expect(file.out).toMatch(/Unused files[\s\S]*src\/orphan\.ts/);
    expect(exported.code).not.toBe(0);
    expect(exported.out).toMatch(/Unused exports[\s\S]*unused/);
    expect(dependency.code).not.toBe(0);
    expect(dependency.out).toMatch(/Unused dependencies[\s\S]*left-pad/);
  });

  it.concurrent("tsc (the tests' test/tsconfig.json): a type error in a test file fails", async () => {
    const check = (text: string) => {
      const dir = planted({
        "planted.test.ts": text,
        "tsconfig.json": JSON.stringify({
          extends: join(ROOT, "test", "tsconfig.json"),
          compilerOptions: { rootDir: ".", typeRoots: [join(ROOT, "node_modules", "@types")] },
          include: ["planted.test.ts"],
        }),
      });
      return run(join(BIN, "tsc"), ["-p", join(dir, "tsconfig.json")], dir);
    };
    const [clean, wrong] = await Promise.all([check("export const n: number = 1;\n"), check('export const n: number = "one";\n')]);
    expect(clean).toMatchObject({ code: 0, out: "" });
    expect(wrong.code).not.toBe(0);
    expect(wrong.out).toContain("error TS2322");
  });
});
