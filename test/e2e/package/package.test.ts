/**
 * The npm channel end to end: `npm pack`, `npm install -g <tgz>` into a temporary prefix, and a
 * TS workflow importing from "loopx" run through that global `loopx` in a project with no
 * node_modules (spec §3.1); `bunx loopx run` and programmatic import from the installed package.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { BUN, NODE, ROOT, isolatedEnv, makeProject, runCommand, tempDir } from "../../helpers.js";

const NPM_CLI = join(dirname(NODE), "..", "lib", "node_modules", "npm", "bin", "npm-cli.js");

function npm(args: string[], cwd: string): string {
  const npmEntry = existsSync(NPM_CLI) ? [NODE, NPM_CLI] : ["npm"];
  return execFileSync(npmEntry[0]!, [...npmEntry.slice(1), ...args, "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, npm_config_update_notifier: "false" },
  });
}

const WORKFLOW = {
  ".loopx/wf/index.ts": 'import { input, output } from "loopx";\nconst got: string = await input();\noutput({ result: "from-ts", goto: "check" });\n',
  ".loopx/wf/check.sh": 'cat > "$LOOPX_PROJECT_ROOT/result.txt"\n$LOOPX_BIN output --stop\n',
};

describe("npm package", () => {
  let tarball: string;
  let prefix: string;

  beforeAll(() => {
    const packDir = tempDir("loopx-pack-");
    const name = npm(["pack", "--pack-destination", packDir], ROOT).trim().split("\n").pop()!;
    tarball = join(packDir, name);
    prefix = tempDir("loopx-prefix-");
    npm(["install", "-g", "--prefix", prefix, tarball], prefix);
  }, 240_000);

  it("packs only what the package needs (dist JS, .d.ts, the NODE_PATH shim; no binaries, no sources)", () => {
    const listing = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" }).split("\n").filter(Boolean);
    expect(listing).toContain("package/dist/bin.js");
    expect(listing).toContain("package/dist/index.d.ts");
    expect(listing).toContain("package/dist/node-path/loopx/package.json");
    expect(listing.some((entry) => entry.startsWith("package/src/") || entry.startsWith("package/test/") || entry.startsWith("package/dist/bin/"))).toBe(false);
  });

  it("the globally installed loopx runs a TS workflow importing from loopx, under node and under bun", async () => {
    const globalBin = join(prefix, "bin", "loopx");
    const installedEntry = join(prefix, "lib", "node_modules", "loopx", "dist", "bin.js");
    for (const [exe, args] of [[globalBin, []], [BUN, [installedEntry]]] as const) {
      const cwd = makeProject(WORKFLOW);
      const result = await runCommand(exe, [...args, "run", "wf"], { cwd, env: isolatedEnv() });
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(readFileSync(join(cwd, "result.txt"), "utf8")).toBe("from-ts");
    }
  });

  it("`bunx loopx run <workflow>` works against the packed package", async () => {
    const cwd = makeProject({ ...WORKFLOW, "package.json": JSON.stringify({ name: "consumer", private: true }) });
    npm(["install", tarball], cwd);
    const result = await runCommand(BUN, ["x", "loopx", "run", "wf"], { cwd, env: isolatedEnv() });
    expect(result.code).toBe(0);
    expect(readFileSync(join(cwd, "result.txt"), "utf8")).toBe("from-ts");
  });

  it("`import { run, runPromise } from \"loopx\"` works from the installed package under node and bun", async () => {
    const cwd = makeProject({
      ...WORKFLOW,
      "package.json": JSON.stringify({ name: "consumer", private: true, type: "module" }),
      "main.mjs": 'import { run, runPromise } from "loopx";\nconst all = await runPromise("wf");\nconst first = [];\nfor await (const o of run("wf", { maxIterations: 1 })) first.push(o);\nconsole.log(JSON.stringify({ all, first }));\n',
    });
    npm(["install", tarball], cwd);
    expect(readdirSync(join(cwd, "node_modules"))).toContain("loopx");
    for (const exe of [NODE, BUN]) {
      const result = await runCommand(exe, ["main.mjs"], { cwd, env: isolatedEnv() });
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual({ all: [{ result: "from-ts", goto: "check" }, { stop: true }], first: [{ result: "from-ts", goto: "check" }] });
    }
  });
});
