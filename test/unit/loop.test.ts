/**
 * State-machine tests for runLoop (src/core/loop.ts) with a fake LoopHost — spec §2.2, §2.3, §6.6,
 * §6.7, §7.1, §7.2, §8. Discovery is real (temp `.loopx/` trees); script execution is scripted.
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import fc from "fast-check";
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { runLoop, type LoopHost, type LoopRequest } from "../../src/core/loop.js";
import { LoopxError } from "../../src/core/errors.js";
import type { Output } from "../../src/core/output.js";
import { giveToUnprivileged, unprivileged } from "../helpers.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

// ---------------------------------------------------------------------------------------------
// Temp projects and isolation of the global env file

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});
function tempDir(prefix: string): string {
  const d = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  roots.push(d);
  return d;
}
function writeFiles(root: string, files: Record<string, string>): void {
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), content);
  }
}
function makeProject(files: Record<string, string>): string {
  const root = tempDir("loopx-unit-loop-");
  writeFiles(root, files);
  return root;
}

/** The standard tree used by most tests. */
const STANDARD: Record<string, string> = {
  ".loopx/ralph/index.sh": "",
  ".loopx/ralph/check-ready.sh": "",
  ".loopx/ralph/other.ts": "",
  ".loopx/review-adr/index.sh": "",
  ".loopx/review-adr/request-feedback.sh": "",
  ".loopx/review-adr/apply-feedback.ts": "",
  ".loopx/review-adr/start.js": "",
  ".loopx/noindex/only.sh": "",
  ".loopx/docs/README.md": "",
};
let standardRoot: string;

let xdg: string;
let savedXdg: string | undefined;
beforeEach(() => {
  savedXdg = process.env.XDG_CONFIG_HOME;
  xdg = tempDir("loopx-unit-xdg-");
  process.env.XDG_CONFIG_HOME = xdg;
  standardRoot ??= makeProject(STANDARD);
});
afterEach(() => {
  if (savedXdg === undefined) delete process.env.XDG_CONFIG_HOME;
  else process.env.XDG_CONFIG_HOME = savedXdg;
});

// ---------------------------------------------------------------------------------------------
// Fake host

interface Call {
  label: string;
  workflow: string;
  script: string;
  path: string;
  dir: string;
  /** Exactly what the engine passed (undefined = no input). */
  rawStdin: string | undefined;
  /** What the script would read: undefined means empty stdin. */
  stdin: string;
  env: Record<string, string | undefined>;
}
type Reply = string | ((call: Call, callIndex: number) => string | Promise<string>);

function fakeHost(replies: Record<string, Reply | Reply[]>) {
  const calls: Call[] = [];
  const warnings: string[] = [];
  const entries: string[] = [];
  /** Interleaved record of first-entry and run events, to check ordering. */
  const events: string[] = [];
  const perLabel = new Map<string, number>();
  const host: LoopHost = {
    async runScript(step) {
      if (calls.length >= 200) throw new Error("runaway loop in test (200 calls)");
      const call: Call = {
        label: step.label,
        workflow: step.workflow.name,
        script: step.script.name,
        path: step.script.path,
        dir: step.workflow.dir,
        rawStdin: step.stdin,
        stdin: step.stdin ?? "",
        env: { ...step.env },
      };
      calls.push(call);
      events.push(`run:${step.label}`);
      const r = replies[step.label];
      if (r === undefined) throw new Error(`test has no scripted reply for ${step.label}`);
      let reply: Reply;
      if (Array.isArray(r)) {
        const i = perLabel.get(step.label) ?? 0;
        perLabel.set(step.label, i + 1);
        if (i >= r.length) throw new Error(`test ran out of scripted replies for ${step.label}`);
        reply = r[i]!;
      } else {
        reply = r;
      }
      const stdout = typeof reply === "function" ? await reply(call, calls.length - 1) : reply;
      return { stdout, stdoutBytes: Buffer.byteLength(stdout) };
    },
    warn: (message) => {
      warnings.push(message);
    },
    onFirstEntry: (workflow) => {
      entries.push(workflow.name);
      events.push(`enter:${workflow.name}`);
    },
  };
  return { host, calls, warnings, entries, events };
}

function request(target: unknown, extra: Partial<LoopRequest> = {}): LoopRequest {
  return { target, projectRoot: standardRoot, baseEnv: {}, loopxBin: "/x", ...extra };
}

async function collect(gen: AsyncGenerator<Output, void, undefined>): Promise<{ outputs: Output[]; error: unknown }> {
  const outputs: Output[] = [];
  try {
    for await (const o of gen) outputs.push(o);
    return { outputs, error: undefined };
  } catch (error) {
    return { outputs, error };
  }
}

function expectLoopxError(error: unknown, pattern?: RegExp): void {
  expect(error).toBeInstanceOf(LoopxError);
  expect((error as LoopxError).exitCode).toBe(1);
  if (pattern) expect((error as Error).message).toMatch(pattern);
}

const J = (o: unknown) => JSON.stringify(o);
const STOP = J({ stop: true });

// ---------------------------------------------------------------------------------------------

