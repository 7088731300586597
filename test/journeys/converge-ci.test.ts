/**
 * converge in CI: the README's converge command, run as written (through `sh`, with `loopx` on
 * PATH as the Action puts it), against a gate that never passes, ends red — a non-zero exit — and
 * its last line says it did not converge. (The form `loopx run -n 30 converge` ended 0 at the cap,
 * its last line a round like any other: a green job.)
 */
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLIS, runCommand, tempDir, type Cli } from "../helpers.js";
import { claudeStream, FakeAgents, lastWorkflowLine, workflowEnv, workflowProject } from "../fixtures/agents/support.js";
import { manualText } from "../fixtures/manual.js";

const README = manualText();
/** The README's converge command: the one line that runs converge with a task and a gate. */
const COMMAND = /^(CONVERGE_TASK=.*\bloopx run\b.*\bconverge)$/m.exec(README)?.[1];

/** A directory holding `loopx` as the channel installs it: a command on PATH. */
function loopxOnPath(cli: Cli): string {
  const dir = tempDir("loopx-path-");
  if (cli.prefix.length === 0) symlinkSync(cli.exe, join(dir, "loopx"));
  else {
    writeFileSync(join(dir, "loopx"), `#!/bin/sh\nexec '${cli.exe}' ${cli.prefix.map((arg) => `'${arg}'`).join(" ")} "$@"\n`);
    chmodSync(join(dir, "loopx"), 0o755);
  }
  return dir;
}

/** The Action runs the standalone binary; converge's own logic is the same under every channel (test/e2e/workflows/workflows.test.ts). */
const BINARY_CLI = CLIS.find((cli) => cli.name === "binary")!;

describe("converge in CI (the binary, as the Action runs it)", () => {
  const cli = BINARY_CLI;
  it("the README's command ends non-zero when not converged, and its last line says so", async () => {
    expect(COMMAND, "the README's converge command").toBeDefined();
    const fake = new FakeAgents().step("default", { out: claudeStream("Trying again.", { cost: 0.01 }) });
    // `npm test` (the README's gate) fails every round.
    const project = workflowProject(["converge"], { "package.json": JSON.stringify({ name: "app", private: true, scripts: { test: "echo '1 test failed' >&2; exit 1" } }) });
    mkdirSync(join(project, ".converge"), { recursive: true });
    const base = workflowEnv(fake);
    const env = { ...base, PATH: `${loopxOnPath(cli)}:${base.PATH}` };
    const result = await runCommand("/bin/sh", ["-c", COMMAND!], { cwd: project, env, timeoutMs: 120_000 });
    const rounds = Number(/CONVERGE_MAX_ROUNDS=(\d+)/.exec(COMMAND!)?.[1]);
    expect(result.code, result.stderr).not.toBe(0);
    expect(fake.calls()).toBe(rounds);
    expect(lastWorkflowLine(result.stderr)).toMatch(new RegExp(`^converge: not converged after ${rounds} rounds \\(CONVERGE_MAX_ROUNDS=${rounds}\\)`));
    expect(result.stderr.trim().split("\n").at(-1)).toBe("loopx: script converge:gate exited with code 1");
  }, 180_000);
});
