/**
 * The GitHub Action (action.yml → action/main.mjs), run as the runner runs it: the INPUT_*
 * variables, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, GITHUB_WORKSPACE, RUNNER_TEMP and RUNNER_TOOL_CACHE
 * set to temp files and directories, the release binary served by a local stand-in for GitHub's
 * release downloads (GITHUB_SERVER_URL on 127.0.0.1), against real loops.
 */
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { marked, type Token, type Tokens } from "marked";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { BINARY, carriersOf, isolatedEnv, linuxOnly, makeProject, NODE, ROOT, sh, sleep, tempDir, VERSION, waitFor } from "../../helpers.js";
import { manualText } from "../../fixtures/manual.js";

const ACTION_YML = parse(readFileSync(join(ROOT, "action.yml"), "utf8")) as {
  inputs: Record<string, { default?: string }>;
  runs: { steps: Array<{ run: string; shell: string; env: Record<string, string> }> };
};
const ENTRY = join(ROOT, "action", "main.mjs");
const ASSET = `loopx-linux-${process.arch === "arm64" ? "arm64" : "x64"}`;
const REPO = "example/loopx";

/** The release download stand-in: /<repo>/releases/download/v<version>/{SHA256SUMS,<asset>}; `tamper` serves other bytes. */
let server: Server;
let serverUrl = "";
const served: string[] = [];
let tamper = false;
beforeAll(async () => {
  const binary = readFileSync(BINARY);
  const sums = `${createHash("sha256").update(binary).digest("hex")}  ${ASSET}\n`;
  server = createServer((request, response) => {
    served.push(request.url ?? "");
    const prefix = `/${REPO}/releases/download/v${VERSION}/`;
    if (request.url === `${prefix}SHA256SUMS`) return void response.end(sums);
    if (request.url === `${prefix}${ASSET}`) return void response.end(tamper ? Buffer.concat([binary, Buffer.from("x")]) : binary);
    response.statusCode = 404;
    response.end("not found");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

interface ActionRun {
  code: number | null;
  stdout: string;
  stderr: string;
  outputs: Record<string, string>;
  summary: string;
  env: Record<string, string>;
}

/** GITHUB_OUTPUT's `name<<delimiter` blocks as a map. */
function parseOutputs(text: string): Record<string, string> {
  const outputs: Record<string, string> = {};
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const match = /^([^<]+)<<(.+)$/.exec(lines[i]!);
    if (!match) continue;
    const end = lines.indexOf(match[2]!, i + 1);
    outputs[match[1]!] = lines.slice(i + 1, end).join("\n");
    i = end;
  }
  return outputs;
}

/**
 * The action as a runner checks it out for `uses: <owner>/<name>@<ref>`: its files (action.yml,
 * action/, package.json) under <runner>/_actions/<owner>/<name>/<ref>.
 */
function checkedOutAction(path: string): string {
  for (const file of ["action.yml", "package.json"]) cpSync(join(ROOT, file), join(path, file));
  cpSync(join(ROOT, "action"), join(path, "action"), { recursive: true });
  return path;
}
const RUNNER_ACTIONS = tempDir("loopx-runner-work-");
const ACTION_PATH = checkedOutAction(join(RUNNER_ACTIONS, "_actions", REPO, "v0"));

/** What the runner knows of the step: the action's repository and ref (`github.action_*`), and where it is checked out. */
interface StepContext {
  actionRepository: string;
  actionRef: string;
  actionPath: string;
}
const USED_AS: StepContext = { actionRepository: REPO, actionRef: "v0", actionPath: ACTION_PATH };

/** action.yml's step `env:` as the runner evaluates it: `${{ inputs.<name> }}` (or its default) and `${{ github.<name> }}`. */
function stepEnv(inputs: Record<string, string>, context: StepContext): Record<string, string> {
  const github: Record<string, string> = { action_repository: context.actionRepository, action_ref: context.actionRef, action_path: context.actionPath };
  const env: Record<string, string> = {};
  for (const [name, expression] of Object.entries(ACTION_YML.runs.steps[0]!.env)) {
    env[name] = expression.replace(/\$\{\{\s*(inputs|github)\.([a-z_-]+)\s*\}\}/g, (_, scope: string, key: string) => {
      if (scope === "github") return github[key] ?? "";
      return inputs[key] ?? ACTION_YML.inputs[key]?.default ?? "";
    });
  }
  return env;
}

/**
 * The runner's environment for the action's step, in `workspace`; `inputs` by their action.yml
 * names. Only what a runner sets: in a composite action's `run` step GITHUB_ACTION_REPOSITORY and
 * GITHUB_ACTION_REF are empty (actions/runner#2473), GITHUB_REPOSITORY is the workflow's own.
 */
function runnerEnv(workspace: string, inputs: Record<string, string>, cache = tempDir("loopx-toolcache-"), context = USED_AS): Record<string, string> {
  const runnerTemp = tempDir("loopx-runner-temp-");
  const env = isolatedEnv({
    CI: "true",
    GITHUB_ACTIONS: "true",
    GITHUB_WORKSPACE: workspace,
    GITHUB_REPOSITORY: "someone/app",
    GITHUB_OUTPUT: join(runnerTemp, "output"),
    GITHUB_STEP_SUMMARY: join(runnerTemp, "summary.md"),
    GITHUB_SERVER_URL: serverUrl,
    GITHUB_ACTION: "__loopx_step",
    GITHUB_ACTION_PATH: context.actionPath,
    GITHUB_ACTION_REPOSITORY: "",
    GITHUB_ACTION_REF: "",
    RUNNER_TEMP: runnerTemp,
    RUNNER_TOOL_CACHE: cache,
    ...stepEnv(inputs, context),
  });
  writeFileSync(env.GITHUB_OUTPUT!, "");
  return env;
}

/** Runs the step as the runner does (`shell: bash`: bash --noprofile --norc -eo pipefail); `during` may signal it while it runs. */
async function runAction(env: Record<string, string>, during?: (pid: number) => Promise<void>): Promise<ActionRun> {
  const step = ACTION_YML.runs.steps[0]!;
  expect(step.shell).toBe("bash");
  const child = spawn("bash", ["--noprofile", "--norc", "-eo", "pipefail", "-c", step.run], { cwd: env.GITHUB_WORKSPACE, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const closed = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  if (during) await during(child.pid!);
  const code = await closed;
  const summary = existsSync(env.GITHUB_STEP_SUMMARY!) ? readFileSync(env.GITHUB_STEP_SUMMARY!, "utf8") : "";
  return { code, stdout, stderr, outputs: parseOutputs(readFileSync(env.GITHUB_OUTPUT!, "utf8")), summary, env };
}

/** What a reader sees of inline tokens: escapes resolved, entities decoded, no markup. */
function plainText(tokens: Token[]): string {
  const entities: Record<string, string> = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'" };
  return tokens
    .map((token) => {
      if ("tokens" in token && token.tokens && token.type !== "text") return plainText(token.tokens);
      return token.type === "escape" ? token.text : token.raw.replace(/&(amp|lt|gt|quot|#39);/g, (entity) => entities[entity]!);
    })
    .join("");
}

/** The summary's tables, parsed by a Markdown parser (cells as the text a reader sees). */
function tables(markdown: string): Array<{ header: string[]; rows: string[][] }> {
  return allTables(markdown).filter((table) => table.header[0] === "#");
}

/** Every table of the summary (the facts first). */
function allTables(markdown: string): Array<{ header: string[]; rows: string[][] }> {
  return (marked.lexer(markdown).filter((token) => token.type === "table") as Tokens.Table[]).map((table) => ({
    header: table.header.map((cell) => plainText(cell.tokens)),
    rows: table.rows.map((row) => row.map((cell) => plainText(cell.tokens))),
  }));
}

const COUNTER = sh(`n=$(cat "$LOOPX_PROJECT_ROOT/count" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$LOOPX_PROJECT_ROOT/count"
if [ $n -ge 3 ]; then $LOOPX_BIN output --result "done at $n" --stop; else $LOOPX_BIN output --result "step $n"; fi`);

linuxOnly("the loopx GitHub Action's entry", () => {
  it("a stopped run: outputs, summary with a table of iterations, exit 0; the binary is fetched once and checked", async () => {
    const project = makeProject({ ".loopx/work/index.sh": COUNTER });
    const cache = tempDir("loopx-toolcache-");
    const run = await runAction(runnerEnv(project, { target: "work", args: "-n 10" }, cache));
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.outputs).toMatchObject({ state: "stopped", "exit-code": "0", iterations: "3" });
    expect(run.outputs["run-id"]).toMatch(/^[0-9a-z]+/);
    expect(existsSync(run.outputs.record!)).toBe(true);
    expect(Number(run.outputs["duration-ms"])).toBeGreaterThan(0);
    expect(run.summary).toContain(run.outputs["run-id"]);
    const [table] = tables(run.summary);
    expect(table!.header.slice(0, 2)).toEqual(["#", "target"]);
    expect(table!.rows.map((row) => row[1])).toEqual(["work:index", "work:index", "work:index"]);
    expect(existsSync(join(cache, "loopx", VERSION, ASSET, "loopx"))).toBe(true);
    // From the action's own repository (GITHUB_ACTION_REPOSITORY is empty, GITHUB_REPOSITORY is the workflow's).
    expect(served).toContain(`/${REPO}/releases/download/v${VERSION}/${ASSET}`);
    const downloads = served.length;
    const again = await runAction(runnerEnv(makeProject({ ".loopx/work/index.sh": COUNTER }), { target: "work" }, cache));
    expect(again.code).toBe(0);
    expect(served.length).toBe(downloads); // from the tool cache
  });

  it("a failed run fails the step with loopx's exit code; the summary says why, once", async () => {
    const project = makeProject({ ".loopx/work/index.sh": sh(`echo "broke: disk" >&2; exit 3`) });
    const run = await runAction(runnerEnv(project, { target: "work" }));
    expect(run.code).toBe(1);
    expect(run.outputs).toMatchObject({ state: "failed", "exit-code": "1", iterations: "1" });
    const facts = allTables(run.summary)[0]!.rows;
    const ended = facts.find((row) => row[0] === "ended")?.[1];
    expect(ended).toMatch(/failed|exited with code 3/);
    // The reason is told once (it had both an "ended" and a "why" row saying the same).
    expect(facts.filter((row) => row[1]!.includes("exited with code 3")).map((row) => row[0])).toEqual(["ended"]);
  });

  it("where github.action_repository is empty too (an action used by another composite action): the checkout path names the repository", async () => {
    const run = await runAction(runnerEnv(makeProject({ ".loopx/work/index.sh": COUNTER }), { target: "work" }, tempDir("loopx-toolcache-"), { ...USED_AS, actionRepository: "", actionRef: "" }));
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.outputs.state).toBe("stopped");
  });

  it("used from a checkout (uses: ./, not under _actions): package.json's repository; a missing release is one error line naming it", async () => {
    const checkout = checkedOutAction(join(tempDir("loopx-workspace-"), "vendored-loopx"));
    const run = await runAction(runnerEnv(makeProject({ ".loopx/work/index.sh": COUNTER }), { target: "work" }, tempDir("loopx-toolcache-"), { actionRepository: "", actionRef: "", actionPath: checkout }));
    expect(run.code).toBe(1);
    const owner = /github\.com\/([^/]+\/[^/.]+)/.exec(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).repository.url)![1];
    expect(run.stdout.trim().split("\n")).toEqual([`::error title=loopx::downloading ${serverUrl}/${owner}/releases/download/v${VERSION}/SHA256SUMS failed: HTTP 404 (the action ${owner} runs loopx ${VERSION})`]);
  });

  it("a time limit: the run's own exit code and state", async () => {
    const project = makeProject({ ".loopx/work/index.sh": sh(`sleep 30`) });
    const run = await runAction(runnerEnv(project, { target: "work", args: "--max-time 1s" }));
    expect(run.outputs.state).toBe("timed-out");
    expect(run.code).toBe(Number(run.outputs["exit-code"]));
    expect(run.code).not.toBe(0);
  });

  it("a budget stop: the run's exit code fails the job; totals in the outputs and the summary", async () => {
    const project = makeProject({
      ".loopx/work/index.sh": sh(`$LOOPX_BIN receipt --cost 0.4 --kind billed --input 1000 --output 250 --model claude-sonnet-4-5 && $LOOPX_BIN output --result "spent"`),
    });
    const run = await runAction(runnerEnv(project, { target: "work", args: "--max-cost 1 -n 10" }));
    expect(run.outputs).toMatchObject({ state: "budget", iterations: "3", "cost-billed-usd": "1.2", "cost-estimate-usd": "0", "tokens-input": "3000", "tokens-output": "750" });
    expect(run.code).toBe(Number(run.outputs["exit-code"]));
    expect(run.code).not.toBe(0);
    const facts = allTables(run.summary)[0]!;
    expect(facts.rows.find((row) => row[0] === "cost")?.[1]).toBe("$1.20");
    expect(facts.rows.find((row) => row[0] === "model claude-sonnet-4-5")?.[1]).toMatch(/^\$1\.20/);
    const [table] = tables(run.summary);
    expect(table!.header[5]).toBe("used");
    expect(table!.rows.map((row) => row[5])).toEqual(Array(3).fill("$0.40 · 1.25k tokens"));
  });

  it("hostile record text stays text in the summary", async () => {
    const hostile = "| x | <img src=x onerror=alert(1)> **bold** [a](javascript:alert(1)) `code` &amp;";
    const project = makeProject({
      "hostile.txt": hostile,
      ".loopx/work/index.sh": sh(`h=$(cat "$LOOPX_PROJECT_ROOT/hostile.txt"); $LOOPX_BIN note "$h"; $LOOPX_BIN output --result "$h" --stop`),
    });
    const run = await runAction(runnerEnv(project, { target: "work" }));
    expect(run.code).toBe(0);
    const html = marked.parse(run.summary) as string;
    expect(html).not.toMatch(/<img|<strong>bold|href="javascript|<code>code/);
    const [table] = tables(run.summary);
    expect(table!.rows).toHaveLength(1);
    // The result and the note are cells of their row, as written (the parser unescapes them).
    expect(table!.rows[0]![5]).toBe(hostile.replace(/\s+/g, " ").slice(0, 39) + "…");
    expect(table!.rows[0]![6]).toBe(hostile.replace(/\s+/g, " "));
    const facts = allTables(run.summary)[0]!;
    expect(facts.rows.find((row) => row[0] === "state")?.[1]).toBe("stopped");
  });

  it("a binary whose SHA-256 is not the release's is not run: one error line, nothing cached", async () => {
    tamper = true;
    try {
      const cache = tempDir("loopx-toolcache-");
      const run = await runAction(runnerEnv(makeProject({ ".loopx/work/index.sh": COUNTER }), { target: "work" }, cache));
      expect(run.code).toBe(1);
      expect(run.stdout.trim().split("\n")).toEqual([expect.stringMatching(/^::error title=loopx::.*SHA-256 .* SHA256SUMS says/)]);
      expect(existsSync(join(cache, "loopx", VERSION, ASSET, "loopx"))).toBe(false);
    } finally {
      tamper = false;
    }
  });

  it("bad inputs: no target, an unclosed quote in args, an unknown version — one line each, exit 1", async () => {
    const project = makeProject({ ".loopx/work/index.sh": COUNTER });
    for (const [inputs, pattern] of [
      [{ target: "" }, /input target is required/],
      [{ target: "work", args: "-n '3" }, /input args: a ' quote is not closed/],
      [{ target: "work", version: "latest" }, /input version "latest" is not a loopx version/],
    ] as const) {
      const run = await runAction(runnerEnv(project, inputs));
      expect(run.code).toBe(1);
      expect(run.stdout.trim().split("\n")).toEqual([expect.stringMatching(pattern)]);
    }
  });

  it("the stall-after input: a loop without progress ends stalled, exit 5; a worktree-merge that is not true or false is one line", async () => {
    const project = makeProject({ ".loopx/work/index.sh": COUNTER });
    const run = await runAction(runnerEnv(project, { target: "work", "stall-after": "2", args: "-n 10" }));
    expect(run.code, run.stdout + run.stderr).toBe(5);
    expect(run.outputs).toMatchObject({ state: "stalled", "exit-code": "5", iterations: "2" });
    const bad = await runAction(runnerEnv(project, { target: "work", "worktree-merge": "yes" }));
    expect(bad.code).toBe(1);
    expect(bad.stdout.trim().split("\n")).toEqual([expect.stringMatching(/input worktree-merge must be true or false, got "yes"/)]);
  });

  it("cancellation (SIGINT, then SIGTERM, as GitHub sends them): interrupted, summary written, nothing left", async () => {
    const tag = `action-${process.pid}-${Date.now()}`;
    const project = makeProject({ ".loopx/work/index.sh": sh(`touch "$LOOPX_PROJECT_ROOT/started"; trap '' TERM INT; sleep 60 & wait; sleep 60`) });
    const env = runnerEnv(project, { target: "work" });
    env.HARDENING_TAG = tag;
    const run = await runAction(env, async (pid) => {
      await waitFor(() => existsSync(join(project, "started")), 20_000);
      process.kill(pid, "SIGINT");
      await sleep(300);
      process.kill(pid, "SIGTERM");
    });
    expect(run.outputs.state).toBe("interrupted");
    expect(run.code).toBe(130);
    expect(run.summary).toMatch(/interrupted/);
    expect(await waitFor(() => carriersOf("HARDENING_TAG", tag).length === 0, 10_000)).toBe(true);
  });
});

describe("action.yml", () => {
  const VALIDATOR = join(ROOT, "node_modules", "@action-validator", "cli", "cli.mjs");
  const text = readFileSync(join(ROOT, "action.yml"), "utf8");
  const validate = (content: string) => {
    const path = join(tempDir("loopx-action-yml-"), "action.yml");
    writeFileSync(path, content);
    return spawnSync(NODE, [VALIDATOR, path], { encoding: "utf8", env: { PATH: process.env.PATH ?? "", FORCE_COLOR: "0" } });
  };

  it("validates against GitHub's action schema (action-validator); a broken copy does not", () => {
    const good = validate(text);
    expect(good.stderr).toBe("");
    expect(good.status).toBe(0);
    expect(validate(text.replace("using: composite", "using: compost")).status).toBe(1);
    expect(validate(text.replace("    required: true", "    required: yes please")).status).toBe(1);
  });

  it("passes every input to the entry as INPUT_<NAME>, and every output the entry writes is declared", () => {
    const action = parse(text) as { inputs: Record<string, unknown>; outputs: Record<string, { value: string }>; runs: { steps: Array<{ env: Record<string, string> }> } };
    const env = action.runs.steps[0]!.env;
    for (const name of Object.keys(action.inputs)) expect(env[`INPUT_${name.toUpperCase()}`]).toBe(`\${{ inputs.${name} }}`);
    const entry = readFileSync(ENTRY, "utf8");
    const written = [...entry.matchAll(/(?:outputs\["([a-z-]+)"\]|"([a-z-]+)": (?:summary|code|totals))/g)].map((m) => m[1] ?? m[2]);
    const plain = [...entry.matchAll(/^\s{4}(state|iterations|record): summary/gm)].map((m) => m[1]);
    const declared = Object.keys(action.outputs).sort();
    expect([...new Set([...written, ...plain])].sort()).toEqual(declared);
    for (const [name, output] of Object.entries(action.outputs)) expect(output.value).toBe(`\${{ steps.loop.outputs.${name} }}`);
  });
});

describe("what the manual tells a user to write", () => {
  it("`uses: <owner>/<name>@v<major>`: package.json's repository, and the major tag the release moves for this version", () => {
    const readme = manualText();
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string; repository: { url: string } };
    const repository = /^git\+https:\/\/github\.com\/([^/]+\/[^/]+)\.git$/.exec(pkg.repository.url)![1];
    const uses = [...readme.matchAll(/uses: ([^\s`]+\/loopx)@(v[0-9.]+)/g)];
    expect(uses.length).toBeGreaterThanOrEqual(3);
    for (const [, name, tag] of uses) {
      expect(name).toBe(repository);
      expect(tag).toBe(`v${pkg.version.split(".")[0]}`); // GITHUB_REF_NAME%%.* of v<version>
    }
    expect(readme).not.toContain("<owner>");
    expect(readFileSync(join(ROOT, "action.yml"), "utf8")).not.toContain("<owner>");
  });
});

describe("the release moves the action's major tag", () => {
  it("for a stable v1.x.y only, after the GitHub release exists", () => {
    const release = parse(readFileSync(join(ROOT, ".github", "workflows", "release.yml"), "utf8")) as { jobs: { publish: { steps: Array<{ name?: string; if?: string; run?: string }> } } };
    const steps = release.jobs.publish.steps;
    const move = steps.findIndex((step) => /major tag/.test(step.name ?? ""));
    expect(move).toBeGreaterThan(steps.findIndex((step) => /gh release create/.test(step.run ?? "")));
    expect(steps[move]!.if).toBe("needs.build.outputs.prerelease != 'true'");
    expect(steps[move]!.run).toContain('major="${GITHUB_REF_NAME%%.*}"');
  });
});