describe("goto semantics (spec §2.2)", () => {
  // The spec's worked example:
  // Iteration 1: ralph:index → goto "check-ready"
  // Iteration 2: ralph:check-ready → goto "review-adr:request-feedback"
  // Iteration 3: review-adr:request-feedback → goto "apply-feedback" (→ review-adr:apply-feedback)
  // Iteration 4: review-adr:apply-feedback → (no goto)
  // Iteration 5: ralph:index → (back to starting target)
  it("follows the §2.2 example exactly", async () => {
    const { host, calls } = fakeHost({
      "ralph:index": [J({ goto: "check-ready" }), STOP],
      "ralph:check-ready": J({ goto: "review-adr:request-feedback" }),
      "review-adr:request-feedback": J({ goto: "apply-feedback" }),
      "review-adr:apply-feedback": "",
    });
    const { outputs, error } = await collect(runLoop(request("ralph"), host));
    expect(error).toBeUndefined();
    expect(calls.map((c) => c.label)).toStrictEqual([
      "ralph:index",
      "ralph:check-ready",
      "review-adr:request-feedback",
      "review-adr:apply-feedback",
      "ralph:index",
    ]);
    expect(outputs).toStrictEqual([
      { goto: "check-ready" },
      { goto: "review-adr:request-feedback" },
      { goto: "apply-feedback" },
      { result: "" },
      { stop: true },
    ]);
  });

  it("passes the discovered workflow/script (dir, path) with each call", async () => {
    const { host, calls } = fakeHost({ "ralph:index": J({ goto: "other" }), "ralph:other": STOP });
    await collect(runLoop(request("ralph"), host));
    expect(calls[0]).toMatchObject({ workflow: "ralph", script: "index", path: join(standardRoot, ".loopx", "ralph", "index.sh"), dir: join(standardRoot, ".loopx", "ralph") });
    expect(calls[1]).toMatchObject({ workflow: "ralph", script: "other", path: join(standardRoot, ".loopx", "ralph", "other.ts") });
  });

  // "A bare name (no colon) ... In goto: A bare name is a script name within the current workflow."
  it("a bare goto naming a workflow means a script of the current workflow (error if absent)", async () => {
    const { host, calls } = fakeHost({ "ralph:index": J({ goto: "review-adr" }) });
    const { outputs, error } = await collect(runLoop(request("ralph"), host));
    expect(outputs).toStrictEqual([{ goto: "review-adr" }]);
    expectLoopxError(error);
    expect(calls).toHaveLength(1);
  });

  // 'a script in ralph may use { "goto": "ralph:check-ready" }, which is equivalent to the bare { "goto": "check-ready" }'
  it("qualified goto into the same workflow is equivalent to the bare form", async () => {
    const { host, calls } = fakeHost({ "ralph:index": [J({ goto: "ralph:check-ready" }), J({ goto: "check-ready" })], "ralph:check-ready": [J({ goto: "index" }), STOP] });
    await collect(runLoop(request("ralph"), host));
    expect(calls.map((c) => c.label)).toStrictEqual(["ralph:index", "ralph:check-ready", "ralph:index", "ralph:check-ready"]);
  });

  // "targeting another workflow's default entry point from goto requires the qualified form "workflow:index"."
  it("goto workflow:index reaches another workflow's entry point; bare 'index' there stays in it", async () => {
    const { host, calls } = fakeHost({
      "ralph:index": [J({ goto: "review-adr:index" }), STOP],
      "review-adr:index": [J({ goto: "start" }), ""],
      "review-adr:start": J({ goto: "index" }),
    });
    await collect(runLoop(request("ralph"), host));
    expect(calls.map((c) => c.label)).toStrictEqual(["ralph:index", "review-adr:index", "review-adr:start", "review-adr:index", "ralph:index"]);
  });

  // "Self-referencing goto: A script may goto itself. This is a normal transition and counts as an iteration."
  it("self goto is a transition and counts as an iteration", async () => {
    const { host, calls } = fakeHost({ "ralph:index": J({ result: "again", goto: "index" }) });
    const { outputs, error } = await collect(runLoop(request("ralph", { maxIterations: 3 }), host));
    expect(error).toBeUndefined();
    expect(outputs).toHaveLength(3);
    expect(calls.map((c) => [c.label, c.stdin])).toStrictEqual([
      ["ralph:index", ""],
      ["ralph:index", "again"],
      ["ralph:index", "again"],
    ]);
  });

  // "The loop always resets to its initial state after a transition chain completes — regardless of
  // which workflow the chain ended in. Cross-workflow goto does not change the starting target."
  it("reset returns to the starting target, which may be a non-index script", async () => {
    const { host, calls } = fakeHost({
      "ralph:check-ready": [J({ goto: "review-adr:start" }), STOP],
      "review-adr:start": J({ result: "ignored on reset" }),
    });
    const { outputs } = await collect(runLoop(request("ralph:check-ready"), host));
    expect(calls.map((c) => c.label)).toStrictEqual(["ralph:check-ready", "review-adr:start", "ralph:check-ready"]);
    expect(outputs).toStrictEqual([{ goto: "review-adr:start" }, { result: "ignored on reset" }, { stop: true }]);
  });

  it("a workflow without index can be started by an explicit script and reset to it", async () => {
    const { host, calls } = fakeHost({ "noindex:only": ["", "", STOP] });
    await collect(runLoop(request("noindex:only"), host));
    expect(calls.map((c) => c.label)).toStrictEqual(["noindex:only", "noindex:only", "noindex:only"]);
  });

  // "If goto is present but not a string, it is treated as absent."
  it.each([J({ goto: 5, result: "r" }), J({ goto: null, result: "r" }), J({ goto: ["check-ready"], result: "r" }), J({ goto: { x: 1 }, result: "r" })])(
    "non-string goto %s → reset with empty stdin",
    async (reply) => {
      const { host, calls } = fakeHost({ "ralph:index": [reply, STOP] });
      const { outputs, error } = await collect(runLoop(request("ralph"), host));
      expect(error).toBeUndefined();
      expect(outputs[0]).toStrictEqual({ result: "r" });
      expect(calls.map((c) => [c.label, c.stdin])).toStrictEqual([
        ["ralph:index", ""],
        ["ralph:index", ""],
      ]);
    },
  );

  it("raw (non-JSON) stdout is a result without goto → reset", async () => {
    const { host, calls } = fakeHost({ "ralph:index": ["some log line\n", STOP] });
    const { outputs } = await collect(runLoop(request("ralph"), host));
    expect(outputs).toStrictEqual([{ result: "some log line\n" }, { stop: true }]);
    expect(calls.map((c) => c.stdin)).toStrictEqual(["", ""]);
  });
});

