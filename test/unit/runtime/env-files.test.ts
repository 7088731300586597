/**
 * The env files on disk as the loop's host reads them (src/runtime/env-files.ts, spec §8.1, §8.2):
 * what the in-memory host of test/unit/core stands in for.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { loadRunEnv } from "../../../src/core/envfile.js";
import { LoopxError } from "../../../src/core/errors.js";
import { fsEnvFileReader, globalEnvPath } from "../../../src/runtime/env-files.js";
import { giveToUnprivileged, ROOT, tempDir, unprivileged } from "../../helpers.js";

describe("env files on disk", () => {
  it("reads a file's text; a missing global file is no variables; a missing -e file is an error naming it", () => {
    const dir = tempDir("loopx-unit-env-");
    writeFileSync(join(dir, "local.env"), "A=1\n");
    expect(fsEnvFileReader.read(join(dir, "local.env"), "env file", false)).toBe("A=1\n");
    expect(fsEnvFileReader.read(join(dir, "missing.env"), "global env file", true)).toBeUndefined();
    expect(() => fsEnvFileReader.read(join(dir, "missing-local.env"), "env file", false)).toThrow(new LoopxError(`env file not found: ${join(dir, "missing-local.env")}`));
  });

  // "If the directory or file does not exist, loopx treats it as having no global variables."
  it("XDG_CONFIG_HOME pointing at a nonexistent directory is fine", () => {
    const path = globalEnvPath({ XDG_CONFIG_HOME: join(tempDir("loopx-unit-xdg-"), "does-not-exist") });
    expect(fsEnvFileReader.read(path, "global env file", true)).toBeUndefined();
  });

  // Judgement call: a directory where a file is expected is "unreadable".
  it("a directory given as -e or as the global env file is an error (judgement call)", () => {
    const dir = tempDir("loopx-unit-env-");
    expect(() => fsEnvFileReader.read(dir, "env file", false)).toThrow(LoopxError);
    const config = tempDir("loopx-unit-xdg-");
    mkdirSync(join(config, "loopx", "env"), { recursive: true });
    expect(() => fsEnvFileReader.read(globalEnvPath({ XDG_CONFIG_HOME: config }), "global env file", true)).toThrow(`cannot read global env file ${join(config, "loopx", "env")}: it is a directory`);
  });

  // "If the file exists but is unreadable (e.g., permission denied), loopx exits with code 1".
  // Root reads a mode-000 file anyway: the reader runs in a child process as an unprivileged user.
  it("an unreadable global env file is an error (read as an unprivileged user)", () => {
    const work = tempDir("loopx-unit-env-");
    const config = tempDir("loopx-unit-xdg-");
    mkdirSync(join(config, "loopx"));
    writeFileSync(join(config, "loopx", "env"), "A=1\n");
    const probe = join(work, "probe.mjs");
    const src = (path: string) => JSON.stringify(pathToFileURL(join(ROOT, path)).href);
    writeFileSync(
      probe,
      `import { loadRunEnv } from ${src("src/core/envfile.ts")};
import { fsEnvFileReader } from ${src("src/runtime/env-files.ts")};
try {
  loadRunEnv(fsEnvFileReader, undefined, () => {});
  console.log(JSON.stringify({ error: null }));
} catch (error) {
  console.log(JSON.stringify({ error: error.name, message: error.message }));
}
`,
    );
    giveToUnprivileged(work, config);
    chmodSync(join(config, "loopx", "env"), 0o000);
    const tsx = pathToFileURL(join(ROOT, "node_modules/tsx/dist/esm/index.mjs")).href;
    const [exe, args] = unprivileged(process.execPath, ["--import", tsx, probe], work, config, ROOT);
    const child = spawnSync(exe, args, { cwd: work, env: { PATH: process.env.PATH, XDG_CONFIG_HOME: config, HOME: config }, encoding: "utf8" });
    expect(child.status, child.stderr).toBe(0);
    expect(JSON.parse(child.stdout)).toStrictEqual({ error: "LoopxError", message: `cannot read global env file ${join(config, "loopx", "env")}: permission denied (EACCES)` });
  });

  it("the global file and the -e file merge, local winning (spec §8.3)", () => {
    const config = tempDir("loopx-unit-xdg-");
    mkdirSync(join(config, "loopx"));
    writeFileSync(join(config, "loopx", "env"), "A=global\nB=global\n");
    writeFileSync(join(config, "local.env"), "B=local\n");
    const reader = { ...fsEnvFileReader, globalEnvFile: () => globalEnvPath({ XDG_CONFIG_HOME: config }) };
    expect(Object.fromEntries(loadRunEnv(reader, join(config, "local.env"), () => {}))).toStrictEqual({ A: "global", B: "local" });
  });
});
