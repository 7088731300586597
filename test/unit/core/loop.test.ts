/**
 * The loop state machine (src/core/loop.ts) as tables over an in-memory host — spec §2.2, §2.3,
 * §4.1, §5, §6.6, §6.7, §7.1, §7.2: goto (bare, qualified, cross-workflow, self), stdin = result,
 * reset to the starting target, stop, -n, invalid and missing targets, failing scripts.
 */
import { describe, expect, it } from "vitest";
import { LoopxError } from "../../../src/core/errors.js";
import { runLoop } from "../../../src/core/loop.js";
import type { Output } from "../../../src/core/output.js";
import { collect, J, memoryHost, MemoryTree, request, ROOT, session, STOP, type Reply } from "./memory-host.js";

function expectLoopxError(error: unknown, pattern?: RegExp): void {
  expect(error).toBeInstanceOf(LoopxError);
  expect((error as LoopxError).exitCode).toBe(1);
  if (pattern) expect((error as Error).message).toMatch(pattern);
}

/** One run of the standard project: what the scripts answer and what must happen. */
interface Case {
  name: string;
  target?: unknown;
  max?: number;
  replies: Record<string, Reply | Reply[]>;
  /** Labels run, in order; or [label, stdin] pairs when `stdin` matters. */
  calls?: string[];
  runs?: Array<[string, string]>;
  outputs?: Output[];
  /** Number of outputs, when their values do not matter. */
  outputCount?: number;
  /** A LoopxError (exit code 1) is expected, matching this pattern if given. */
  error?: true | RegExp;
}

async function check(c: Case): Promise<void> {
  const { host, calls } = memoryHost(c.replies);
  const { outputs, error } = await collect(runLoop(request(c.target ?? "ralph", { maxIterations: c.max }), host, session()));
  if (c.error) expectLoopxError(error, c.error === true ? undefined : c.error);
  else expect(error).toBeUndefined();
  if (c.calls) expect(calls.map((call) => call.label)).toStrictEqual(c.calls);
  if (c.runs) expect(calls.map((call) => [call.label, call.stdin])).toStrictEqual(c.runs);
  if (c.outputs) expect(outputs).toStrictEqual(c.outputs);
  if (c.outputCount !== undefined) expect(outputs).toHaveLength(c.outputCount);
}