describe("stdin piping (spec §2.3 field precedence, §6.6, §6.7)", () => {
  // "The first script invocation in a loop receives no input."
  it("the first iteration gets empty stdin", async () => {
    const { host, calls } = fakeHost({ "ralph:index": STOP });
    await collect(runLoop(request("ralph"), host));
    expect(calls[0]!.stdin).toBe("");
  });

  // "When a script's output includes both result and goto, the result value is delivered to the next
  // script via stdin."
  it("result is piped to the goto target, verbatim", async () => {
    const payload = 'line1\nline2 "quoted" \t ✓ {"goto":"x"}';
    const { host, calls } = fakeHost({
      "ralph:index": J({ result: payload, goto: "check-ready" }),
      "ralph:check-ready": STOP,
    });
    await collect(runLoop(request("ralph"), host));
    expect(calls[1]!.stdin).toBe(payload);
    expect(calls[1]!.rawStdin).toBe(payload);
  });

  it("coerced results are piped as their string form", async () => {
    const { host, calls } = fakeHost({ "ralph:index": J({ result: null, goto: "check-ready" }), "ralph:check-ready": STOP });
    await collect(runLoop(request("ralph"), host));
    expect(calls[1]!.stdin).toBe("null");
  });

  // "goto with no result is valid: the target script receives empty stdin."
  it("goto without result → empty stdin", async () => {
    const { host, calls } = fakeHost({ "ralph:index": J({ goto: "check-ready" }), "ralph:check-ready": STOP });
    await collect(runLoop(request("ralph"), host));
    expect(calls[1]!.stdin).toBe("");
  });

  it("an empty-string result with goto is delivered as empty input", async () => {
    const { host, calls } = fakeHost({ "ralph:index": J({ result: "", goto: "check-ready" }), "ralph:check-ready": STOP });
    await collect(runLoop(request("ralph"), host));
    expect(calls[1]!.stdin).toBe("");
  });

  // "result is only piped to the next script when goto is present. When the loop resets to the starting
  // target (no goto), the starting target receives empty stdin regardless of whether the previous
  // iteration produced a result."
  it("no goto → reset with empty stdin even after a result, and even after a goto chain", async () => {
    const { host, calls } = fakeHost({
      "ralph:index": [J({ result: "A", goto: "check-ready" }), J({ result: "C" }), STOP],
      "ralph:check-ready": J({ result: "B" }),
    });
    await collect(runLoop(request("ralph"), host));
    expect(calls.map((c) => [c.label, c.stdin])).toStrictEqual([
      ["ralph:index", ""],
      ["ralph:check-ready", "A"],
      ["ralph:index", ""],
      ["ralph:index", ""],
    ]);
  });

  it("piping across workflows, then a goto without result clears the input", async () => {
    const { host, calls } = fakeHost({
      "ralph:index": [J({ result: "x1", goto: "review-adr:request-feedback" }), STOP],
      "review-adr:request-feedback": J({ result: "x2", goto: "apply-feedback" }),
      "review-adr:apply-feedback": J({ goto: "start" }),
      "review-adr:start": "",
    });
    await collect(runLoop(request("ralph"), host));
    expect(calls.map((c) => [c.label, c.stdin])).toStrictEqual([
      ["ralph:index", ""],
      ["review-adr:request-feedback", "x1"],
      ["review-adr:apply-feedback", "x2"],
      ["review-adr:start", ""],
      ["ralph:index", ""],
    ]);
  });
});

