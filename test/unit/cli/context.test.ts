/**
 * Commands work with the context main() gives them (src/cli/context.ts): its directory, its
 * environment and its streams, never the process's own. Runs main() in-process with contexts of
 * the test's own, whose directories and XDG directories are not the process's.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import type { LoopxContext } from "../../../src/cli/context.js";
import { main } from "../../../src/cli/main.js";
import { makeProject, tempDir } from "../../helpers.js";


/** A context in `cwd` with `env` (nothing of the process's), stdin holding `input`; `stdout()` is what was written. */
function contextIn(cwd: string, env: Record<string, string>, input = ""): { context: LoopxContext; stdout: () => string } {
  const stdout = new PassThrough();
  let written = "";
  stdout.on("data", (chunk: Buffer) => (written += chunk.toString("utf8")));
  const context: LoopxContext = { cwd, env, argv: [], stdin: Readable.from([Buffer.from(input)]), stdout, stderr: new PassThrough(), colorDepth: 1 };
  return { context, stdout: () => written };
}

/** A home of its own, with XDG directories that point into it. */
function ownEnv(): Record<string, string> {
  const home = tempDir();
  return { HOME: home, XDG_CONFIG_HOME: join(home, "config"), XDG_STATE_HOME: join(home, "state") };
}

describe("commands take their directory, environment and streams from the context", () => {
  it("env set and env list: the context's XDG_CONFIG_HOME, the context's stdout", async () => {
    const env = ownEnv();
    const cwd = tempDir();
    expect(await main(["env", "set", "GREETING", "hi there"], undefined, contextIn(cwd, env).context)).toBe(0);
    expect(readFileSync(join(env.XDG_CONFIG_HOME!, "loopx", "env"), "utf8")).toBe('GREETING="hi there"\n');
    const listed = contextIn(cwd, env);
    expect(await main(["env", "list"], undefined, listed.context)).toBe(0);
    expect(listed.stdout()).toBe("GREETING=hi there\n");
    // Another context, another file: nothing listed.
    const other = contextIn(cwd, ownEnv());
    expect(await main(["env", "list"], undefined, other.context)).toBe(0);
    expect(other.stdout()).toBe("");
  });

  it("init: writes the workflow into the context's directory", async () => {
    const cwd = tempDir();
    expect(await main(["init", "hello"], undefined, contextIn(cwd, ownEnv()).context)).toBe(0);
    expect(existsSync(join(cwd, ".loopx", "hello", "index.sh"))).toBe(true);
  });

  it("runs: the context's project and state directory", async () => {
    const env = ownEnv();
    const cwd = tempDir();
    const { context, stdout } = contextIn(cwd, env);
    expect(await main(["runs"], undefined, context)).toBe(0);
    expect(stdout()).toContain(`no runs of ${cwd} recorded in ${join(env.XDG_STATE_HOME!, "loopx", "runs")}`);
  });

  it("run -h: lists the workflows of the context's directory", async () => {
    const cwd = makeProject({ ".loopx/only-here/index.sh": "echo hi\n" });
    const { context, stdout } = contextIn(cwd, ownEnv());
    expect(await main(["run", "-h"], undefined, context)).toBe(0);
    expect(stdout()).toMatch(/Workflows in \.loopx\/:\n {2}only-here\n/);
  });

  it("output --result-file -: reads the context's stdin and writes the context's stdout", async () => {
    const { context, stdout } = contextIn(tempDir(), ownEnv(), "from the context\n");
    expect(await main(["output", "--result-file", "-"], undefined, context)).toBe(0);
    expect(stdout()).toBe(`${JSON.stringify({ result: "from the context\n" })}\n`);
  });

  it("the lint holds it: a command that reads process.* fails `npm run lint`, only there and only as code", () => {
    // A copy of the repository's Biome configuration over a planted tree: the rule is the one in biome.jsonc.
    const repo = join(import.meta.dirname, "../../..");
    const dir = tempDir();
    copyFileSync(join(repo, "biome.jsonc"), join(dir, "biome.jsonc"));
    const planted = "export const where = process.cwd();\nexport const script = `echo \\${process.env.HOME}`;\n";
    mkdirSync(join(dir, "src/cli/commands"), { recursive: true });
    writeFileSync(join(dir, "src/cli/commands/planted.ts"), planted);
    writeFileSync(join(dir, "src/cli/main.ts"), planted);
    const lint = spawnSync(join(repo, "node_modules/.bin/biome"), ["lint", "--vcs-enabled=false", "--max-diagnostics=20"], { cwd: dir, encoding: "utf8" });
    const output = lint.stdout + lint.stderr;
    expect(lint.status).toBe(1);
    // One finding: the command's code; not the text of the script it writes, not main().
    expect(output.match(/lint\/style\/noRestrictedGlobals/g)).toHaveLength(1);
    expect(output).toContain("src/cli/commands/planted.ts:1:22 lint/style/noRestrictedGlobals");
  });
});