const GOTO: Case[] = [
  {
    // The spec's worked example (§2.2): index → check-ready → review-adr:request-feedback →
    // apply-feedback (→ review-adr:apply-feedback) → (no goto) → back to ralph:index.
    name: "follows the §2.2 example exactly",
    replies: {
      "ralph:index": [J({ goto: "check-ready" }), STOP],
      "ralph:check-ready": J({ goto: "review-adr:request-feedback" }),
      "review-adr:request-feedback": J({ goto: "apply-feedback" }),
      "review-adr:apply-feedback": "",
    },
    calls: ["ralph:index", "ralph:check-ready", "review-adr:request-feedback", "review-adr:apply-feedback", "ralph:index"],
    outputs: [{ goto: "check-ready" }, { goto: "review-adr:request-feedback" }, { goto: "apply-feedback" }, { result: "" }, { stop: true }],
  },
  // "In goto: A bare name is a script name within the current workflow."
  { name: "a bare goto naming a workflow means a script of the current workflow (error if absent)", replies: { "ralph:index": J({ goto: "review-adr" }) }, outputs: [{ goto: "review-adr" }], calls: ["ralph:index"], error: true },
  // 'ralph:check-ready ... is equivalent to the bare { "goto": "check-ready" }'
  {
    name: "qualified goto into the same workflow is equivalent to the bare form",
    replies: { "ralph:index": [J({ goto: "ralph:check-ready" }), J({ goto: "check-ready" })], "ralph:check-ready": [J({ goto: "index" }), STOP] },
    calls: ["ralph:index", "ralph:check-ready", "ralph:index", "ralph:check-ready"],
  },
  // "targeting another workflow's default entry point from goto requires ... "workflow:index"."
  {
    name: "goto workflow:index reaches another workflow's entry point; bare 'index' there stays in it",
    replies: { "ralph:index": [J({ goto: "review-adr:index" }), STOP], "review-adr:index": [J({ goto: "start" }), ""], "review-adr:start": J({ goto: "index" }) },
    calls: ["ralph:index", "review-adr:index", "review-adr:start", "review-adr:index", "ralph:index"],
  },
  // "A script may goto itself. This is a normal transition and counts as an iteration."
  {
    name: "self goto is a transition and counts as an iteration",
    max: 3,
    replies: { "ralph:index": J({ result: "again", goto: "index" }) },
    runs: [["ralph:index", ""], ["ralph:index", "again"], ["ralph:index", "again"]],
    outputCount: 3,
  },
  // "The loop always resets to its initial state after a transition chain completes".
  {
    name: "reset returns to the starting target, which may be a non-index script",
    target: "ralph:check-ready",
    replies: { "ralph:check-ready": [J({ goto: "review-adr:start" }), STOP], "review-adr:start": J({ result: "ignored on reset" }) },
    calls: ["ralph:check-ready", "review-adr:start", "ralph:check-ready"],
    outputs: [{ goto: "review-adr:start" }, { result: "ignored on reset" }, { stop: true }],
  },
  { name: "a workflow without index can be started by an explicit script and reset to it", target: "noindex:only", replies: { "noindex:only": ["", "", STOP] }, calls: ["noindex:only", "noindex:only", "noindex:only"] },
  // "If goto is present but not a string, it is treated as absent."
  ...[J({ goto: 5, result: "r" }), J({ goto: null, result: "r" }), J({ goto: ["check-ready"], result: "r" }), J({ goto: { x: 1 }, result: "r" })].map(
    (reply): Case => ({ name: `non-string goto ${reply} → reset with empty stdin`, replies: { "ralph:index": [reply, STOP] }, runs: [["ralph:index", ""], ["ralph:index", ""]], outputs: [{ result: "r" }, { stop: true }] }),
  ),
  { name: "raw (non-JSON) stdout is a result without goto → reset", replies: { "ralph:index": ["some log line\n", STOP] }, outputs: [{ result: "some log line\n" }, { stop: true }], runs: [["ralph:index", ""], ["ralph:index", ""]] },
  {
    name: "an invalid goto from a cross-workflow context is resolved against that workflow",
    // "check-ready" exists in ralph, but from review-adr the bare name means review-adr:check-ready.
    replies: { "ralph:index": J({ goto: "review-adr:start" }), "review-adr:start": J({ goto: "check-ready" }) },
    outputCount: 2,
    calls: ["ralph:index", "review-adr:start"],
    error: true,
  },
];

const STDIN: Case[] = [
  // "The first script invocation in a loop receives no input."
  { name: "the first iteration gets empty stdin", replies: { "ralph:index": STOP }, runs: [["ralph:index", ""]] },
  // "the result value is delivered to the next script via stdin"
  {
    name: "result is piped to the goto target, verbatim",
    replies: { "ralph:index": J({ result: 'line1\nline2 "quoted" \t ✓ {"goto":"x"}', goto: "check-ready" }), "ralph:check-ready": STOP },
    runs: [["ralph:index", ""], ["ralph:check-ready", 'line1\nline2 "quoted" \t ✓ {"goto":"x"}']],
  },
  { name: "coerced results are piped as their string form", replies: { "ralph:index": J({ result: null, goto: "check-ready" }), "ralph:check-ready": STOP }, runs: [["ralph:index", ""], ["ralph:check-ready", "null"]] },
  // "goto with no result is valid: the target script receives empty stdin."
  { name: "goto without result → empty stdin", replies: { "ralph:index": J({ goto: "check-ready" }), "ralph:check-ready": STOP }, runs: [["ralph:index", ""], ["ralph:check-ready", ""]] },
  { name: "an empty-string result with goto is delivered as empty input", replies: { "ralph:index": J({ result: "", goto: "check-ready" }), "ralph:check-ready": STOP }, runs: [["ralph:index", ""], ["ralph:check-ready", ""]] },
  // "When the loop resets to the starting target (no goto), the starting target receives empty stdin".
  {
    name: "no goto → reset with empty stdin even after a result, and even after a goto chain",
    replies: { "ralph:index": [J({ result: "A", goto: "check-ready" }), J({ result: "C" }), STOP], "ralph:check-ready": J({ result: "B" }) },
    runs: [["ralph:index", ""], ["ralph:check-ready", "A"], ["ralph:index", ""], ["ralph:index", ""]],
  },
  {
    name: "piping across workflows, then a goto without result clears the input",
    replies: {
      "ralph:index": [J({ result: "x1", goto: "review-adr:request-feedback" }), STOP],
      "review-adr:request-feedback": J({ result: "x2", goto: "apply-feedback" }),
      "review-adr:apply-feedback": J({ goto: "start" }),
      "review-adr:start": "",
    },
    runs: [["ralph:index", ""], ["review-adr:request-feedback", "x1"], ["review-adr:apply-feedback", "x2"], ["review-adr:start", ""], ["ralph:index", ""]],
  },
];