describe("stop and -n / maxIterations (spec §2.3, §7.1 steps 8–10)", () => {
  // "stop: true takes priority over goto. If both are set, the loop halts."
  it("stop beats goto", async () => {
    const { host, calls } = fakeHost({ "ralph:index": J({ result: "r", goto: "check-ready", stop: true }) });
    const { outputs, error } = await collect(runLoop(request("ralph"), host));
    expect(error).toBeUndefined();
    expect(outputs).toStrictEqual([{ result: "r", goto: "check-ready", stop: true }]);
    expect(calls).toHaveLength(1);
  });

  it("stop beats an invalid goto (no error: validation happens only on transition)", async () => {
    const { host } = fakeHost({ "ralph:index": J({ goto: "a:b:c", stop: true }) });
    const { outputs, error } = await collect(runLoop(request("ralph"), host));
    expect(error).toBeUndefined();
    expect(outputs).toHaveLength(1);
  });

  // '{"stop": "false"}' must not halt the loop.
  it.each([J({ stop: "true" }), J({ stop: "false" }), J({ stop: 1 }), J({ stop: false })])("%s does not stop", async (reply) => {
    const { host, calls } = fakeHost({ "ralph:index": [reply, STOP] });
    const { outputs } = await collect(runLoop(request("ralph"), host));
    expect(calls).toHaveLength(2);
    expect(outputs[0]).toStrictEqual({});
  });

  // "-n / maxIterations counts every target execution, including goto hops ... if ralph:index outputs
  // goto: "check-ready" and ralph:check-ready outputs goto: "review-adr:start", that is three iterations."
  it("counts goto hops: the spec's three-iteration example", async () => {
    const { host, calls } = fakeHost({
      "ralph:index": J({ goto: "check-ready" }),
      "ralph:check-ready": J({ goto: "review-adr:start" }),
      "review-adr:start": J({ goto: "index" }),
    });
    const { outputs, error } = await collect(runLoop(request("ralph", { maxIterations: 3 }), host));
    expect(error).toBeUndefined();
    expect(calls.map((c) => c.label)).toStrictEqual(["ralph:index", "ralph:check-ready", "review-adr:start"]);
    expect(outputs).toHaveLength(3);
  });

  it("counts resets too", async () => {
    const { host, calls } = fakeHost({ "ralph:index": "" });
    const { outputs } = await collect(runLoop(request("ralph", { maxIterations: 4 }), host));
    expect(calls).toHaveLength(4);
    expect(outputs).toStrictEqual([{ result: "" }, { result: "" }, { result: "" }, { result: "" }]);
  });

  // "The output from this final iteration is still yielded/observed before termination."
  it("the final iteration's output is yielded before completion (-n 1 with a goto)", async () => {
    const { host, calls } = fakeHost({ "ralph:index": J({ result: "last", goto: "check-ready" }) });
    const gen = runLoop(request("ralph", { maxIterations: 1 }), host);
    expect(await gen.next()).toStrictEqual({ value: { result: "last", goto: "check-ready" }, done: false });
    expect(await gen.next()).toStrictEqual({ value: undefined, done: true });
    expect(calls).toHaveLength(1);
  });

  it("the stopping output is yielded before completion", async () => {
    const { host } = fakeHost({ "ralph:index": [J({ result: "1" }), J({ result: "2", stop: true })] });
    const gen = runLoop(request("ralph"), host);
    expect(await gen.next()).toStrictEqual({ value: { result: "1" }, done: false });
    expect(await gen.next()).toStrictEqual({ value: { result: "2", stop: true }, done: false });
    expect(await gen.next()).toStrictEqual({ value: undefined, done: true });
  });

  it("-n limit beats an invalid goto on the last iteration (step 10 precedes step 11)", async () => {
    const { host } = fakeHost({ "ralph:index": J({ goto: "a:b:c" }) });
    const { outputs, error } = await collect(runLoop(request("ralph", { maxIterations: 1 }), host));
    expect(error).toBeUndefined();
    expect(outputs).toStrictEqual([{ goto: "a:b:c" }]);
  });

  it("stop before the limit ends the loop early", async () => {
    const { host, calls } = fakeHost({ "ralph:index": ["", STOP] });
    await collect(runLoop(request("ralph", { maxIterations: 10 }), host));
    expect(calls).toHaveLength(2);
  });

  // "-n 0 validates the starting target (discovery, target resolution, env file loading) but executes
  // zero iterations ... Workflow-level version checking is skipped"
  it("-n 0: no iterations, no first-entry check, no yields", async () => {
    const { host, calls, entries } = fakeHost({ "ralph:index": STOP });
    const { outputs, error } = await collect(runLoop(request("ralph", { maxIterations: 0 }), host));
    expect(error).toBeUndefined();
    expect(outputs).toStrictEqual([]);
    expect(calls).toHaveLength(0);
    expect(entries).toStrictEqual([]);
  });

  it.each<[string, unknown]>([
    ["missing workflow", "nope"],
    ["missing script", "ralph:nope"],
    ["missing index", "noindex"],
    ["invalid target", "a:b:c"],
    ["empty target", ""],
    ["non-string target", 42],
  ])("-n 0 still validates the target: %s", async (_label, target) => {
    const { host, calls } = fakeHost({});
    const { error } = await collect(runLoop(request(target, { maxIterations: 0 }), host));
    expectLoopxError(error);
    expect(calls).toHaveLength(0);
  });

  it("-n 0 still runs discovery validation and env loading", async () => {
    const broken = makeProject({ ".loopx/good/index.sh": "", ".loopx/bad/x.sh": "", ".loopx/bad/x.ts": "" });
    expectLoopxError((await collect(runLoop(request("good", { projectRoot: broken, maxIterations: 0 }), fakeHost({}).host))).error);
    const noLoopx = makeProject({ "README.md": "" });
    expectLoopxError((await collect(runLoop(request("good", { projectRoot: noLoopx, maxIterations: 0 }), fakeHost({}).host))).error);
    const missingEnv = join(tempDir("loopx-unit-env-"), "missing.env");
    expectLoopxError((await collect(runLoop(request("ralph", { maxIterations: 0, envFile: missingEnv }), fakeHost({}).host))).error);
  });

  it.each<[string, unknown]>([
    ["negative", -1],
    ["fraction", 1.5],
    ["NaN", NaN],
    ["Infinity", Infinity],
    ["string", "3"],
    ["null", null],
  ])("invalid maxIterations (%s) is an error before any iteration", async (_label, maxIterations) => {
    const { host, calls } = fakeHost({ "ralph:index": STOP });
    const { outputs, error } = await collect(runLoop(request("ralph", { maxIterations }), host));
    expectLoopxError(error);
    expect(outputs).toStrictEqual([]);
    expect(calls).toHaveLength(0);
  });
});

