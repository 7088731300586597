/**
 * The programmatic API (spec §9) as a consumer sees it: a program in a temp dir imports the built
 * package by its name `loopx` (node_modules/loopx → this package) and runs under node and bun.
 * Cancelling (break, return(), abort) while a three-level process tree runs leaves no survivor,
 * even for trees that ignore SIGTERM, and the consumer is free to exit at once (Linux: /proc).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { ROOT, RUNTIMES, consumer, isolatedEnv, linuxOnly, makeProject, processAlive, runConsumer, taggedSurvivors } from "../../helpers.js";
import { BASH_TREE, TS_TREE, TS_TREE_IGNORING_TERM, describeProcs } from "../../fixtures/process/support.js";

const LOOP = {
  ".loopx/ralph/index.sh": 'echo "index ran" >&2\necho \'{"result":"one","goto":"two"}\'\n',
  ".loopx/ralph/two.sh": 'read -r x; echo "{\\"result\\":\\"got-$x\\",\\"stop\\":true}"\n',
};

describe.each(RUNTIMES)("programmatic API ($name)", (runtime) => {
  it("runPromise resolves with every output, the final one included; stderr passes through; no stdout", async () => {
    const dir = consumer(
      `import { runPromise } from "loopx";
       const outputs = await runPromise("ralph");
       console.log(JSON.stringify(outputs));`,
      LOOP,
    );
    const result = await runConsumer(runtime, dir);
    expect(result.code).toBe(0);
    expect(result.json).toEqual([{ result: "one", goto: "two" }, { result: "got-one", stop: true }]);
    expect(result.stdout.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toContain("index ran");
  });

  it("run() yields each output; maxIterations counts goto hops", async () => {
    const dir = consumer(
      `import { run } from "loopx";
       const seen = [];
       for await (const output of run("ralph", { maxIterations: 1 })) seen.push(output);
       console.log(JSON.stringify(seen));`,
      LOOP,
    );
    expect((await runConsumer(runtime, dir)).json).toEqual([{ result: "one", goto: "two" }]);
  });

  it("never throws synchronously: every error surfaces on first next() or as a rejection", async () => {
    const dir = consumer(
      `import { run, runPromise } from "loopx";
       const cases = [
         () => run(undefined), () => run(42), () => run(""), () => run("a:b:c"), () => run("missing"),
         () => run("ralph:nope"), () => run("ralph", { maxIterations: -1 }), () => run("ralph", { maxIterations: 1.5 }),
         () => run("ralph", { maxIterations: NaN }), () => run("ralph", { envFile: "missing.env" }),
         () => run("ralph", { cwd: "/nonexistent-loopx-dir" }),
       ];
       const out = [];
       for (const make of cases) {
         let gen;
         try { gen = make(); } catch (e) { out.push("sync-throw"); continue; }
         try { await gen.next(); out.push("no-error"); } catch (e) { out.push(e instanceof Error ? "error" : "non-error"); }
       }
       const p = runPromise(undefined);
       out.push(p instanceof Promise ? "promise" : "no-promise");
       try { await p; out.push("resolved"); } catch { out.push("rejected"); }
       console.log(JSON.stringify(out));`,
      LOOP,
    );
    const result = await runConsumer(runtime, dir);
    expect(result.json).toEqual([...Array(11).fill("error"), "promise", "rejected"]);
    expect(result.stderr).toBe(""); // nothing ran, nothing printed
  });

  it("a script failure rejects runPromise and throws from run() after earlier outputs", async () => {
    const dir = consumer(
      `import { run } from "loopx";
       const seen = [];
       try { for await (const o of run("ralph")) seen.push(o); } catch (e) { seen.push("threw: " + e.message); }
       console.log(JSON.stringify(seen));`,
      { ".loopx/ralph/index.sh": 'echo \'{"result":"a","goto":"bad"}\'\n', ".loopx/ralph/bad.sh": "exit 3\n" },
    );
    const result = await runConsumer(runtime, dir);
    expect(result.json[0]).toEqual({ result: "a", goto: "bad" });
    expect(result.json[1]).toMatch(/^threw: .*ralph:bad.*3/);
  });

  it("snapshots cwd at call time; LOOPX_PROJECT_ROOT is cwd; relative envFile resolves against cwd", async () => {
    const project = makeProject({
      ".loopx/wf/index.sh": 'echo "{\\"result\\":\\"$LOOPX_PROJECT_ROOT|$FROM_FILE|$(pwd)\\",\\"stop\\":true}"\n',
      "local.env": "FROM_FILE=yes\n",
    });
    const dir = consumer(
      `import { runPromise } from "loopx";
       const p = runPromise("wf", { cwd: ${JSON.stringify(project)}, envFile: "local.env" });
       process.chdir("/");
       console.log(JSON.stringify(await p));`,
    );
    const result = await runConsumer(runtime, dir);
    expect(result.json).toEqual([{ result: `${project}|yes|${project}/.loopx/wf`, stop: true }]);
  });

  it("return() while a script runs terminates its whole process group and completes silently", async () => {
    const dir = consumer(
      `import { run } from "loopx";
       import { existsSync } from "node:fs";
       const gen = run("wf");
       const pending = gen.next();
       while (!existsSync("ready")) await new Promise((r) => setTimeout(r, 20));
       const t0 = Date.now();
       const r = await gen.return();
       const p = await pending.then((v) => "resolved:" + JSON.stringify(v), (e) => "rejected:" + e.message);
       const after = await gen.next();
       console.log(JSON.stringify({ r, p, after, ms: Date.now() - t0 }));`,
      { ".loopx/wf/index.sh": 'sleep 1000 &\necho $! > "$LOOPX_PROJECT_ROOT/sleep.pid"\necho $$ > "$LOOPX_PROJECT_ROOT/bash.pid"\n: > "$LOOPX_PROJECT_ROOT/ready"\nwait\n' },
    );
    const result = await runConsumer(runtime, dir);
    expect(result.code).toBe(0);
    expect(result.json.r).toEqual({ done: true });
    expect(result.json.after).toEqual({ done: true });
    expect(result.json.p).toBe('resolved:{"done":true}');
    for (const file of ["sleep.pid", "bash.pid"]) {
      expect(processAlive(Number(readFileSync(join(dir, file), "utf8")))).toBe(false);
    }
  });

  it("abort while a script runs terminates the group and throws an abort error; abort before next() throws too", async () => {
    const dir = consumer(
      `import { run } from "loopx";
       import { existsSync } from "node:fs";
       const out = [];
       const ac = new AbortController();
       const gen = run("wf", { signal: ac.signal });
       const pending = gen.next();
       while (!existsSync("ready")) await new Promise((r) => setTimeout(r, 20));
       ac.abort();
       try { await pending; out.push("no-error"); } catch (e) { out.push(e.name); }
       out.push(JSON.stringify(await gen.next()));
       const early = new AbortController(); early.abort();
       const gen2 = run("wf", { signal: early.signal });
       try { await gen2.next(); out.push("no-error"); } catch (e) { out.push(e.name); }
       const between = new AbortController();
       const gen3 = run("quick", { signal: between.signal });
       out.push(JSON.stringify(await gen3.next()));
       between.abort();
       try { await gen3.next(); out.push("no-error"); } catch (e) { out.push(e.name); }
       console.log(JSON.stringify(out));`,
      {
        ".loopx/wf/index.sh": 'sleep 1000 &\necho $! > "$LOOPX_PROJECT_ROOT/sleep.pid"\n: > "$LOOPX_PROJECT_ROOT/ready"\nwait\n',
        ".loopx/quick/index.sh": 'echo \'{"result":"q"}\'\n',
      },
    );
    const result = await runConsumer(runtime, dir);
    expect(result.json).toEqual(["AbortError", '{"done":true}', "AbortError", '{"value":{"result":"q"},"done":false}', "AbortError"]);
    expect(processAlive(Number(readFileSync(join(dir, "sleep.pid"), "utf8")))).toBe(false);
  });

  it("onEvent gets every event in order, the same objects as the record (record: true); a throwing onEvent is warned once; no record by default", async () => {
    const dir = consumer(
      `import { readFileSync, readdirSync } from "node:fs";
       import { runPromise } from "loopx";
       const seen = [];
       await runPromise("ralph", { record: true, onEvent: (event) => seen.push(event) });
       const runs = process.env.XDG_STATE_HOME + "/loopx/runs";
       const files = readdirSync(runs);
       const recorded = readFileSync(runs + "/" + files[0], "utf8").trim().split("\\n").map((line) => JSON.parse(line));
       let calls = 0;
       const outputs = await runPromise("ralph", { onEvent: () => { calls++; throw new Error("observer broke"); } });
       console.log(JSON.stringify({ seen, recorded, files: readdirSync(runs).length, calls, outputs: outputs.length }));`,
      LOOP,
    );
    const result = await runConsumer(runtime, dir);
    expect(result.code).toBe(0);
    const { seen, recorded, files, calls, outputs } = result.json;
    expect(seen.map((event: { type: string }) => event.type)).toEqual(["run.start", "iteration.start", "iteration.end", "iteration.start", "iteration.end", "run.end"]);
    expect(seen).toEqual(recorded);
    expect(seen[0]).toMatchObject({ v: 1, pid: expect.any(Number), projectRoot: dir, target: "ralph:index", runtime: runtime.name, maxIterations: null });
    expect(seen[0].argv).toBeUndefined();
    expect(seen[4]).toMatchObject({ n: 2, target: "ralph:two", output: { result: "got-one", stop: true } });
    expect(seen[5]).toMatchObject({ reason: "stopped", exitCode: 0, iterations: 2, target: "ralph:two" });
    expect(files).toBe(1);
    expect(calls).toBe(6);
    expect(outputs).toBe(2);
    expect(result.stderr.match(/loopx: warning: .*observer broke/g)).toHaveLength(1);
  });

  it("ships types: Output and RunOptions in dist/index.d.ts", () => {
    // index.d.ts re-exports the script-facing entry (script.d.ts: output, input, note and the types).
    const index = readFileSync(join(ROOT, "dist", "index.d.ts"), "utf8") + readFileSync(join(ROOT, "dist", "script.d.ts"), "utf8");
    expect(index).toMatch(/type RunOptions/);
    expect(index).toMatch(/export type \{ Output \}/);
    const runTypes = readFileSync(join(ROOT, "dist", "api", "run.d.ts"), "utf8");
    for (const field of ["maxIterations?: number", "envFile?: string", "signal?: AbortSignal", "cwd?: string", "onEvent?: (event: LoopEvent) => void", "record?: boolean"]) expect(runTypes).toContain(field);
    for (const name of ["LoopEvent", "RunStartEvent", "IterationStartEvent", "IterationEndEvent", "RunEndEvent"]) expect(index).toContain(name);
    const outputTypes = readFileSync(join(ROOT, "dist", "core", "output.d.ts"), "utf8");
    for (const field of ["result?: string", "goto?: string", "stop?: boolean"]) expect(outputTypes).toContain(field);
  });
});

linuxOnly.concurrent.each(RUNTIMES)("programmatic API: cancelling a process tree ($name)", (runtime) => {
  describe("programmatic API: break, return() and abort leave no survivors", () => {
    /** Runs consumer.mjs with a fresh HARDENING_TAG; returns its last stdout line as JSON, its exit, and its tag. */
    async function runConsumerTagged(dir: string) {
      const tag = randomUUID();
      const startedAt = Date.now();
      const result = await runConsumer(runtime, dir, { env: isolatedEnv({ HARDENING_TAG: tag }), timeoutMs: 30_000 });
      return { ...result, tag, startedAt, exitedAt: Date.now() };
    }

    /** Consumer-side helpers: liveness through /proc (zombies are dead) and the tree's pids. */
    const PRELUDE = `
      import { run, runPromise } from "loopx";
      import { existsSync, readFileSync } from "node:fs";
      const alive = (pid) => { try { const s = readFileSync("/proc/" + pid + "/status", "utf8"); const st = s.match(/^State:\\s+(\\S)/m)[1]; return st !== "Z" && st !== "X"; } catch { return false; } };
      const until = async (f) => { while (!f()) await new Promise((r) => setTimeout(r, 20)); };
      const pids = () => [1, 2, 3].map((n) => Number(readFileSync("l" + n + ".pid", "utf8")));
      const unhandled = [];
      process.on("unhandledRejection", (e) => unhandled.push(String(e)));
    `;

    it.concurrent("break after a yield: no further script starts, every recorded process is gone, the consumer exits at once", async ({ expect }) => {
      const dir = consumer(
        `${PRELUDE}
         const seen = [];
         for await (const output of run("w")) { seen.push(output); if (seen.length === 3) break; }
         const breakAt = Date.now();
         await new Promise((r) => setTimeout(r, 500));
         const ran = readFileSync("ran", "utf8").split("\\n").filter(Boolean).map(Number);
         console.log(JSON.stringify({ seen, ran, anyAlive: ran.some(alive), unhandled, breakAt }));`,
        {
          ".loopx/w/index.sh": 'echo $$ >> "$LOOPX_PROJECT_ROOT/ran"\n(sleep 0.05) \necho \'{"result":"a","goto":"b"}\'\n',
          ".loopx/w/b.sh": 'echo $$ >> "$LOOPX_PROJECT_ROOT/ran"\necho \'{"result":"b"}\'\n',
        },
      );
      const result = await runConsumerTagged(dir);
      expect(result.code).toBe(0);
      expect(result.json.seen).toEqual([{ result: "a", goto: "b" }, { result: "b" }, { result: "a", goto: "b" }]);
      expect(result.json.ran).toHaveLength(3);
      expect(result.json.anyAlive).toBe(false);
      expect(result.json.unhandled).toEqual([]);
      // Nothing loopx left behind (timer, child, handle) keeps the consumer alive after the loop.
      expect(result.exitedAt - result.json.breakAt).toBeLessThan(500 + 2000);
      expect(describeProcs(taggedSurvivors(result.tag))).toBe("");
    });

    it.concurrent("return() while a three-level tree runs: the whole tree is gone when return() resolves", async ({ expect }) => {
      const dir = consumer(
        `${PRELUDE}
         const gen = run("w");
         const pending = gen.next();
         await until(() => existsSync("ready"));
         const tree = pids();
         const before = tree.map(alive);
         const t0 = Date.now();
         const r = await gen.return();
         const ms = Date.now() - t0;
         const after = tree.map(alive);
         const p = await pending.then((v) => "resolved:" + JSON.stringify(v), (e) => "rejected:" + e.name);
         console.log(JSON.stringify({ r, p, before, after, ms, unhandled }));`,
        BASH_TREE,
      );
      const result = await runConsumerTagged(dir);
      expect(result.code).toBe(0);
      expect(result.json.before).toEqual([true, true, true]);
      expect(result.json.after).toEqual([false, false, false]);
      expect(result.json.r).toEqual({ done: true });
      expect(result.json.p).toBe('resolved:{"done":true}');
      expect(result.json.ms).toBeLessThan(4500);
      expect(result.json.unhandled).toEqual([]);
      expect(describeProcs(taggedSurvivors(result.tag))).toBe("");
    });

    it.concurrent("return() on a tree that ignores SIGTERM: SIGKILL after 5 s, nothing survives return()", async ({ expect }) => {
      const dir = consumer(
        `${PRELUDE}
         const gen = run("w");
         const pending = gen.next();
         await until(() => existsSync("ready"));
         const tree = pids();
         const t0 = Date.now();
         let at3s;
         setTimeout(() => (at3s = tree.map(alive)), 3000);
         const r = await gen.return();
         const ms = Date.now() - t0;
         const after = tree.map(alive);
         await pending.catch(() => {});
         console.log(JSON.stringify({ r, at3s, after, ms, unhandled }));`,
        TS_TREE_IGNORING_TERM,
      );
      const result = await runConsumerTagged(dir);
      expect(result.code).toBe(0);
      expect(result.json.at3s).toEqual([true, true, true]);
      expect(result.json.after).toEqual([false, false, false]);
      expect(result.json.ms).toBeGreaterThanOrEqual(4500);
      expect(result.json.ms).toBeLessThan(9000);
      expect(result.json.unhandled).toEqual([]);
      expect(describeProcs(taggedSurvivors(result.tag))).toBe("");
    });

    it.concurrent("abort while a three-level tree runs: AbortError only once every level is gone", async ({ expect }) => {
      const dir = consumer(
        `${PRELUDE}
         const ac = new AbortController();
         const gen = run("w", { signal: ac.signal });
         const pending = gen.next();
         await until(() => existsSync("ready"));
         const tree = pids();
         const t0 = Date.now();
         ac.abort();
         let outcome, atRejection;
         try { await pending; outcome = "no-error"; } catch (e) { outcome = e.name; atRejection = tree.map(alive); }
         const ms = Date.now() - t0;
         const next = await gen.next().then((v) => JSON.stringify(v), (e) => "threw:" + e.name);
         console.log(JSON.stringify({ outcome, atRejection, ms, next, unhandled }));`,
        TS_TREE,
      );
      const result = await runConsumerTagged(dir);
      expect(result.code).toBe(0);
      expect(result.json.outcome).toBe("AbortError");
      expect(result.json.atRejection).toEqual([false, false, false]);
      expect(result.json.ms).toBeLessThan(4500); // SIGTERM ends this tree; no grace period needed
      expect(result.json.next).toBe('{"done":true}');
      expect(result.json.unhandled).toEqual([]);
      expect(describeProcs(taggedSurvivors(result.tag))).toBe("");
    });

    it.concurrent("abort on a tree that ignores SIGTERM: AbortError after the 5 s SIGKILL, every level gone by then", async ({ expect }) => {
      const dir = consumer(
        `${PRELUDE}
         const ac = new AbortController();
         const gen = run("w", { signal: ac.signal });
         const pending = gen.next();
         await until(() => existsSync("ready"));
         const tree = pids();
         const t0 = Date.now();
         ac.abort();
         let outcome, atRejection;
         try { await pending; outcome = "no-error"; } catch (e) { outcome = e.name; atRejection = tree.map(alive); }
         console.log(JSON.stringify({ outcome, atRejection, ms: Date.now() - t0, unhandled }));`,
        TS_TREE_IGNORING_TERM,
      );
      const result = await runConsumerTagged(dir);
      expect(result.code).toBe(0);
      expect(result.json.outcome).toBe("AbortError");
      expect(result.json.atRejection).toEqual([false, false, false]);
      expect(result.json.ms).toBeGreaterThanOrEqual(4500);
      expect(result.json.ms).toBeLessThan(9000);
      expect(result.json.unhandled).toEqual([]);
      expect(describeProcs(taggedSurvivors(result.tag))).toBe("");
    });

    it.concurrent("runPromise aborted mid-run rejects with AbortError after the tree is gone", async ({ expect }) => {
      const dir = consumer(
        `${PRELUDE}
         const ac = new AbortController();
         const p = runPromise("w", { signal: ac.signal });
         await until(() => existsSync("ready"));
         const tree = pids();
         ac.abort();
         let outcome, atRejection;
         try { await p; outcome = "resolved"; } catch (e) { outcome = e.name; atRejection = tree.map(alive); }
         console.log(JSON.stringify({ outcome, atRejection, unhandled }));`,
        BASH_TREE,
      );
      const result = await runConsumerTagged(dir);
      expect(result.code).toBe(0);
      expect(result.json.outcome).toBe("AbortError");
      expect(result.json.atRejection).toEqual([false, false, false]);
      expect(result.json.unhandled).toEqual([]);
      expect(describeProcs(taggedSurvivors(result.tag))).toBe("");
    });

    it.concurrent("abort and return() racing each other: no unhandled rejection, no survivor", async ({ expect }) => {
      const dir = consumer(
        `${PRELUDE}
         const ac = new AbortController();
         const gen = run("w", { signal: ac.signal });
         const pending = gen.next().then((v) => "resolved:" + JSON.stringify(v), (e) => "rejected:" + e.name);
         await until(() => existsSync("ready"));
         const tree = pids();
         ac.abort();
         const r = await gen.return();
         const after = tree.map(alive);
         const p = await pending;
         await new Promise((r) => setTimeout(r, 100));
         console.log(JSON.stringify({ r, p, after, unhandled }));`,
        BASH_TREE,
      );
      const result = await runConsumerTagged(dir);
      expect(result.code).toBe(0);
      expect(result.json.r).toEqual({ done: true });
      expect(["rejected:AbortError", 'resolved:{"done":true}']).toContain(result.json.p);
      expect(result.json.after).toEqual([false, false, false]);
      expect(result.json.unhandled).toEqual([]);
      expect(describeProcs(taggedSurvivors(result.tag))).toBe("");
    });
  });
});