const STOP_AND_LIMIT: Case[] = [
  // "stop: true takes priority over goto. If both are set, the loop halts."
  { name: "stop beats goto", replies: { "ralph:index": J({ result: "r", goto: "check-ready", stop: true }) }, outputs: [{ result: "r", goto: "check-ready", stop: true }], calls: ["ralph:index"] },
  { name: "stop beats an invalid goto (no error: validation happens only on transition)", replies: { "ralph:index": J({ goto: "a:b:c", stop: true }) }, outputCount: 1 },
  // '{"stop": "false"}' must not halt the loop.
  ...[J({ stop: "true" }), J({ stop: "false" }), J({ stop: 1 }), J({ stop: false })].map(
    (reply): Case => ({ name: `${reply} does not stop`, replies: { "ralph:index": [reply, STOP] }, calls: ["ralph:index", "ralph:index"], outputs: [{}, { stop: true }] }),
  ),
  // "if ralph:index outputs goto: "check-ready" and ralph:check-ready outputs goto: "review-adr:start", that is three iterations."
  {
    name: "-n counts goto hops: the spec's three-iteration example",
    max: 3,
    replies: { "ralph:index": J({ goto: "check-ready" }), "ralph:check-ready": J({ goto: "review-adr:start" }), "review-adr:start": J({ goto: "index" }) },
    calls: ["ralph:index", "ralph:check-ready", "review-adr:start"],
    outputCount: 3,
  },
  { name: "-n counts resets too", max: 4, replies: { "ralph:index": "" }, calls: ["ralph:index", "ralph:index", "ralph:index", "ralph:index"], outputs: [{ result: "" }, { result: "" }, { result: "" }, { result: "" }] },
  { name: "-n 1 with a goto: the goto is not followed", max: 1, replies: { "ralph:index": J({ result: "last", goto: "check-ready" }) }, calls: ["ralph:index"], outputs: [{ result: "last", goto: "check-ready" }] },
  { name: "-n limit beats an invalid goto on the last iteration (step 10 precedes step 11)", max: 1, replies: { "ralph:index": J({ goto: "a:b:c" }) }, outputs: [{ goto: "a:b:c" }] },
  { name: "stop before the limit ends the loop early", max: 10, replies: { "ralph:index": ["", STOP] }, calls: ["ralph:index", "ralph:index"] },
  // "-n 0 validates the starting target ... but executes zero iterations"
  { name: "-n 0: no iterations, no yields", max: 0, replies: { "ralph:index": STOP }, calls: [], outputs: [] },
];

// "A bare name ... In goto: ..." and the name rules of §4.1; §7.1 step 11; §7.2 invalid goto.
const INVALID_GOTO: Array<[string, string]> = [
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
];

const BAD_START: Array<[string, unknown, RegExp | undefined]> = [
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
];

describe("goto semantics (spec §2.2)", () => {
  it.each(GOTO)("$name", check);

  it("passes the discovered workflow/script (dir, path) with each call", async () => {
    const { host, calls } = memoryHost({ "ralph:index": J({ goto: "other" }), "ralph:other": STOP });
    await collect(runLoop(request("ralph"), host, session()));
    expect(calls[0]).toMatchObject({ workflow: "ralph", script: "index", path: `${ROOT}/.loopx/ralph/index.sh`, dir: `${ROOT}/.loopx/ralph` });
    expect(calls[1]).toMatchObject({ workflow: "ralph", script: "other", path: `${ROOT}/.loopx/ralph/other.ts` });
  });
});

describe("stdin piping (spec §2.3 field precedence, §6.6, §6.7)", () => {
  it.each(STDIN)("$name", check);

  it("the piped result is passed as given, not only as what a script reads", async () => {
    const { host, calls } = memoryHost({ "ralph:index": J({ result: "payload", goto: "check-ready" }), "ralph:check-ready": STOP });
    await collect(runLoop(request("ralph"), host, session()));
    expect(calls.map((c) => c.rawStdin)).toStrictEqual([undefined, "payload"]);
  });
});