describe("invalid goto targets (spec §4.1, §7.1 step 11, §7.2)", () => {
  it.each<[string, string]>([
    ["multiple colons", "a:b:c"],
    ["leading colon", ":check-ready"],
    ["trailing colon", "ralph:"],
    ["bare colon", ":"],
    ["empty string", ""],
    ["name restriction (space)", "check ready"],
    ["name restriction (leading -)", "-x"],
    ["name restriction in script part", "ralph:check.sh"],
    ["missing script in current workflow", "nope"],
    ["missing workflow", "nope:index"],
    ["missing script in other workflow", "review-adr:nope"],
    ["bare workflow name", "noindex"],
    ["workflow without index", "noindex:index"],
    ["ignored dir is not a workflow", "docs:index"],
  ])("%s (%j): the output is yielded, then a LoopxError", async (_label, goto) => {
    const { host, calls, entries } = fakeHost({ "ralph:index": J({ result: "r", goto }) });
    const { outputs, error } = await collect(runLoop(request("ralph"), host));
    expect(outputs).toStrictEqual([{ result: "r", goto }]);
    expectLoopxError(error);
    expect(calls).toHaveLength(1);
    expect(entries).toStrictEqual(["ralph"]);
  });

  it("an invalid goto from a cross-workflow context is resolved against that workflow", async () => {
    // "check-ready" exists in ralph, but from review-adr the bare name means review-adr:check-ready.
    const { host, calls } = fakeHost({ "ralph:index": J({ goto: "review-adr:start" }), "review-adr:start": J({ goto: "check-ready" }) });
    const { outputs, error } = await collect(runLoop(request("ralph"), host));
    expect(outputs).toHaveLength(2);
    expectLoopxError(error);
    expect(calls.map((c) => c.label)).toStrictEqual(["ralph:index", "review-adr:start"]);
  });
});

describe("starting target resolution (spec §4.1, §7.1 step 3, §9.1)", () => {
  it("bare workflow → its index; qualified → that script", async () => {
    for (const [target, label] of [
      ["ralph", "ralph:index"],
      ["ralph:index", "ralph:index"],
      ["ralph:check-ready", "ralph:check-ready"],
      ["review-adr:apply-feedback", "review-adr:apply-feedback"],
    ] as const) {
      const { host, calls } = fakeHost({ [label]: STOP });
      const { error } = await collect(runLoop(request(target), host));
      expect(error).toBeUndefined();
      expect(calls.map((c) => c.label)).toStrictEqual([label]);
    }
  });

  it.each<[string, unknown, RegExp | undefined]>([
    ["missing workflow", "nope", /nope/],
    ["missing script", "ralph:nope", /nope/],
    ["missing index (bare workflow)", "noindex", /index/],
    ["dir without scripts", "docs", /docs/],
    ["empty", "", undefined],
    ["bare colon", ":", undefined],
    ["leading colon", ":script", undefined],
    ["trailing colon", "ralph:", undefined],
    ["multiple colons", "a:b:c", undefined],
    ["name restriction", "ral ph", undefined],
    ["undefined", undefined, undefined],
    ["null", null, undefined],
    ["number", 42, undefined],
    ["object", { workflow: "ralph" }, undefined],
  ])("%s is a LoopxError before any iteration", async (_label, target, pattern) => {
    const { host, calls, entries } = fakeHost({ "ralph:index": STOP });
    const { outputs, error } = await collect(runLoop(request(target), host));
    expectLoopxError(error, pattern);
    expect(outputs).toStrictEqual([]);
    expect(calls).toHaveLength(0);
    expect(entries).toStrictEqual([]);
  });

  // "run() still returns a generator without throwing, and the error is raised on first iteration"
  it("errors are lazy: creating the generator does nothing until next()", async () => {
    const { host, calls } = fakeHost({});
    const noLoopx = makeProject({ "x.txt": "" });
    const gen = runLoop(request(undefined, { projectRoot: noLoopx, maxIterations: -5 }), host);
    expect(calls).toHaveLength(0);
    await expect(gen.next()).rejects.toBeInstanceOf(LoopxError);
  });
});