describe("stop and -n / maxIterations (spec §2.3, §7.1 steps 8–10)", () => {
  it.each(STOP_AND_LIMIT)("$name", check);

  // "The output from this final iteration is still yielded/observed before termination."
  it("the final iteration's output is yielded before completion (-n 1 with a goto)", async () => {
    const { host, calls } = memoryHost({ "ralph:index": J({ result: "last", goto: "check-ready" }) });
    const gen = runLoop(request("ralph", { maxIterations: 1 }), host, session());
    expect(await gen.next()).toStrictEqual({ value: { result: "last", goto: "check-ready" }, done: false });
    expect(await gen.next()).toStrictEqual({ value: undefined, done: true });
    expect(calls).toHaveLength(1);
  });

  it("the stopping output is yielded before completion", async () => {
    const { host } = memoryHost({ "ralph:index": [J({ result: "1" }), J({ result: "2", stop: true })] });
    const gen = runLoop(request("ralph"), host, session());
    expect(await gen.next()).toStrictEqual({ value: { result: "1" }, done: false });
    expect(await gen.next()).toStrictEqual({ value: { result: "2", stop: true }, done: false });
    expect(await gen.next()).toStrictEqual({ value: undefined, done: true });
  });

  // "Workflow-level version checking is skipped" for -n 0.
  it("-n 0 makes no first-entry version check", async () => {
    const { host, entries } = memoryHost({});
    expect((await collect(runLoop(request("ralph", { maxIterations: 0 }), host, session()))).error).toBeUndefined();
    expect(entries()).toStrictEqual([]);
  });

  it.each<[string, unknown]>([
    ["missing workflow", "nope"],
    ["missing script", "ralph:nope"],
    ["missing index", "noindex"],
    ["invalid target", "a:b:c"],
    ["empty target", ""],
    ["non-string target", 42],
  ])("-n 0 still validates the target: %s", async (_label, target) => {
    const { host, calls } = memoryHost({});
    expectLoopxError((await collect(runLoop(request(target, { maxIterations: 0 }), host, session()))).error);
    expect(calls).toHaveLength(0);
  });

  it("-n 0 still runs discovery validation and env loading", async () => {
    const broken = new MemoryTree([".loopx/good/index.sh", ".loopx/bad/x.sh", ".loopx/bad/x.ts"]);
    expectLoopxError((await collect(runLoop(request("good", { maxIterations: 0 }), memoryHost({}, { tree: broken }).host, session()))).error);
    const noLoopx = new MemoryTree(["README.md"]);
    expectLoopxError((await collect(runLoop(request("good", { maxIterations: 0 }), memoryHost({}, { tree: noLoopx }).host, session()))).error);
    expectLoopxError((await collect(runLoop(request("ralph", { maxIterations: 0, envFile: "/env/missing.env" }), memoryHost({}).host, session()))).error);
  });
});

describe("invalid goto targets (spec §4.1, §7.1 step 11, §7.2)", () => {
  it.each(INVALID_GOTO)("%s (%j): the output is yielded, then a LoopxError", async (_label, goto) => {
    const { host, calls, entries } = memoryHost({ "ralph:index": J({ result: "r", goto }) });
    const { outputs, error } = await collect(runLoop(request("ralph"), host, session()));
    expect(outputs).toStrictEqual([{ result: "r", goto }]);
    expectLoopxError(error, /^invalid goto from ralph:index: /);
    expect(calls).toHaveLength(1);
    expect(entries()).toStrictEqual(["ralph"]);
  });
});

describe("starting target resolution (spec §4.1, §7.1 step 3, §9.1)", () => {
  it.each([
    ["ralph", "ralph:index"],
    ["ralph:index", "ralph:index"],
    ["ralph:check-ready", "ralph:check-ready"],
    ["review-adr:apply-feedback", "review-adr:apply-feedback"],
  ])("%s starts %s", async (target, label) => check({ name: target, target, replies: { [label]: STOP }, calls: [label] }));

  it.each(BAD_START)("%s is a LoopxError before any iteration", async (_label, target, pattern) => {
    const { host, calls, entries } = memoryHost({ "ralph:index": STOP });
    const { outputs, error } = await collect(runLoop(request(target), host, session()));
    expectLoopxError(error, pattern);
    expect(outputs).toStrictEqual([]);
    expect(calls).toHaveLength(0);
    expect(entries()).toStrictEqual([]);
  });

  // "run() still returns a generator without throwing, and the error is raised on first iteration"
  it("errors are lazy: creating the generator does nothing until next()", async () => {
    const { host, calls } = memoryHost({}, { tree: new MemoryTree(["x.txt"]) });
    const gen = runLoop(request(undefined), host, session());
    expect(calls).toHaveLength(0);
    await expect(gen.next()).rejects.toBeInstanceOf(LoopxError);
  });
});

describe("discovery errors (spec §5, §7.1 step 1, §7.2)", () => {
  it("missing .loopx/ is an error mentioning .loopx", async () => {
    const { host } = memoryHost({}, { tree: new MemoryTree(["package.json"]) });
    expectLoopxError((await collect(runLoop(request("ralph"), host, session()))).error, /\.loopx/);
  });

  // "loopx run good fails if a sibling workflow broken contains a name collision or an invalid script name."
  it.each<[string, string[]]>([
    ["collision in a sibling", [".loopx/good/index.sh", ".loopx/broken/check.sh", ".loopx/broken/check.ts"]],
    ["invalid script name in a sibling", [".loopx/good/index.sh", ".loopx/broken/bad name.sh"]],
    ["invalid workflow name", [".loopx/good/index.sh", ".loopx/bad.name/index.sh"]],
    ["collision in the target workflow", [".loopx/good/index.sh", ".loopx/good/index.ts"]],
  ])("%s is fatal even for a valid target", async (_label, files) => {
    const { host, calls } = memoryHost({ "good:index": STOP }, { tree: new MemoryTree(files) });
    expectLoopxError((await collect(runLoop(request("good"), host, session()))).error);
    expect(calls).toHaveLength(0);
  });

  // §7.1: discovery/validation (step 1) happens before target resolution (step 3).
  it("discovery errors are reported before target errors", async () => {
    const { host } = memoryHost({}, { tree: new MemoryTree(["README.md"]) });
    expectLoopxError((await collect(runLoop(request("a:b:c"), host, session()))).error, /\.loopx/);
  });

  // §7.1: env loading (step 2) happens before target resolution (step 3).
  it("env file errors are reported before target errors", async () => {
    const { error } = await collect(runLoop(request("nope:nope", { envFile: "/env/missing-local.env" }), memoryHost({}).host, session()));
    expectLoopxError(error, /missing-local\.env/);
  });

  // "Discovery metadata is cached at loop start for the duration of the loop."
  it("workflows and scripts added mid-loop are not seen (goto to them is an invalid goto)", async () => {
    const tree = new MemoryTree([".loopx/w/index.sh"]);
    const { host, calls } = memoryHost(
      {
        "w:index": () => {
          tree.add([".loopx/late/index.sh", ".loopx/w/later.sh"]);
          return J({ goto: "late:index" });
        },
      },
      { tree },
    );
    expectLoopxError((await collect(runLoop(request("w"), host, session()))).error);
    expect(calls).toHaveLength(1);
    const second = memoryHost({ "w:index": J({ goto: "later" }) }, { tree: new MemoryTree([".loopx/w/index.sh"]) });
    expectLoopxError((await collect(runLoop(request("w"), second.host, session()))).error);
  });

  // "If a discovered script's underlying file is removed ... execution uses the cached entry path"
  it("scripts removed mid-loop are still dispatched with their cached path", async () => {
    const tree = new MemoryTree([".loopx/w/index.sh", ".loopx/w/gone.sh"]);
    const { host, calls } = memoryHost({ "w:index": () => (tree.remove(".loopx/w/gone.sh"), J({ goto: "gone" })), "w:gone": STOP }, { tree });
    expect((await collect(runLoop(request("w"), host, session()))).error).toBeUndefined();
    expect(calls[1]!.path).toBe(`${ROOT}/.loopx/w/gone.sh`);
  });
});

describe("host errors and cancellation", () => {
  // "Non-zero exit code from a script: The loop stops immediately."
  it("an error from runScript propagates after earlier outputs were yielded", async () => {
    const boom = new LoopxError("script exited with code 3");
    const { host, calls } = memoryHost({ "ralph:index": J({ goto: "check-ready" }), "ralph:check-ready": () => { throw boom; } });
    const { outputs, error } = await collect(runLoop(request("ralph"), host, session()));
    expect(outputs).toStrictEqual([{ goto: "check-ready" }]);
    expect(error).toBe(boom);
    expect(calls).toHaveLength(2);
  });

  it("breaking out of the loop starts no further iterations", async () => {
    const { host, calls } = memoryHost({ "ralph:index": "" });
    for await (const _ of runLoop(request("ralph"), host, session())) break;
    expect(calls).toHaveLength(1);
  });
});