describe("discovery errors (spec §5, §7.1 step 1, §7.2)", () => {
  it("missing .loopx/ is an error mentioning .loopx", async () => {
    const root = makeProject({ "package.json": "{}" });
    const { error } = await collect(runLoop(request("ralph", { projectRoot: root }), fakeHost({}).host));
    expectLoopxError(error, /\.loopx/);
  });

  // "loopx run good fails if a sibling workflow broken contains a name collision or an invalid script name."
  it.each<[string, Record<string, string>]>([
    ["collision in a sibling", { ".loopx/good/index.sh": "", ".loopx/broken/check.sh": "", ".loopx/broken/check.ts": "" }],
    ["invalid script name in a sibling", { ".loopx/good/index.sh": "", ".loopx/broken/bad name.sh": "" }],
    ["invalid workflow name", { ".loopx/good/index.sh": "", ".loopx/bad.name/index.sh": "" }],
    ["collision in the target workflow", { ".loopx/good/index.sh": "", ".loopx/good/index.ts": "" }],
  ])("%s is fatal even for a valid target", async (_label, files) => {
    const root = makeProject(files);
    const { host, calls } = fakeHost({ "good:index": STOP });
    const { error } = await collect(runLoop(request("good", { projectRoot: root }), host));
    expectLoopxError(error);
    expect(calls).toHaveLength(0);
  });

  // §7.1: discovery/validation (step 1) happens before target resolution (step 3).
  it("discovery errors are reported before target errors", async () => {
    const root = makeProject({ "README.md": "" });
    const { error } = await collect(runLoop(request("a:b:c", { projectRoot: root }), fakeHost({}).host));
    expectLoopxError(error, /\.loopx/);
  });

  // §7.1: env loading (step 2) happens before target resolution (step 3).
  it("env file errors are reported before target errors", async () => {
    const missing = join(tempDir("loopx-unit-env-"), "missing-local.env");
    const { error } = await collect(runLoop(request("nope:nope", { envFile: missing }), fakeHost({}).host));
    expectLoopxError(error, /missing-local\.env/);
  });

  // "Discovery metadata is cached at loop start for the duration of the loop."
  it("workflows added mid-loop are not seen (goto to them is an invalid goto)", async () => {
    const root = makeProject({ ".loopx/w/index.sh": "" });
    const { host, calls } = fakeHost({
      "w:index": () => {
        writeFiles(root, { ".loopx/late/index.sh": "", ".loopx/w/later.sh": "" });
        return J({ goto: "late:index" });
      },
    });
    const { error } = await collect(runLoop(request("w", { projectRoot: root }), host));
    expectLoopxError(error);
    expect(calls).toHaveLength(1);

    const { host: host2 } = fakeHost({ "w:index": J({ goto: "later" }) });
    const { error: error2 } = await collect(runLoop(request("w", { projectRoot: makeProject({ ".loopx/w/index.sh": "" }) }), host2));
    expectLoopxError(error2);
  });

  // "If a discovered script's underlying file is removed or renamed mid-loop, execution uses the cached
  // entry path and fails at spawn time"
  it("scripts removed mid-loop are still dispatched with their cached path", async () => {
    const root = makeProject({ ".loopx/w/index.sh": "", ".loopx/w/gone.sh": "" });
    const gonePath = join(root, ".loopx", "w", "gone.sh");
    const { host, calls } = fakeHost({
      "w:index": () => {
        unlinkSync(gonePath);
        return J({ goto: "gone" });
      },
      "w:gone": STOP,
    });
    const { error } = await collect(runLoop(request("w", { projectRoot: root }), host));
    expect(error).toBeUndefined();
    expect(calls[1]!.path).toBe(gonePath);
  });
});

describe("host errors and cancellation", () => {
  // "Non-zero exit code from a script: The loop stops immediately."
  it("an error from runScript propagates after earlier outputs were yielded", async () => {
    const boom = new LoopxError("script exited with code 3");
    const { host, calls } = fakeHost({
      "ralph:index": J({ goto: "check-ready" }),
      "ralph:check-ready": () => {
        throw boom;
      },
    });
    const { outputs, error } = await collect(runLoop(request("ralph"), host));
    expect(outputs).toStrictEqual([{ goto: "check-ready" }]);
    expect(error).toBe(boom);
    expect(calls).toHaveLength(2);
  });

  it("breaking out of the loop starts no further iterations", async () => {
    const { host, calls } = fakeHost({ "ralph:index": "" });
    for await (const _ of runLoop(request("ralph"), host)) break;
    expect(calls).toHaveLength(1);
  });
});

describe("first entry into workflows (spec §3.2 version check hook)", () => {
  it("is called once per workflow, before its first script runs", async () => {
    const { host, entries, events } = fakeHost({
      "ralph:index": [J({ goto: "review-adr:start" }), J({ goto: "review-adr:index" })],
      "review-adr:start": "",
      "review-adr:index": STOP,
    });
    await collect(runLoop(request("ralph"), host));
    expect(entries).toStrictEqual(["ralph", "review-adr"]);
    expect(events).toStrictEqual(["enter:ralph", "run:ralph:index", "enter:review-adr", "run:review-adr:start", "run:ralph:index", "run:review-adr:index"]);
  });
});

describe("environment (spec §8)", () => {
  function writeGlobal(text: string): void {
    writeFiles(xdg, { "loopx/env": text });
  }

  // Precedence (highest wins): loopx-injected > local -e > global > inherited.
  it("merges inherited < global < local < loopx-injected", async () => {
    writeGlobal('A=global\nB=global\nLOOPX_WORKFLOW=evil\nQ="quoted value # x"\n');
    const envDir = tempDir("loopx-unit-env-");
    writeFiles(envDir, { "local.env": "B=local\nC=local\nLOOPX_BIN=evil\nLOOPX_PROJECT_ROOT=evil\n" });
    const { host, calls } = fakeHost({ "ralph:index": STOP });
    const { error } = await collect(
      runLoop(request("ralph", { envFile: join(envDir, "local.env"), baseEnv: { A: "base", B: "base", D: "base", LOOPX_BIN: "base" } }), host),
    );
    expect(error).toBeUndefined();
    const env = calls[0]!.env;
    expect(env.A).toBe("global");
    expect(env.B).toBe("local");
    expect(env.C).toBe("local");
    expect(env.D).toBe("base");
    expect(env.Q).toBe("quoted value # x");
    expect(env.LOOPX_BIN).toBe("/x");
    expect(env.LOOPX_PROJECT_ROOT).toBe(standardRoot);
    expect(env.LOOPX_WORKFLOW).toBe("ralph");
  });

  it("LOOPX_WORKFLOW follows the workflow of the running script", async () => {
    const { host, calls } = fakeHost({
      "ralph:index": [J({ goto: "review-adr:start" }), STOP],
      "review-adr:start": J({ goto: "apply-feedback" }),
      "review-adr:apply-feedback": "",
    });
    await collect(runLoop(request("ralph"), host));
    expect(calls.map((c) => [c.label, c.env.LOOPX_WORKFLOW])).toStrictEqual([
      ["ralph:index", "ralph"],
      ["review-adr:start", "review-adr"],
      ["review-adr:apply-feedback", "review-adr"],
      ["ralph:index", "ralph"],
    ]);
  });

  it("no global env file → only inherited + injected variables", async () => {
    const { host, calls } = fakeHost({ "ralph:index": STOP });
    await collect(runLoop(request("ralph", { baseEnv: { ONLY: "base" } }), host));
    expect(calls[0]!.env).toStrictEqual({
      ONLY: "base",
      LOOPX_BIN: "/x",
      LOOPX_PROJECT_ROOT: standardRoot,
      LOOPX_WORKFLOW: "ralph",
      LOOPX_RUN_ID: expect.stringMatching(/^[0-9a-z]{15}$/),
      LOOPX_ITERATION: "1",
    });
  });

  it("env keys like __proto__ and constructor are passed as ordinary variables", async () => {
    writeGlobal("__proto__=p\nconstructor=c\ntoString=t\n");
    const { host, calls } = fakeHost({ "ralph:index": STOP });
    await collect(runLoop(request("ralph"), host));
    const env = calls[0]!.env;
    expect(Object.hasOwn(env, "__proto__")).toBe(true);
    expect(Object.getOwnPropertyDescriptor(env, "__proto__")?.value).toBe("p");
    expect(Object.getOwnPropertyDescriptor(env, "constructor")?.value).toBe("c");
    expect(Object.getOwnPropertyDescriptor(env, "toString")?.value).toBe("t");
  });

  // "Non-blank, non-comment lines that do not contain a valid key ... are ignored with a warning to stderr."
  it("invalid env lines become warnings and are skipped", async () => {
    writeGlobal("GOOD=1\n1BAD=val\nno equals\n");
    const { host, calls, warnings } = fakeHost({ "ralph:index": STOP });
    const { error } = await collect(runLoop(request("ralph"), host));
    expect(error).toBeUndefined();
    expect(warnings).toHaveLength(2);
    expect(calls[0]!.env.GOOD).toBe("1");
    expect(Object.keys(calls[0]!.env)).not.toContain("1BAD");
  });

  // "Environment variables are loaded once at loop start and cached for the duration of the loop."
  it("env files are read once: edits during the loop are not picked up", async () => {
    writeGlobal("V=before\n");
    const { host, calls } = fakeHost({
      "ralph:index": [
        () => {
          writeGlobal("V=after\n");
          return "";
        },
        STOP,
      ],
    });
    await collect(runLoop(request("ralph"), host));
    expect(calls.map((c) => c.env.V)).toStrictEqual(["before", "before"]);
  });

  // "-e <path> ... The file must exist ... a missing file is an error."
  it("a missing -e file is an error before any iteration", async () => {
    const { host, calls } = fakeHost({ "ralph:index": STOP });
    const { error } = await collect(runLoop(request("ralph", { envFile: join(tempDir("loopx-unit-env-"), "nope.env") }), host));
    expectLoopxError(error);
    expect(calls).toHaveLength(0);
  });

  // Judgement call: a directory where a file is expected is "unreadable".
  it("a directory given as -e or as the global env file is an error (judgement call)", async () => {
    const dir = tempDir("loopx-unit-env-");
    expectLoopxError((await collect(runLoop(request("ralph", { envFile: dir }), fakeHost({ "ralph:index": STOP }).host))).error);
    mkdirSync(join(xdg, "loopx", "env"), { recursive: true });
    expectLoopxError((await collect(runLoop(request("ralph"), fakeHost({ "ralph:index": STOP }).host))).error);
  });

  // "If the file exists but is unreadable (e.g., permission denied), loopx exits with code 1".
  // Root reads a mode-000 file anyway: the engine runs in a child process as an unprivileged user.
  it("an unreadable global env file is an error (engine run as an unprivileged user)", async () => {
    const root = makeProject({ ".loopx/ralph/index.sh": "" });
    const config = tempDir("loopx-unit-xdg-");
    writeFiles(config, { "loopx/env": "A=1\n" });
    const probe = join(root, "probe.mjs");
    writeFileSync(
      probe,
      `import { runLoop } from ${JSON.stringify(pathToFileURL(join(REPO, "src/core/loop.ts")).href)};
let calls = 0;
const host = { runScript: async () => (calls++, '{"stop":true}'), warn() {} };
const request = { target: "ralph", projectRoot: ${JSON.stringify(root)}, baseEnv: {}, loopxBin: "/x" };
try {
  for await (const _ of runLoop(request, host));
  console.log(JSON.stringify({ error: null, calls }));
} catch (error) {
  console.log(JSON.stringify({ error: error.name, message: error.message, calls }));
}
`,
    );
    giveToUnprivileged(root, config);
    chmodSync(join(config, "loopx", "env"), 0o000);
    const tsx = pathToFileURL(join(REPO, "node_modules/tsx/dist/esm/index.mjs")).href;
    const [exe, args] = unprivileged(process.execPath, ["--import", tsx, probe], root, config, REPO);
    const child = spawnSync(exe, args, { cwd: root, env: { PATH: process.env.PATH, XDG_CONFIG_HOME: config, HOME: config }, encoding: "utf8" });
    expect(child.status, child.stderr).toBe(0);
    expect(JSON.parse(child.stdout)).toStrictEqual({
      error: "LoopxError",
      message: `cannot read global env file ${join(config, "loopx", "env")}: permission denied (EACCES)`,
      calls: 0,
    });
  });

  // "If the directory or file does not exist, loopx treats it as having no global variables."
  it("XDG_CONFIG_HOME pointing at a nonexistent directory is fine", async () => {
    process.env.XDG_CONFIG_HOME = join(xdg, "does-not-exist");
    const { host } = fakeHost({ "ralph:index": STOP });
    expect((await collect(runLoop(request("ralph"), host))).error).toBeUndefined();
  });
});

describe("property: runLoop matches a model of the §7.1 algorithm", () => {
  // Known scripts of the standard project.
  const SCRIPTS: Record<string, string[]> = {
    ralph: ["index", "check-ready", "other"],
    "review-adr": ["index", "request-feedback", "apply-feedback", "start"],
    noindex: ["only"],
  };
  const ALL_LABELS = Object.entries(SCRIPTS).flatMap(([w, ss]) => ss.map((s) => `${w}:${s}`));
  const NAME = /^[a-zA-Z0-9_][a-zA-Z0-9_-]*$/;

  function resolveGoto(goto: string, current: string): string | undefined {
    const parts = goto.split(":");
    if (parts.length > 2 || !parts.every((p) => NAME.test(p))) return undefined;
    const [w, s] = parts.length === 1 ? [current, parts[0]!] : [parts[0]!, parts[1]!];
    return SCRIPTS[w]?.includes(s) ? `${w}:${s}` : undefined;
  }

  const gotoValue = fc.oneof(
    fc.constantFrom("index", "check-ready", "other", "only", "start", "apply-feedback", "request-feedback", "nope"),
    fc.constantFrom(...ALL_LABELS),
    fc.constantFrom("noindex:index", "nope:index", "a:b:c", ":x", "x:", "", "bad name", "review-adr"),
  );
  const reply = fc.oneof(
    fc.record({ result: fc.option(fc.string({ maxLength: 6 }), { nil: undefined }), goto: fc.option(gotoValue, { nil: undefined }), stop: fc.option(fc.constantFrom(true, false, "true"), { nil: undefined }) }).map((o) => JSON.stringify(o)),
    fc.constantFrom("", "raw text", "[1]", '{"goto":5,"result":"n"}', "{}"),
  );

  it("calls, stdin, outputs and errors agree with the model", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("ralph", "ralph:check-ready", "review-adr:start", "noindex:only"),
        fc.option(fc.integer({ min: 0, max: 8 }), { nil: undefined }),
        fc.array(reply, { minLength: 1, maxLength: 12 }),
        async (target, max, replies) => {
          // Model
          const start = target.includes(":") ? target : `${target}:index`;
          const expectedCalls: Array<[string, string]> = [];
          const expectedOutputs: Output[] = [];
          let expectError = false;
          const next = (i: number) => (i < replies.length ? replies[i]! : STOP);
          const { parseOutput } = await import("../../src/core/output.js");
          let cur = start;
          let stdin = "";
          for (let i = 0; ; i++) {
            if (max === 0) break;
            expectedCalls.push([cur, stdin]);
            const out = parseOutput(next(i));
            expectedOutputs.push(out);
            if (out.stop === true) break;
            if (max !== undefined && i + 1 >= max) break;
            if (out.goto !== undefined) {
              const resolved = resolveGoto(out.goto, cur.split(":")[0]!);
              if (!resolved) {
                expectError = true;
                break;
              }
              cur = resolved;
              stdin = out.result ?? "";
            } else {
              cur = start;
              stdin = "";
            }
          }

          // Actual
          let i = 0;
          const table: Record<string, Reply> = {};
          for (const label of ALL_LABELS) table[label] = () => next(i++);
          const { host, calls } = fakeHost(table);
          const { outputs, error } = await collect(runLoop(request(target, { maxIterations: max }), host));
          expect(calls.map((c) => [c.label, c.stdin])).toStrictEqual(expectedCalls);
          expect(outputs).toStrictEqual(expectedOutputs);
          if (expectError) expectLoopxError(error);
          else expect(error).toBeUndefined();
        },
      ),
      { numRuns: 300 },
    );
  });
});
